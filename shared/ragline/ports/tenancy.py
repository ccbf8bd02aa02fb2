"""Tenants, their namespaces, API keys and identity providers; and the authorizer's pydantic-free
view of the keys.

Part of :mod:`ragline.ports` (which re-exports every port); the docstrings are the contracts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # annotations only: importing the ports must stay cheap (cold starts)
    from ragline.domain.attributes import AttributeType
    from ragline.domain.identity import IdentityProvider
    from ragline.domain.keys import KeyGrant
    from ragline.domain.tenancy import ApiKeyRecord, Namespace, Tenant


class TenantRegistry(Protocol):
    """Tenants, their namespaces and their API keys.

    Contract: ids are scoped by tenant everywhere — no method ever returns or changes another
    tenant's namespace or key. API keys are stored and looked up only by their SHA-256 hash.
    """

    def create_tenant(self, tenant: Tenant) -> Tenant:
        """Raises ``Conflict`` when it exists."""
        ...

    def get_tenant(self, tenant_id: str) -> Tenant:
        """Raises ``NotFound``."""
        ...

    def update_tenant(self, tenant: Tenant) -> Tenant:
        """Replace a stored tenant (its status, quota, name); raises ``NotFound`` when it does not exist."""
        ...

    def create_namespace(self, namespace: Namespace) -> Namespace:
        """Raises ``Conflict`` when it exists."""
        ...

    def get_namespace(self, tenant_id: str, namespace_id: str) -> Namespace:
        """Raises ``NamespaceNotFound``."""
        ...

    def list_namespaces(self, tenant_id: str) -> list[Namespace]: ...

    def update_namespace(self, namespace: Namespace) -> Namespace:
        """Raises ``NamespaceNotFound``. The stored ``settings.metadata_schema`` is kept whatever
        ``namespace`` carries (a read-modify-write of the settings never drops a key that a
        concurrent :meth:`extend_metadata_schema` added); the returned namespace carries it."""
        ...

    def extend_metadata_schema(
        self, tenant_id: str, namespace_id: str, types: Mapping[str, AttributeType]
    ) -> dict[str, AttributeType]:
        """Add ``types`` to the namespace's metadata schema and return the whole schema, atomically:
        every key is added, or none. A key already typed otherwise raises
        :class:`~ragline.errors.MetadataTypeClash` (two writers racing to type one key differently:
        exactly one wins), a schema past :data:`~ragline.domain.attributes.MAX_SCHEMA_KEYS` keys
        ``InvalidRequest``, a missing namespace ``NamespaceNotFound``. Keys already of their type are
        no-ops (idempotent)."""
        ...

    def swap_namespace(self, namespace: Namespace, *, revision: int) -> Namespace | None:
        """Replace the stored namespace iff its ``revision`` is still ``revision`` (a record stored
        without one counts as 0), storing it at ``revision + 1``; ``None`` when another write came
        first (nothing changed). ``NamespaceNotFound`` when it does not exist. The one conditional
        write a reindex's start, progress and switch go through."""
        ...

    def clear_default_namespace(self, tenant_id: str, namespace_id: str) -> None:
        """Set the namespace's ``default`` to false and change nothing else of it, in one write (not
        a read-modify-write: a concurrent change of its settings is kept). A missing namespace: no-op."""
        ...

    def delete_namespace(self, tenant_id: str, namespace_id: str) -> None:
        """Raises ``NamespaceNotFound``."""
        ...

    def purge_tenant(self, tenant_id: str) -> None:
        """Delete every namespace and API key (record and reference) of the tenant; the tenant's own
        record stays (as the ``deleted`` tombstone). Idempotent."""
        ...

    def put_api_key(self, key: ApiKeyRecord) -> ApiKeyRecord:
        """Store a new key record (``Conflict`` if the hash or the key id exists)."""
        ...

    def find_api_key(self, key_hash: str) -> ApiKeyRecord | None:
        """The key with this hash, revoked ones too (the caller checks ``active``)."""
        ...

    def list_api_keys(self, tenant_id: str) -> list[ApiKeyRecord]: ...

    def revoke_api_key(self, tenant_id: str, key_id: str) -> ApiKeyRecord:
        """Mark revoked; ``NotFound`` unless the key belongs to ``tenant_id``. Idempotent."""
        ...

    def touch_api_key(self, key_hash: str) -> None:
        """Best-effort ``last_used_at`` update (an adapter may throttle it)."""
        ...

    def put_identity_provider(self, tenant_id: str, provider: IdentityProvider) -> None:
        """Set the tenant's one identity provider (replacing its previous one). An issuer belongs to
        at most one tenant: another tenant's issuer is a ``Conflict`` and nothing changes."""
        ...

    def get_identity_provider(self, tenant_id: str) -> IdentityProvider | None: ...

    def delete_identity_provider(self, tenant_id: str) -> bool:
        """Remove it (and its issuer's index entry); False when the tenant had none. ``purge_tenant``
        removes it too."""
        ...

    def find_identity_provider(self, issuer: str) -> tuple[str, IdentityProvider] | None:
        """The tenant whose provider has exactly this issuer, and that provider."""
        ...


class ApiKeyLookup(Protocol):
    """The authorizer's questions about a key, answered from the tenant registry's own store
    without its models (the authorizer's cold start imports no pydantic).

    Contract: it reads what the backend's :class:`TenantRegistry` wrote. ``find_grant`` returns the
    grant of the key stored under ``key_hash`` — a revoked one too, marked ``revoked`` — and None for
    no such key or for a ``key_hash`` that is not a SHA-256 hex digest (without a read);
    ``tenant_status`` is the tenant's status, None when it does not exist; ``touch_api_key`` is
    :meth:`TenantRegistry.touch_api_key`; ``find_identity_provider`` is
    :meth:`TenantRegistry.find_identity_provider`.
    """

    def find_grant(self, key_hash: str) -> KeyGrant | None: ...

    def tenant_status(self, tenant_id: str) -> str | None: ...

    def touch_api_key(self, key_hash: str) -> None: ...

    def find_identity_provider(self, issuer: str) -> tuple[str, IdentityProvider] | None: ...
