"""Namespaces: the lookups every use case shares (existence, the embedding-space guard) and the
namespaces API."""

from __future__ import annotations

from ragline import errors
from ragline.domain.api import NamespaceDeleted, NamespaceList, NamespacePatch, NamespaceView, NewNamespace
from ragline.domain.tenancy import ALL_SCOPES, Namespace, NamespaceSettings
from ragline.ports import DocumentRegistry, Embedder, TenantRegistry
from ragline.services.authentication import Principal


def require_namespace(registry: TenantRegistry, tenant_id: str, namespace_id: str) -> Namespace:
    """The namespace, or ``NamespaceNotFound`` (a 404, never an empty result)."""
    return registry.get_namespace(tenant_id, namespace_id)


def check_embedding_space(namespace: Namespace, embedder: Embedder) -> None:
    """Refuse to mix vectors of two models in one namespace (a silent corruption otherwise)."""
    s = namespace.settings
    if s.embedding_model and (s.embedding_model, s.embedding_dimension) != (
        embedder.model_id,
        embedder.dimension,
    ):
        raise errors.EmbeddingMismatch(
            f"namespace {namespace.namespace_id!r} holds vectors of {s.embedding_model}"
            f" ({s.embedding_dimension}d), but the configured embedder is"
            f" {embedder.model_id} ({embedder.dimension}d)",
            namespace=namespace.namespace_id,
            stored=s.embedding_model,
            configured=embedder.model_id,
        )


def claim_embedding_space(registry: TenantRegistry, namespace: Namespace, embedder: Embedder) -> Namespace:
    """Record the embedder on the namespace's first ingest; later ingests must match it."""
    check_embedding_space(namespace, embedder)
    if namespace.settings.embedding_model:
        return namespace
    settings = namespace.settings.model_copy(
        update={"embedding_model": embedder.model_id, "embedding_dimension": embedder.dimension}
    )
    return registry.update_namespace(namespace.model_copy(update={"settings": settings}))


def new_namespace(
    tenant_id: str, namespace_id: str, description: str = "", default: bool = False
) -> Namespace:
    try:
        return Namespace(
            tenant_id=tenant_id,
            namespace_id=namespace_id,
            description=description,
            default=default,
            settings=NamespaceSettings(),
        )
    except ValueError as exc:
        raise errors.InvalidRequest(str(exc).splitlines()[-1].strip(), namespace=namespace_id) from exc


class NamespaceService:
    """The namespaces API: anyone may read the namespaces their key may use; changing them is admin."""

    def __init__(self, *, registry: TenantRegistry, documents: DocumentRegistry) -> None:
        self._registry = registry
        self._documents = documents

    def list(self, principal: Principal) -> NamespaceList:
        spaces = self._registry.list_namespaces(principal.tenant_id)
        return NamespaceList(
            namespaces=[NamespaceView.of(n) for n in spaces if principal.may_read(n.namespace_id)]
        )

    def get(self, principal: Principal, namespace: str) -> NamespaceView:
        principal.require_any(ALL_SCOPES, namespace)
        return NamespaceView.of(require_namespace(self._registry, principal.tenant_id, namespace))

    def create(self, principal: Principal, body: NewNamespace) -> NamespaceView:
        principal.require("admin")
        ns = new_namespace(principal.tenant_id, body.namespace_id, body.description, body.default)
        return NamespaceView.of(self._registry.create_namespace(ns))

    def update(self, principal: Principal, namespace: str, patch: NamespacePatch) -> NamespaceView:
        """Only the fields the patch names change."""
        principal.require("admin", namespace)
        ns = require_namespace(self._registry, principal.tenant_id, namespace)
        settings = ns.settings
        if patch.system_prompt is not None:
            settings = settings.model_copy(update={"system_prompt": patch.system_prompt})
        if patch.chunks_per_search is not None:
            settings = settings.model_copy(update={"chunks_per_search": patch.chunks_per_search})
        changed = ns.model_copy(
            update={
                "description": ns.description if patch.description is None else patch.description,
                "default": ns.default if patch.default is None else patch.default,
                "settings": settings,
            }
        )
        return NamespaceView.of(self._registry.update_namespace(changed))

    def delete(self, principal: Principal, namespace: str) -> NamespaceDeleted:
        """Refused (409) while the namespace holds documents: deleting it must not orphan chunks."""
        principal.require("admin", namespace)
        require_namespace(self._registry, principal.tenant_id, namespace)
        live = [d for d in self._documents.list(principal.tenant_id, namespace) if d.status != "deleted"]
        if live:
            raise errors.Conflict(
                "the namespace still holds documents; delete them first",
                documents=len(live),
                namespace=namespace,
            )
        self._registry.delete_namespace(principal.tenant_id, namespace)
        return NamespaceDeleted(namespace_id=namespace)
