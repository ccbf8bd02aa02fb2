"""What a chat run streams to its client (the SSE events and the CLI's output)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

from ragline.domain.models import RunUsage


class AnswerDelta(BaseModel):
    type: Literal["text"] = "text"
    text: str


class ToolStarted(BaseModel):
    type: Literal["tool_start"] = "tool_start"
    call_id: str
    tool: str
    label: str


class ToolFinished(BaseModel):
    type: Literal["tool_end"] = "tool_end"
    call_id: str
    tool: str
    label: str
    hits: int
    error: str | None = None


class Sources(BaseModel):
    type: Literal["sources"] = "sources"
    chunks: list[dict[str, Any]]


class Warning(BaseModel):
    type: Literal["warning"] = "warning"
    code: str
    message: str
    details: dict[str, Any] = {}


class RunError(BaseModel):
    """The run stopped on an infrastructure error (model or store down); a final event follows."""

    type: Literal["error"] = "error"
    code: str
    message: str


class RunFinished(BaseModel):
    type: Literal["final"] = "final"
    run_id: str
    exit_reason: str
    answer: str
    usage: RunUsage


RunEvent = AnswerDelta | ToolStarted | ToolFinished | Sources | Warning | RunError | RunFinished
