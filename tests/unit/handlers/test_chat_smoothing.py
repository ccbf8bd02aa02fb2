"""The chat route streams whole words: the model's pieces, cut anywhere, are re-cut by word smoothing
before they reach the client (SSE ``text`` events), and the text itself is unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragline.config import Settings
from ragline.wiring import Container
from tests.support.fakes import ScriptedChatModel
from tests.support.lambda_harness import chat_client
from tests.unit.handlers.test_run_replays import CHAT, CHAT_HEADERS, World, sse_events

pytestmark = pytest.mark.unit


def test_the_chat_route_streams_the_answer_in_whole_words(tmp_path: Path) -> None:
    # Given a model that streams its answer in pieces cutting words in the middle
    world = World(tmp_path)
    pieces = ["Rock", "ets lau", "nch at da", "wn from the ", "pad."]
    model = ScriptedChatModel([[("search", {"query": "rockets"})], pieces])
    container = Container(
        Settings(home=tmp_path), stores=world.stores, embedder=world.embedder, chat_model=model
    )
    body = {"messages": [{"role": "user", "content": "When do rockets launch?"}], "namespaces": ["docs"]}

    # When the client asks over the chat route, streaming
    try:
        with chat_client(CHAT, container) as client:
            resp = client.post("/v1/chat", content=json.dumps(body), headers=CHAT_HEADERS)
    finally:
        world.stores.close()

    # Then each text event carries whole words, and together they are exactly what the model wrote
    texts = [e["text"] for e in sse_events(resp.text) if e["type"] == "text"]
    assert texts == ["Rockets ", "launch ", "at ", "dawn ", "from ", "the ", "pad."]
    assert "".join(texts) == "".join(pieces)
