"""Deleting a tenant: nothing of it is left in any store, and nothing of it can come back.

The order is what makes it safe to interrupt and to run again:

1. the tenant turns ``deleted`` (its keys are revoked): from here no request authenticates and no
   new S3 event is ingested (:class:`~ragline.services.ingest.IngestService` ignores a deleted
   tenant's events — including the ones this purge itself causes);
2. its objects, every version of them (the documents bucket is versioned);
3. its chunks and fences, in every namespace it ever had;
4. its document records;
5. its namespaces and API keys;
6. the recorded results of its runs (they quote its chunks) and its ingestion entries (they name its
   documents); charges and period counters stay, as the operator's billing record, and so does the
   tenant's item, as the ``deleted`` tombstone that keeps the id from being reused; its token
   buckets, run slots and refusal counts (fair sharing) go too, and so do its runs' recorded events
   and its conversations (they go with its data sources, before the documents).

Every step is idempotent, so a deletion that failed half-way is finished by running it again. A worker
that was already indexing one of the tenant's documents when step 1 happened may still write it after
step 3; running the deletion again once the ingestion function's timeout has passed removes that too.
"""

from __future__ import annotations

from dataclasses import dataclass

from ragline.ports import (
    ConversationStore,
    DocumentRegistry,
    ObjectStore,
    RateLimiter,
    RunLog,
    SourceRegistry,
    SourceSecrets,
    SyncScheduler,
    TenantRegistry,
    UsageLedger,
    VectorStoreProvider,
    WebhookStore,
)
from ragline.services.generations import ModelCatalog
from ragline.services.tenancy import TenancyService


@dataclass(frozen=True)
class TenantPurge:
    tenant_id: str
    objects: int
    chunks: int
    documents: int
    usage_details: int
    """Recorded run results dropped, ingestion entries and limit items deleted (charges and counters
    stay)."""


class TenantDeletion:
    def __init__(
        self,
        *,
        tenancy: TenancyService,
        registry: TenantRegistry,
        objects: ObjectStore,
        stores: VectorStoreProvider,
        documents: DocumentRegistry,
        ledger: UsageLedger,
        catalog: ModelCatalog | None = None,
        webhooks: WebhookStore | None = None,
        limiter: RateLimiter | None = None,
        sources: SourceRegistry | None = None,
        source_secrets: SourceSecrets | None = None,
        sync_scheduler: SyncScheduler | None = None,
        run_log: RunLog | None = None,
        conversations: ConversationStore | None = None,
        evaluations: ObjectStore | None = None,
    ) -> None:
        """``evaluations``: the evaluation jobs' store (their answers quote the tenant's documents)."""
        self._tenancy = tenancy
        self._evaluations = evaluations
        self._sources = sources
        self._source_secrets = source_secrets
        self._sync_scheduler = sync_scheduler
        """Data sources go before the documents: their schedules, credentials and state first, so no
        sync writes after the purge (a step of a deleted source finds nothing and does nothing)."""
        self._webhooks = webhooks
        """The tenant's subscriptions (URLs and signing secrets) go first: nothing is sent after."""
        self._catalog = catalog
        """Every embedding model's stores are purged too: a reindexed namespace may keep its
        generations in another model's store (an OpenSearch index per model)."""
        self._registry = registry
        self._objects = objects
        self._stores = stores
        self._documents = documents
        self._ledger = ledger
        self._limiter = limiter
        self._run_log = run_log
        self._conversations = conversations
        """Its runs' recorded events and its conversations: they quote its documents and its users."""

    def delete(self, tenant_id: str) -> TenantPurge:
        """Delete the tenant and everything it stored (``NotFound`` for a tenant that never existed)."""
        tenant = self._tenancy.set_status(tenant_id, "deleted")
        if self._webhooks is not None:
            for subscription in self._webhooks.list(tenant_id):
                self._webhooks.delete(tenant_id, subscription.id)
        for part in (
            self._sync_scheduler,
            self._source_secrets,
            self._sources,
            self._run_log,
            self._conversations,
        ):
            if part is not None:
                part.purge_tenant(tenant_id)
        purge = TenantPurge(
            tenant_id=tenant_id,
            objects=self._objects.purge(f"{tenant_id}/")
            + (self._evaluations.purge(f"{tenant_id}/") if self._evaluations else 0),
            chunks=self._purge_chunks(tenant_id),
            documents=self._documents.purge_tenant(tenant_id),
            usage_details=self._ledger.purge_tenant(tenant_id)
            + (self._limiter.purge_tenant(tenant_id) if self._limiter else 0),
        )
        self._registry.purge_tenant(tenant_id)
        if tenant.name:
            self._registry.update_tenant(tenant.model_copy(update={"name": ""}))
        return purge

    def _purge_chunks(self, tenant_id: str) -> int:
        chunks = self._stores.purge_tenant(tenant_id)
        for model in self._catalog.models() if self._catalog else []:
            space = self._catalog.space(model) if self._catalog else None
            if space is not None and space.stores is not self._stores:
                chunks += space.stores.purge_tenant(tenant_id)
        return chunks
