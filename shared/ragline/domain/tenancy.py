"""Tenants' namespaces and what they record about their embedding space; API key records.

Registries store a key's times as :func:`ragline.domain.keys.timestamp` text (fixed width, so text
order is time order and a store's condition can compare them) and read them back through the models,
which parse ISO-8601.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, Field, field_validator

from ragline.domain.attributes import AttributeType
from ragline.domain.generations import Chunking, Rebuild
from ragline.domain.limits import Limits
from ragline.domain.models import check_identifier


class NamespaceSettings(BaseModel):
    """Per-namespace settings; the embedding identity is fixed at the first ingest."""

    embedding_model: str = ""
    embedding_dimension: int = 0
    system_prompt: str = ""
    chunks_per_search: int = 0
    """Chunks one chat search shows the model here (1–50); 0: the deployment's setting."""
    metadata_schema: dict[str, AttributeType] = Field(default_factory=dict)
    """The type of each document metadata key (:mod:`ragline.domain.attributes`): declared, or fixed
    by the first document that carries the key. Only grows, and only through
    :meth:`~ragline.ports.TenantRegistry.extend_metadata_schema` (``update_namespace`` keeps it)."""
    chunking: Chunking = Chunking()
    """How the served generation was cut (0s: the deployment's settings)."""
    generation: int = 1
    """The served generation (see :mod:`ragline.domain.generations`)."""
    rebuild: Rebuild | None = None
    """The generation being built by a reindex, or the last one that failed."""


class Namespace(BaseModel):
    tenant_id: str
    namespace_id: str
    description: str = ""
    default: bool = False
    settings: NamespaceSettings = NamespaceSettings()
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    revision: int = 0
    """Bumped by every conditional write (:meth:`~ragline.ports.TenantRegistry.swap_namespace`)."""

    @field_validator("tenant_id")
    @classmethod
    def _tenant(cls, v: str) -> str:
        return check_identifier(v, "tenant_id")

    @field_validator("namespace_id")
    @classmethod
    def _namespace(cls, v: str) -> str:
        return check_identifier(v, "namespace_id")


Scope = Literal["chat", "search", "ingest", "admin"]
ALL_SCOPES: tuple[Scope, ...] = ("chat", "search", "ingest", "admin")


TenantStatus = Literal["active", "suspended", "deleted"]


class Tenant(BaseModel):
    """A customer of the SaaS. ``max_runs_per_period`` is its monthly quota (None = unlimited)."""

    tenant_id: str
    name: str = ""
    plan: str = "standard"
    max_runs_per_period: int | None = None
    status: TenantStatus = "active"
    """Only an ``active`` tenant's keys authenticate; ``suspended`` can be reactivated, ``deleted`` not."""
    limits: Limits = Field(default_factory=Limits)
    """Its request rate and concurrent runs (fair sharing); unset fields: the deployment's defaults."""
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))

    @field_validator("tenant_id")
    @classmethod
    def _tenant(cls, v: str) -> str:
        return check_identifier(v, "tenant_id")


class ApiKeyRecord(BaseModel):
    """An API key as stored: only the SHA-256 of the key, never the key itself."""

    key_id: str
    """A short public id for listing and revoking (not derived from the secret)."""
    key_hash: str
    tenant_id: str
    name: str = ""
    scopes: tuple[Scope, ...] = ("chat", "search")
    namespaces: tuple[str, ...] = ()
    """Allow-list; empty means every namespace of the tenant."""
    may_assert_user: bool = False
    """Requests may name the end user they act for (``Ragline-User-Id`` / ``Ragline-User-Groups``)."""
    requires_user: bool = False
    """Every request must name one (implies ``may_assert_user``)."""
    limits: Limits | None = None
    """The key's own limits, within its tenant's (None: only the tenant's apply)."""
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    last_used_at: datetime | None = None
    revoked_at: datetime | None = None

    @property
    def active(self) -> bool:
        return self.revoked_at is None
