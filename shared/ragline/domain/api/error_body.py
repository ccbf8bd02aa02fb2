"""The one error shape every route answers with."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ragline.domain.api_base import ApiModel


class ErrorDetail(ApiModel):
    code: str
    """Stable, snake_case (``namespace_not_found``, ``invalid_request``, ``quota_exceeded``...)."""
    message: str
    details: dict[str, Any] = Field(default_factory=dict)


class ErrorBody(ApiModel):
    """The one error shape every route answers with, whatever the status."""

    error: ErrorDetail
