"""Namespaces: the lookups every use case shares (existence, the embedding-space guard) and the
namespaces API."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from ragline import errors
from ragline.domain.api import (
    NamespaceDeleted,
    NamespaceList,
    NamespacePatch,
    NamespaceView,
    NewNamespace,
    ReindexRequest,
)
from ragline.domain.attributes import check_key
from ragline.domain.authority import may_change_tenant_wide
from ragline.domain.tenancy import ALL_SCOPES, Namespace, NamespaceSettings
from ragline.ports import DocumentRegistry, Embedder, SourceRegistry, TenantRegistry
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

    def record(ns: Namespace) -> Namespace:
        check_embedding_space(ns, embedder)  # another ingest (or a reindex) may have recorded one
        if ns.settings.embedding_model:
            return ns
        settings = ns.settings.model_copy(
            update={"embedding_model": embedder.model_id, "embedding_dimension": embedder.dimension}
        )
        return ns.model_copy(update={"settings": settings})

    return change_namespace(registry, namespace, record)


SWAP_ATTEMPTS = 8


def change_namespace(
    registry: TenantRegistry, namespace: Namespace, change: Callable[[Namespace], Namespace]
) -> Namespace:
    """Apply ``change`` to the stored namespace with a conditional write, re-reading and re-applying
    it when another write came first: no writer ever overwrites a change it did not see (a settings
    PATCH never undoes a reindex's switch). ``change`` returning its argument writes nothing."""
    current = namespace
    for _ in range(SWAP_ATTEMPTS):
        changed = change(current)
        if changed == current:
            return current
        saved = registry.swap_namespace(changed, revision=current.revision)
        if saved is not None:
            if saved.default:
                clear_other_defaults(registry, saved)
            return saved
        current = registry.get_namespace(namespace.tenant_id, namespace.namespace_id)
    raise errors.Conflict(
        "the namespace kept changing under this write; retry", namespace=namespace.namespace_id
    )


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


class Reindexer(Protocol):
    """Starts a namespace's rebuild (:class:`ragline.services.reindex.ReindexService`)."""

    def begin(self, principal: Principal, namespace: str, request: ReindexRequest) -> Namespace:
        """Record the rebuild on the namespace and dispatch it; the namespace as stored after."""
        ...


class NamespaceService:
    """The namespaces API: anyone may read the namespaces their key may use; changing them is admin.

    An allow-listed admin changes only its own namespaces' description and settings and deletes its
    own non-default namespaces; tenant-wide changes — creating a namespace, moving or clearing the
    default — need an unrestricted admin (:func:`ragline.domain.authority.may_change_tenant_wide`).
    A tenant has at most one default: making one the default clears it on every other.
    """

    def __init__(
        self,
        *,
        registry: TenantRegistry,
        documents: DocumentRegistry,
        reindex: Reindexer | None = None,
        sources: SourceRegistry | None = None,
    ) -> None:
        self._registry = registry
        self._documents = documents
        self._reindex = reindex
        self._sources = sources
        """A namespace with data sources is not deleted (their syncs would write into nothing)."""
        """Starts a rebuild when a patch changes the embedding model or chunking (``None``: refused)."""

    def list(self, principal: Principal) -> NamespaceList:
        spaces = self._registry.list_namespaces(principal.tenant_id)
        return NamespaceList(
            namespaces=[namespace_view(principal, n) for n in spaces if principal.may_read(n.namespace_id)]
        )

    def get(self, principal: Principal, namespace: str) -> NamespaceView:
        principal.require_any(ALL_SCOPES, namespace)
        return namespace_view(principal, require_namespace(self._registry, principal.tenant_id, namespace))

    def create(self, principal: Principal, body: NewNamespace) -> NamespaceView:
        """Tenant-wide: a new namespace is seen by every unrestricted key's routing."""
        require_tenant_wide(principal, "create a namespace")
        ns = new_namespace(principal.tenant_id, body.namespace_id, body.description, body.default)
        return NamespaceView.of(save_new_namespace(self._registry, ns))

    def update(self, principal: Principal, namespace: str, patch: NamespacePatch) -> NamespaceView:
        """Only the fields the patch names change; changing ``default`` is tenant-wide."""
        principal.require("admin", namespace)
        ns = require_namespace(self._registry, principal.tenant_id, namespace)
        if patch.default is not None and patch.default != ns.default:
            require_tenant_wide(principal, "change the default namespace")
        if patch.metadata_schema:
            # First, and atomic: a clash (409) or a bad key (400) refuses the patch, nothing changed.
            # The write below keeps the stored schema (a namespace write never writes it).
            for key in patch.metadata_schema:
                check_key(key)
            self._registry.extend_metadata_schema(ns.tenant_id, ns.namespace_id, patch.metadata_schema)
            ns = require_namespace(self._registry, principal.tenant_id, namespace)  # with its new keys

        def apply(ns: Namespace) -> Namespace:
            settings = ns.settings
            if patch.system_prompt is not None:
                settings = settings.model_copy(update={"system_prompt": patch.system_prompt})
            if patch.chunks_per_search is not None:
                settings = settings.model_copy(update={"chunks_per_search": patch.chunks_per_search})
            return ns.model_copy(
                update={
                    "description": ns.description if patch.description is None else patch.description,
                    "default": ns.default if patch.default is None else patch.default,
                    "settings": settings,
                }
            )

        request = patch.reindex_request()
        if request is not None:  # a refused rebuild (409) changes nothing else either
            if self._reindex is None:
                raise errors.InvalidRequest("this deployment cannot reindex", namespace=namespace)
            ns = self._reindex.begin(principal, namespace, request)
        return NamespaceView.of(change_namespace(self._registry, ns, apply))

    def delete(self, principal: Principal, namespace: str) -> NamespaceDeleted:
        """Refused (409) while the namespace holds documents: deleting it must not orphan chunks.
        Deleting the default leaves the tenant without one: tenant-wide."""
        principal.require("admin", namespace)
        ns = require_namespace(self._registry, principal.tenant_id, namespace)
        if ns.default:
            require_tenant_wide(principal, "delete the default namespace")
        live = [d for d in self._documents.list(principal.tenant_id, namespace) if d.status != "deleted"]
        if live:
            raise errors.Conflict(
                "the namespace still holds documents; delete them first",
                documents=len(live),
                namespace=namespace,
            )
        if self._sources is not None and self._sources.list(principal.tenant_id, namespace):
            raise errors.Conflict(
                "the namespace still has data sources; delete them first", namespace=namespace
            )
        self._registry.delete_namespace(principal.tenant_id, namespace)
        return NamespaceDeleted(namespace_id=namespace)


def namespace_view(principal: Principal, ns: Namespace) -> NamespaceView:
    """The namespace as ``principal`` may see it. A request acting for an end user gets it without
    ``rebuild``: a rebuild's ``documentsDone``/``documentsTotal`` count every document of the
    namespace and its ``error`` may be about any of them, and an end user never counts what it may
    not read (the routes that show a rebuild's progress in full are the SaaS's own)."""
    view = NamespaceView.of(ns)
    return view.model_copy(update={"rebuild": None}) if principal.acts_for_user else view


def require_tenant_wide(principal: Principal, action: str) -> None:
    """403 unless ``principal`` is an unrestricted admin."""
    principal.require("admin")
    if not may_change_tenant_wide(principal):
        raise errors.Forbidden(
            f"only an admin key without a namespace allow-list may {action}",
            allowed=sorted(principal.namespaces),
        )


def save_new_namespace(registry: TenantRegistry, namespace: Namespace) -> Namespace:
    """Store a new namespace; a new default takes the default from every other (every path that
    creates namespaces comes here, so none leaves two defaults)."""
    saved = registry.create_namespace(namespace)
    if saved.default:
        clear_other_defaults(registry, saved)
    return saved


def save_namespace(registry: TenantRegistry, namespace: Namespace) -> Namespace:
    """Replace a stored namespace. A write of a namespace read earlier as the default (a settings
    change racing a move of the default) keeps it the default and clears every other: one default."""
    saved = registry.update_namespace(namespace)
    if saved.default:
        clear_other_defaults(registry, saved)
    return saved


def clear_other_defaults(registry: TenantRegistry, default: Namespace) -> None:
    """Clear ``default`` on every other namespace of the tenant, *after* ``default`` was stored.

    Set first, then clear, over a strongly consistent listing: of two concurrent moves, the later
    one's listing sees the earlier one's default and clears it, so two defaults never remain (at
    worst, two crossing moves clear each other and the tenant has none until the next move). The
    clear writes the flag alone, so it never overwrites a concurrent change of the other's settings."""
    for other in registry.list_namespaces(default.tenant_id):
        if other.default and other.namespace_id != default.namespace_id:
            registry.clear_default_namespace(other.tenant_id, other.namespace_id)
