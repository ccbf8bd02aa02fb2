"""``GET /v1/usage``: what a tenant's runs and indexing used in a period, and the limits in force."""

from __future__ import annotations

from pydantic import Field

from ragline.domain.api.common import Usage
from ragline.domain.api_base import ApiModel
from ragline.domain.limits import Limits
from ragline.domain.models import IngestUsage


class IngestionUsage(ApiModel):
    """Indexing in the period: settled document versions, their chunks and pages, and the tokens
    embedded for them (chunks whose vectors were reused cost none)."""

    documents: int = 0
    chunks: int = 0
    pages: int = 0
    embedded_tokens: int = 0

    @classmethod
    def of(cls, usage: IngestUsage) -> IngestionUsage:
        return cls.model_validate(usage.model_dump())


class UsageReport(ApiModel):
    period: str
    runs: int
    usage: Usage
    """What the period's runs (chat, search) used."""
    ingestion: IngestionUsage = Field(default_factory=IngestionUsage)
    """What indexing used; not runs, and not counted against the run quota."""
    limits: Limits = Field(default_factory=Limits)
    """The tenant's limits in force (its own, else the deployment's; a field absent: not limited)."""
    throttled: int = 0
    """Requests refused in the period for a rate or concurrent-run limit (429 ``rate_limited`` or
    ``too_many_runs``)."""
