"""Namespace lookups shared by every use case: existence and the embedding-space guard."""

from __future__ import annotations

from ragline import errors
from ragline.domain.tenancy import Namespace, NamespaceSettings
from ragline.ports import Embedder, TenantRegistry


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
