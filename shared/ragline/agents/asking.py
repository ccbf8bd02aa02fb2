"""One question to a chat model, without tools, and lenient parsing of its reply.

Every planning step of the agents (hosting search's planner, the routers, deep_search and chain_of_rag)
asks the model for a short JSON or a number. A ``<think>`` block and prose around the answer are
tolerated; the reply is cut to :data:`MAX_REPLY_CHARS` before parsing, so a runaway model cannot make
parsing slow; a server that reports no token counts is still metered (about four characters a token).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from ragline.domain.chat import ChatMessage, ChatOptions, TextDelta, TokenUsage
from ragline.domain.models import RunUsage
from ragline.ports import ChatModel

MAX_REPLY_CHARS = 20_000
"""Longer replies are cut before parsing."""
MAX_JSON_STARTS = 50
"""JSON values tried per reply, at most."""
CONVERSATION_CHARS = 8_000
"""The conversation as a planning call sees it: the latest turns, within this many characters."""
_THINK = re.compile(r"<think>.*?(</think>|$)", re.DOTALL | re.IGNORECASE)

T = TypeVar("T", bound=BaseModel)


@dataclass(frozen=True)
class Reply:
    text: str
    usage: RunUsage


def ask(model: ChatModel, system: str, user: str, *, max_output_tokens: int = 512) -> Reply:
    """The model's whole reply to one system + user message (no tools), and what it cost."""
    messages = [ChatMessage(role="system", content=system), ChatMessage(role="user", content=user)]
    options = ChatOptions(max_output_tokens=max(1, max_output_tokens), temperature=0.0)
    parts: list[str] = []
    usage: TokenUsage | None = None
    for event in model.stream(messages, [], options):
        if isinstance(event, TextDelta):
            parts.append(event.text)
        elif isinstance(event, TokenUsage):
            usage = event
    text = "".join(parts)
    if usage is None or not usage.reported:
        return Reply(text, estimated_usage(messages, text))
    return Reply(text, usage.as_run_usage())


CHARS_PER_TOKEN = 4
"""The estimate when an endpoint reports no token counts: about four characters a token (English)."""


def estimated_usage(messages: Sequence[ChatMessage], output: str) -> RunUsage:
    """A turn's tokens estimated from its text, for an endpoint that reports none (so a run on such
    an endpoint is still metered and bounded, never free)."""
    prompt = sum(len(m.content) + sum(len(c.arguments) for c in m.tool_calls) for m in messages)
    return RunUsage(
        llm_input_tokens=prompt // CHARS_PER_TOKEN + 1, llm_output_tokens=len(output) // CHARS_PER_TOKEN + 1
    )


def without_think(reply: str) -> str:
    """The reply cut to :data:`MAX_REPLY_CHARS`, its ``<think>…</think>`` blocks removed (an unclosed
    one runs to the end)."""
    return _THINK.sub("", reply[:MAX_REPLY_CHARS])


def first_json(reply: str, model: type[T]) -> T | None:
    """The first JSON object in ``reply`` (after any ``<think>`` block) that validates as ``model``."""
    text = without_think(reply)
    decoder = json.JSONDecoder()
    starts = [m.start() for m in re.finditer(r"\{", text)][:MAX_JSON_STARTS]
    for start in starts:
        try:
            value, _ = decoder.raw_decode(text, start)
            return model.model_validate(value)
        except (ValueError, ValidationError, RecursionError):
            continue
    return None


def render_conversation(conversation: Sequence[ChatMessage]) -> str:
    """``role: content`` lines, the latest turns first kept when over ``CONVERSATION_CHARS``."""
    lines: list[str] = []
    size = 0
    for m in reversed([m for m in conversation if m.role in ("user", "assistant")]):
        line = f"{m.role}: {m.content.strip()}"
        if lines and size + len(line) > CONVERSATION_CHARS:
            break
        lines.append(line[-CONVERSATION_CHARS:])
        size += len(line)
    return "\n".join(reversed(lines))
