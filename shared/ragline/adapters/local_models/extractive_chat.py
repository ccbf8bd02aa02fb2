"""The offline default :class:`~ragline.ports.ChatModel`: an *extractive* model, named so everywhere.

It plays the same protocol as a real model, so the whole tool loop runs with no key:
turn 1 calls ``search`` with the user's question; if the best hit looks cut mid-sentence it calls
``expand`` on it; then it answers with the retrieved sentences that best match the question, each
followed by its ``<citation ids>``. It never writes anything that is not in a retrieved chunk.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

from ragline import errors
from ragline.documents.sentences import split_sentences
from ragline.domain.chat import (
    ChatMessage,
    ChatOptions,
    ModelEvent,
    TextDelta,
    TokenUsage,
    ToolCall,
    ToolCallsReady,
    ToolSpec,
    TurnEnd,
)
from ragline.domain.citations import format_citation
from ragline.domain.terms import stems

_MAX_SENTENCES = 3
_KEEP_RATIO = 0.75


class ExtractiveChatModel:
    name = "extractive (offline, no LLM)"

    def stream(
        self, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec], options: ChatOptions
    ) -> Iterator[ModelEvent]:
        users = [i for i, m in enumerate(messages) if m.role == "user"]
        if not users:
            raise errors.InvalidRequest("the extractive model answers a user message; there is none")
        last_user = users[-1]
        question = messages[last_user].content
        since = messages[last_user + 1 :]
        results = [_parse(m.content) for m in since if m.role == "tool"]
        called = {c.name for m in since for c in m.tool_calls}
        tool_names = {t.name for t in tools}
        prompt_tokens = sum(len(m.content) for m in messages) // 4
        if "search" not in called and "search" in tool_names:
            yield from self._call(
                "search",
                {"query": question, "mode": "semantic", "label": f"Searching: {question[:60]}"},
                prompt_tokens,
            )
            return
        chunks = [c for r in results for c in r]
        top = chunks[0] if chunks else None
        if top and "expand" not in called and "expand" in tool_names and not _ends_sentence(top["text"]):
            yield from self._call(
                "expand",
                {"documentId": top["documentId"], "sequenceNumber": top["sequenceNumber"]},
                prompt_tokens,
            )
            return
        answer = _compose(question, chunks)
        words = 0
        for piece in re.findall(r"\S+\s*", answer):
            if words >= options.max_output_tokens:
                break
            words += 1
            yield TextDelta(text=piece)
        yield TokenUsage(input_tokens=prompt_tokens, output_tokens=words)
        yield TurnEnd(finish_reason="stop")

    @staticmethod
    def _call(name: str, args: dict[str, Any], prompt_tokens: int) -> Iterator[ModelEvent]:
        yield ToolCallsReady(calls=(ToolCall(id=f"call_{name}", name=name, arguments=json.dumps(args)),))
        yield TokenUsage(input_tokens=prompt_tokens, output_tokens=0)
        yield TurnEnd(finish_reason="tool_calls")


_RESULT = re.compile(r"^\[(?P<id>\S+)\] .*? — (?P<text>[^\n]*(?:\n(?!Context: |Metadata: )[^\n]+)*)", re.M)
"""A result of the compact layout: ``[id] filename — text`` up to a blank, ``Context:`` or
``Metadata:`` line (an id holds no whitespace, so it ends at the last ``]`` before the space,
whatever brackets it holds)."""


def _parse(content: str) -> list[dict[str, Any]]:
    """The chunks of a tool result, in either layout (``json`` objects or ``compact`` blocks, see
    ``ragline.agents.tools.render``); read as a model reads them, so anything else is no chunks."""
    if not content.startswith("[{"):
        return [_chunk(m["id"], m["text"]) for m in _RESULT.finditer(content)]
    try:
        data = json.loads(content)
    except json.JSONDecodeError:
        return []
    return [c for c in data if isinstance(c, dict) and "id" in c] if isinstance(data, list) else []


def _chunk(alias: str, text: str) -> dict[str, Any]:
    document_id, _, seq = alias.rpartition("#")
    return {
        "id": alias,
        "documentId": document_id,
        "sequenceNumber": int(seq) if seq.isdigit() else 0,
        "text": text,
    }


def _ends_sentence(text: str) -> bool:
    return text.rstrip().endswith((".", "!", "?", '"', ")", ":"))


def _compose(question: str, chunks: list[dict[str, Any]]) -> str:
    """Pick the sentences that share the most (idf-weighted) terms with the question."""
    q = set(stems(question))
    candidates: list[tuple[float, int, str, str]] = []
    seen: set[str] = set()
    for rank, chunk in enumerate(chunks):
        for sentence in split_sentences(chunk["text"]):
            key = " ".join(sentence.lower().split())
            if key in seen or len(sentence) < 20:
                continue
            seen.add(key)
            candidates.append((0.0, rank, sentence.strip(), chunk["id"]))
    df = Counter(t for _, _, s, _ in candidates for t in set(stems(s)))
    n = len(candidates) or 1
    scored = []
    for _, rank, sentence, cid in candidates:
        overlap = q & set(stems(sentence))
        score = sum(math.log(1 + n / df[t]) for t in overlap) / (1 + 0.05 * rank)
        if score > 0:
            scored.append((score, rank, sentence, cid))
    ranked = sorted(scored, key=lambda s: (-s[0], s[1]))
    # Keep only sentences nearly as good as the best one: a weak match is noise, not evidence.
    best = [s for s in ranked if s[0] >= _KEEP_RATIO * ranked[0][0]][:_MAX_SENTENCES] if ranked else []
    if not best:
        return "I could not find an answer to that in the documents."
    best.sort(key=lambda s: s[1])  # keep document order for readability
    lines = [f"{sentence} {format_citation([cid])}" for _, _, sentence, cid in best]
    # The label on a line of its own: a sentence of no source, it is never checked as one (grounding).
    return "From the documents (extractive answer, no LLM):\n" + " ".join(lines)
