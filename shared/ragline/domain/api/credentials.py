"""Who may call: API keys (created, listed, never shown again) and the tenant's identity
provider, whose tokens act as its end users.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ragline.domain.api.common import ApiRequest
from ragline.domain.api_base import ApiModel
from ragline.domain.limits import Limits
from ragline.domain.tenancy import ApiKeyRecord, Scope


class NewKey(ApiRequest):
    name: str = Field(default="", max_length=200)
    scopes: list[Scope] = Field(min_length=1)
    namespaces: list[str] = Field(default_factory=list)
    assert_user: bool = False
    """Requests with the key may name the end user they act for (``Ragline-User-Id``,
    ``Ragline-User-Groups``); without it, sending those headers is a 403."""
    require_user: bool = False
    """Every request with the key must name one (implies ``assertUser``): a 403 otherwise."""
    limits: Limits | None = None
    """The key's own request rate and concurrent runs, enforced as well as its tenant's."""


class KeyView(ApiModel):
    """Never the key or its hash."""

    key_id: str
    name: str
    scopes: list[str]
    namespaces: list[str]
    assert_user: bool = False
    require_user: bool = False
    limits: Limits | None = None
    created_at: str
    last_used_at: str | None
    revoked: bool

    @classmethod
    def of(cls, k: ApiKeyRecord) -> KeyView:
        return cls(
            key_id=k.key_id,
            name=k.name,
            scopes=list(k.scopes),
            namespaces=list(k.namespaces),
            assert_user=k.may_assert_user,
            require_user=k.requires_user,
            limits=k.limits,
            created_at=k.created_at.isoformat(),
            last_used_at=k.last_used_at.isoformat() if k.last_used_at else None,
            revoked=not k.active,
        )


class NewKeyView(KeyView):
    api_key: str
    """Shown once; only its hash is stored."""


class KeyList(ApiModel):
    keys: list[KeyView]


TokenScope = Literal["chat", "search"]
TOKEN_SCOPES: tuple[TokenScope, ...] = ("chat", "search")


class IdentityProviderBody(ApiRequest):
    """The tenant's identity provider: whose tokens (JWTs) act as the tenant's end users."""

    issuer: str = Field(max_length=512)
    """Exactly the tokens' ``iss``; unique across tenants (it tells whose tokens they are)."""
    audiences: list[str] = Field(min_length=1, max_length=10)
    """Accepted ``aud`` values (one must match)."""
    jwks: list[dict[str, Any]] = Field(default_factory=list, max_length=20)
    """Inline public keys (JWKs)."""
    jwks_uri: str = Field(default="", max_length=2048)
    """The provider's key set, fetched over HTTPS and cached by the authorizer."""
    user_claim: str = "sub"
    groups_claim: str = "groups"
    """E.g. ``cognito:groups``; a list of strings or one string."""
    algorithms: list[str] = Field(default_factory=lambda: ["RS256"], min_length=1)
    """Allowed signature algorithms: RS256/384/512, PS256/384/512, ES256/384, EdDSA (never HS* or none)."""
    scopes: list[TokenScope] = Field(default_factory=lambda: list(TOKEN_SCOPES), min_length=1)
    namespaces: list[str] = Field(default_factory=list)
    """Allow-list of the tokens' requests; empty: every namespace."""
    max_lifetime: int = 86_400
    """Longest accepted token lifetime (``exp`` - ``iat``), seconds (60-604800)."""
    leeway: int = 60
    """Clock skew tolerated on ``exp``/``nbf``/``iat``, seconds (0-300)."""


class IdentityProviderView(ApiModel):
    issuer: str
    audiences: list[str]
    jwks: list[dict[str, Any]]
    jwks_uri: str
    user_claim: str
    groups_claim: str
    algorithms: list[str]
    scopes: list[str]
    namespaces: list[str]
    max_lifetime: int
    leeway: int


class IdentityProviderDeleted(ApiModel):
    deleted: bool
