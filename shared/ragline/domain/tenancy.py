"""Tenants' namespaces and what they record about their embedding space."""

from __future__ import annotations

from datetime import UTC, datetime

from pydantic import BaseModel, Field, field_validator

from ragline.domain.models import check_identifier


class NamespaceSettings(BaseModel):
    """Per-namespace settings; the embedding identity is fixed at the first ingest."""

    embedding_model: str = ""
    embedding_dimension: int = 0
    system_prompt: str = ""


class Namespace(BaseModel):
    tenant_id: str
    namespace_id: str
    description: str = ""
    default: bool = False
    settings: NamespaceSettings = NamespaceSettings()
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))

    @field_validator("tenant_id")
    @classmethod
    def _tenant(cls, v: str) -> str:
        return check_identifier(v, "tenant_id")

    @field_validator("namespace_id")
    @classmethod
    def _namespace(cls, v: str) -> str:
        return check_identifier(v, "namespace_id")
