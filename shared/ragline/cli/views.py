"""The JSON bodies of the commands the HTTP API has no route for (``--json``): ``ingest``'s files and
totals, ``eval``'s retrieval scores per mode, and a tenant (``tenants create``, ``status``,
``limits``) or its deletion. camelCase like every body of the API (:class:`ApiModel`); every other
command prints the API's own body for its route.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field

from ragline.domain.api_base import ApiModel
from ragline.domain.limits import Limits

if TYPE_CHECKING:
    from ragline.cli.output import ScoreRow
    from ragline.domain.tenancy import Tenant
    from ragline.services.evaluation import BeirDataset
    from ragline.services.tenant_deletion import TenantPurge


class IngestError(ApiModel):
    code: str
    message: str


class IngestedFile(ApiModel):
    """One file of ``ragline ingest``: ``indexed`` (written now), ``unchanged`` (already served as it
    is: nothing written) or ``failed`` (``error`` says why; nothing of it stored)."""

    file: str
    """Its name as a document: relative to the folder given, else the file's name."""
    status: Literal["indexed", "unchanged", "failed"]
    document_id: str | None = None
    chunks: int = 0
    pages: int = 0
    content_hash: str = ""
    notes: list[str] = Field(default_factory=list)
    """What the parsing library recovered from while reading it (``pypdf: incorrect startxref …``)."""
    error: IngestError | None = None


class IngestTotals(ApiModel):
    files: int
    indexed: int
    unchanged: int
    failed: int
    chunks: int
    """Chunks of the files indexed or unchanged (what the namespace serves of them)."""
    pages: int


class IngestReport(ApiModel):
    """``ragline ingest --json`` (exit 1 when a file failed)."""

    tenant: str
    namespace: str
    files: list[IngestedFile]
    totals: IngestTotals

    @classmethod
    def of(cls, tenant: str, namespace: str, files: list[IngestedFile]) -> IngestReport:
        def count(status: str) -> int:
            return sum(1 for f in files if f.status == status)

        totals = IngestTotals(
            files=len(files),
            indexed=count("indexed"),
            unchanged=count("unchanged"),
            failed=count("failed"),
            chunks=sum(f.chunks for f in files),
            pages=sum(f.pages for f in files),
        )
        return cls(tenant=tenant, namespace=namespace, files=files, totals=totals)


class ModeScores(ApiModel):
    """One mode of ``ragline eval``: its retrieval scores over the split's queries."""

    mode: str
    """As asked: ``keyword``, ``semantic``, ``hybrid``, ``hybrid:rrf|convex|adaptive``, ``accurate``."""
    ndcg_at_10: float
    recall_at_30: float
    recall_at_100: float
    mrr_at_10: float
    queries: int
    ms_per_query: float


class RetrievalEval(ApiModel):
    """``ragline eval DATASET --json``."""

    dataset: str
    split: str
    queries: int
    documents: int
    modes: list[ModeScores]
    reranker: str | None = None
    """The reranker ``accurate`` ran with (``none (fused order)``: none); null: ``accurate`` not run."""

    @classmethod
    def of(
        cls, dataset: str, split: str, data: BeirDataset, rows: list[ScoreRow], reranker: str | None
    ) -> RetrievalEval:
        modes = [
            ModeScores(
                mode=mode,
                ndcg_at_10=s.ndcg_at_10,
                recall_at_30=s.recall_at_30,
                recall_at_100=s.recall_at_100,
                mrr_at_10=s.mrr_at_10,
                queries=s.queries,
                ms_per_query=ms,
            )
            for mode, s, ms in rows
        ]
        return cls(
            dataset=dataset,
            split=split,
            queries=len(data.queries),
            documents=len(data.corpus),
            modes=modes,
            reranker=reranker,
        )


class TenantView(ApiModel):
    """A tenant (``ragline tenants create|status|limits --json``); ``limits`` left null: the
    deployment's defaults."""

    tenant_id: str
    name: str
    plan: str
    status: str
    max_runs_per_period: int | None
    """Its monthly quota of runs (null: unlimited)."""
    limits: Limits
    created_at: str

    @classmethod
    def of(cls, t: Tenant) -> TenantView:
        return cls(
            tenant_id=t.tenant_id,
            name=t.name,
            plan=t.plan,
            status=t.status,
            max_runs_per_period=t.max_runs_per_period,
            limits=t.limits,
            created_at=t.created_at.isoformat(),
        )


class TenantDeleted(ApiModel):
    """``ragline tenants delete --json`` (and ``status … deleted``): what the deletion removed."""

    tenant_id: str
    status: Literal["deleted"] = "deleted"
    objects: int
    chunks: int
    documents: int
    """Document records."""
    usage_details: int
    """Recorded run results, ingestion entries and limit items (charges and counters stay)."""

    @classmethod
    def of(cls, purge: TenantPurge) -> TenantDeleted:
        return cls(
            tenant_id=purge.tenant_id,
            objects=purge.objects,
            chunks=purge.chunks,
            documents=purge.documents,
            usage_details=purge.usage_details,
        )
