"""In-memory fakes for ports that cannot run here for real in a unit test (not mocks: real behaviour)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence

import numpy as np
from numpy.typing import NDArray

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
from tests.support.vectors import DIM, bow_vector


class BowEmbedder:
    """A real (if tiny) embedder: hashed bag of words, unit length."""

    model_id = "bow-test"
    dimension = DIM

    def embed_query(self, text: str) -> NDArray[np.float32]:
        return np.asarray(bow_vector(text), dtype=np.float32)

    def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]:
        return np.asarray([bow_vector(t) for t in texts], dtype=np.float32).reshape(len(texts), DIM)

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def count_many(self, texts: Sequence[str]) -> list[int]:
        return [len(t.split()) for t in texts]


class CountingEmbedder(BowEmbedder):
    """The bag-of-words embedder, recording every document text it embeds (every call goes through)."""

    def __init__(self) -> None:
        self.embedded: list[str] = []

    def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]:
        self.embedded.extend(texts)
        return super().embed_documents(texts)


Turn = list[str | tuple[str, dict[str, object]] | tuple[str, str]]


class ScriptedChatModel:
    """Plays scripted turns: each turn is text pieces and/or (tool_name, args) calls."""

    name = "scripted"

    def __init__(self, turns: list[Turn], output_tokens_per_turn: int = 10) -> None:
        self.turns = list(turns)
        self.seen: list[tuple[list[ChatMessage], list[str]]] = []
        self.tokens = output_tokens_per_turn

    def stream(
        self, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec], options: ChatOptions
    ) -> Iterator[ModelEvent]:
        self.seen.append((list(messages), [t.name for t in tools]))
        turn = self.turns.pop(0) if self.turns else ["(script exhausted)"]
        calls = []
        for i, part in enumerate(turn):
            if isinstance(part, str):
                yield TextDelta(text=part)
            else:
                name, args = part
                raw = args if isinstance(args, str) else json.dumps(args)
                calls.append(ToolCall(id=f"c{len(self.seen)}_{i}", name=name, arguments=raw))
        if calls:
            yield ToolCallsReady(calls=tuple(calls))
        yield TokenUsage(input_tokens=100, output_tokens=self.tokens)
        yield TurnEnd(finish_reason="tool_calls" if calls else "stop")
