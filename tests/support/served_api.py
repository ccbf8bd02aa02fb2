"""``ragline serve``'s whole app (``build_app``, API keys on) under uvicorn on 127.0.0.1, for tests
that need real HTTP: dropped connections, SSE resumption, background runs."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import httpx
import uvicorn

from ragline.cli.serve import build_app
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
from ragline.wiring import Container

ROOT = Path(__file__).parents[2]


class PacedModel:
    """A chat model that searches once, then answers ``words`` words, ``pause`` seconds apart; it
    records every conversation it is shown and how many words it wrote."""

    name = "paced"

    def __init__(self, words: int = 20, pause: float = 0.0, answer: str = "") -> None:
        self.words, self.pause, self.answer = words, pause, answer
        self.seen: list[list[ChatMessage]] = []
        self.produced = 0

    def stream(
        self, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec], options: ChatOptions
    ) -> Iterator[ModelEvent]:
        self.seen.append(list(messages))
        if tools and not any(m.role == "tool" for m in messages):
            call = ToolCall(
                id=f"c{len(self.seen)}", name="search", arguments=json.dumps({"query": "rockets"})
            )
            yield ToolCallsReady(calls=(call,))
            yield TokenUsage(input_tokens=50, output_tokens=5)
            yield TurnEnd(finish_reason="tool_calls")
            return
        words = self.answer.split() if self.answer else [f"word{i}" for i in range(self.words)]
        for word in words:
            if self.pause:
                time.sleep(self.pause)
            self.produced += 1
            yield TextDelta(text=word + " ")
        yield TokenUsage(input_tokens=100, output_tokens=len(words))
        yield TurnEnd()


class ServedApi:
    def __init__(self, container: Container, tenant: str = "acme") -> None:
        self.container = container
        app = build_app(ROOT / "functions", tenant, container, api_keys=True)
        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        while not self.server.started:
            time.sleep(0.02)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        self.base = f"http://127.0.0.1:{port}"
        self.client = httpx.Client(base_url=self.base, timeout=60)

    def stop(self) -> None:
        self.client.close()
        self.server.should_exit = True
        self.thread.join(timeout=10)


def sse_blocks(text: str) -> list[dict[str, str]]:
    """Each SSE event as its fields (``id``, ``event``, ``data``)."""
    return [
        dict(line.split(": ", 1) for line in block.splitlines())
        for block in text.strip().split("\n\n")
        if block
    ]


def read_events(response: httpx.Response, limit: int | None = None) -> list[dict[str, str]]:
    """The events of a streamed response, at most ``limit`` (then the caller drops the connection)."""
    out: list[dict[str, str]] = []
    buffer = ""
    for chunk in response.iter_text():
        buffer += chunk
        while "\n\n" in buffer:
            block, buffer = buffer.split("\n\n", 1)
            if block.strip():
                out.append(dict(line.split(": ", 1) for line in block.splitlines()))
                if limit is not None and len(out) >= limit:
                    return out
    return out
