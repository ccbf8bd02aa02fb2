"""The tenant's identity provider, set and read by its admin (``/v1/tenant/identity-provider``).

A tenant-wide change (every token of the issuer becomes one of the tenant's end users), so it needs
an ``admin`` key without a namespace allow-list, like the tenant's other settings; the provider's own
allow-list names namespaces that exist. The issuer is unique across tenants: another tenant's issuer
is a 409, so a token always finds exactly the settings of the tenant that named its issuer.
"""

from __future__ import annotations

from ragline import errors
from ragline.domain.api import IdentityProviderBody, IdentityProviderDeleted, IdentityProviderView
from ragline.domain.identity import IdentityProvider, checked
from ragline.ports import TenantRegistry
from ragline.services.authentication import Principal


class IdentityProviderService:
    def __init__(self, registry: TenantRegistry, *, loopback_http: bool = False) -> None:
        self._registry = registry
        self._loopback_http = loopback_http

    def _admin(self, principal: Principal) -> None:
        principal.require("admin")
        if not principal.unrestricted:
            raise errors.Forbidden(
                "the identity provider is tenant-wide: use an admin key without a namespace allow-list"
            )

    def show(self, principal: Principal) -> IdentityProviderView:
        self._admin(principal)
        provider = self._registry.get_identity_provider(principal.tenant_id)
        if provider is None:
            raise errors.NotFound("this tenant has no identity provider")
        return view(provider)

    def put(self, principal: Principal, body: IdentityProviderBody) -> IdentityProviderView:
        self._admin(principal)
        provider = checked(
            IdentityProvider(
                issuer=body.issuer,
                audiences=tuple(dict.fromkeys(body.audiences)),
                jwks=tuple(body.jwks),
                jwks_uri=body.jwks_uri,
                user_claim=body.user_claim,
                groups_claim=body.groups_claim,
                algorithms=tuple(dict.fromkeys(body.algorithms)),
                scopes=tuple(dict.fromkeys(body.scopes)),
                namespaces=tuple(dict.fromkeys(body.namespaces)),
                max_lifetime=body.max_lifetime,
                leeway=body.leeway,
            ),
            loopback_http=self._loopback_http,
        )
        for namespace in provider.namespaces:
            self._registry.get_namespace(principal.tenant_id, namespace)
        self._registry.put_identity_provider(principal.tenant_id, provider)
        return view(provider)

    def delete(self, principal: Principal) -> IdentityProviderDeleted:
        self._admin(principal)
        return IdentityProviderDeleted(deleted=self._registry.delete_identity_provider(principal.tenant_id))


def view(provider: IdentityProvider) -> IdentityProviderView:
    return IdentityProviderView(
        issuer=provider.issuer,
        audiences=list(provider.audiences),
        jwks=list(provider.jwks),
        jwks_uri=provider.jwks_uri,
        user_claim=provider.user_claim,
        groups_claim=provider.groups_claim,
        algorithms=list(provider.algorithms),
        scopes=list(provider.scopes),
        namespaces=list(provider.namespaces),
        max_lifetime=provider.max_lifetime,
        leeway=provider.leeway,
    )
