"""Message pruning before a chat run (SPEC §6): old reasoning and tool traffic cost tokens, not answers.

Rules, applied by :func:`prune_messages`:

- A *continuation payload* — the conversation ends with an ``assistant`` or ``tool`` message, so the
  client is continuing a run — is returned intact, message for message.
- Otherwise the last ``user`` message and everything after it are kept verbatim, and before it:

  - ``tool`` messages are dropped;
  - ``assistant`` messages lose their tool calls and their reasoning and keep only their text;
    one left with no text (it only called tools, or only reasoned) is dropped;
  - ``system`` and ``user`` messages are kept, unless their content is blank.

Reasoning: ``ChatMessage`` has no separate reasoning field, so reasoning is what models that think
aloud put in the text: ``<think>…</think>`` blocks (case-insensitive; an unclosed ``<think>`` runs to
the end of the message), and everything up to a ``</think>`` with no opening tag (models whose chat
template opens the block in the prompt). Dropping tool calls *and* tool results together keeps the
history valid for OpenAI-compatible servers, which reject a tool result without its call.

Pure: no I/O, the input is not modified.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ragline.domain.chat import ChatMessage

_THINK_BLOCK = re.compile(r"<think>.*?(?:</think>|\Z)\s*", re.DOTALL | re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think>\s*", re.IGNORECASE)


def strip_reasoning(text: str) -> str:
    """``text`` without ``<think>`` blocks (text outside them is kept as it was)."""
    text = _THINK_BLOCK.sub("", text)
    closes = list(_THINK_CLOSE.finditer(text))
    return text[closes[-1].end() :] if closes else text


def is_continuation(messages: Sequence[ChatMessage]) -> bool:
    """The client is continuing a run: the conversation ends with an assistant or tool message."""
    return bool(messages) and messages[-1].role in ("assistant", "tool")


def prune_messages(messages: Sequence[ChatMessage]) -> list[ChatMessage]:
    """The history to send the model (see the module docstring for the rules)."""
    if is_continuation(messages):
        return list(messages)
    last_user = max((i for i, m in enumerate(messages) if m.role == "user"), default=len(messages))
    pruned = [kept for m in messages[:last_user] if (kept := _prune_earlier(m)) is not None]
    return pruned + list(messages[last_user:])


def _prune_earlier(message: ChatMessage) -> ChatMessage | None:
    if message.role == "tool":
        return None
    if message.role == "assistant":
        text = strip_reasoning(message.content)
        if not text.strip():
            return None
        if text == message.content and not message.tool_calls:
            return message
        return message.model_copy(update={"content": text, "tool_calls": ()})
    return message if message.content.strip() else None


ELIDED = "[this tool result was removed to fit the model's context window]"


def shrink_for_context(messages: Sequence[ChatMessage]) -> list[ChatMessage]:
    """A shorter history for a model whose context window the conversation overflowed, keeping every
    tool call paired with its result (Bedrock and OpenAI reject half pairs):

    - before the last ``user`` message, only ``system`` messages and the earlier turns' text are
      kept (:func:`prune_messages`, applied even to a continuation payload);
    - after it, every tool result but those of the latest tool-calling turn is replaced by a stub,
      and the latest ones keep their first half;
    - ``user`` and ``system`` messages longer than 20,000 characters keep their first 20,000.

    The result equals the input when nothing could be shortened (the caller then gives up).
    """
    last_user = max((i for i, m in enumerate(messages) if m.role == "user"), default=len(messages))
    earlier = [kept for m in messages[:last_user] if (kept := _prune_earlier(m)) is not None]
    later = list(messages[last_user:])
    tools = [i for i, m in enumerate(later) if m.role == "tool"]
    latest_call = max((i for i, m in enumerate(later) if m.tool_calls), default=-1)
    for i in tools:
        content = later[i].content
        short = content[: len(content) // 2] if i > latest_call else ELIDED
        if len(short) < len(content):
            later[i] = later[i].model_copy(update={"content": short})
    return [_capped(m) for m in earlier + later]


_LONGEST_TEXT = 20_000


def _capped(message: ChatMessage) -> ChatMessage:
    if message.role in ("user", "system") and len(message.content) > _LONGEST_TEXT:
        return message.model_copy(update={"content": message.content[:_LONGEST_TEXT]})
    return message
