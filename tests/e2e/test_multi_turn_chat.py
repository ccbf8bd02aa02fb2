"""A two-turn conversation through ``ragline serve``'s app: the client sends the whole conversation back,
the follow-up run sees the earlier turns (and not the earlier run's tool traffic), streams its own
events, and each run is charged once. Once through the real OpenAI adapter (the replay server), once
offline (the extractive model, no key)."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner

from ragline.cli.app import app as cli
from ragline.cli.serve import build_app
from ragline.config import Settings
from ragline.domain.models import TenantScope
from ragline.wiring import Container
from tests.support.openai_replay import OpenAIReplay, text, tool_call

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).parents[2]
FIRST = "How long do I have to return a new bicycle?"
FOLLOW_UP = "And how long is the warranty on the frame?"


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home with the northwind samples ingested by the CLI (once; each test runs on a copy)."""
    home = tmp_path_factory.mktemp("ingested") / "home"
    samples = str(ROOT / "samples" / "northwind")
    result = CliRunner().invoke(cli, ["ingest", samples, "-n", "northwind", "--create", "--home", str(home)])
    assert result.exit_code == 0, result.output
    return home


class Served:
    """``ragline serve``'s app for tenant ``local`` on a copy of the ingested home."""

    def __init__(self, client: TestClient, container: Container) -> None:
        self.client = client
        self.container = container

    def chat(self, messages: list[dict[str, str]]) -> list[tuple[str, dict[str, Any]]]:
        """One streamed run: its SSE events as (kind, data)."""
        body = {"messages": messages, "namespaces": ["northwind"]}
        resp = self.client.post("/v1/chat", json=body)
        assert resp.status_code == 200 and resp.headers["content-type"].startswith("text/event-stream")
        return parse_sse(resp.text)

    def usage(self) -> dict[str, Any]:
        resp = self.client.get("/v1/usage")
        assert resp.status_code == 200
        return dict(resp.json())

    def chunk_with(self, document_id: str, phrase: str) -> str:
        """The id of the stored chunk of ``document_id`` that holds ``phrase``."""
        store = self.container.stores.scoped(TenantScope(tenant_id="local", namespace_id="northwind"))
        return next(c.id for c in store.neighbors(document_id, 0, after=1000) if phrase in c.text)


def serve(ingested: Path, tmp_path: Path, settings: dict[str, Any]) -> Iterator[Served]:
    home = tmp_path / "home"
    shutil.copytree(ingested, home)
    container = Container(Settings(home=home, **settings))
    with TestClient(build_app(ROOT / "functions", "local", container), base_url="http://localhost") as client:
        yield Served(client, container)
    container.close()


@pytest.fixture
def over_openai(ingested: Path, tmp_path: Path, openai_replay: OpenAIReplay) -> Iterator[Served]:
    """The app with the real OpenAI adapter pointed at the replay server (no reranker: every model
    request is a chat turn of the script)."""
    settings = openai_replay.settings(reranker="none").model_dump()
    settings = {k: settings[k] for k in ("openai_base_url", "openai_api_key", "llm_max_retries", "reranker")}
    yield from serve(ingested, tmp_path, settings)


@pytest.fixture
def offline(ingested: Path, tmp_path: Path) -> Iterator[Served]:
    yield from serve(ingested, tmp_path, {})


def parse_sse(body: str) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for block in body.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        events.append((lines["event"], json.loads(lines["data"])))
    return events


def answer_of(events: list[tuple[str, dict[str, Any]]]) -> str:
    return "".join(d["text"] for k, d in events if k == "text")


def final_of(events: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    kinds = [k for k, _ in events]
    assert kinds[-2:] == ["sources", "final"], kinds
    return events[-1][1]


def sources_of(events: list[tuple[str, dict[str, Any]]]) -> list[str]:
    return [c["id"] for c in events[-2][1]["chunks"]]


def cited(answer: str) -> set[str]:
    return {i for ids in re.findall(r'ids="([^"]+)"', answer) for i in ids.split(",")}


def test_a_follow_up_over_openai_sends_the_earlier_turns_but_not_their_tool_traffic(
    over_openai: Served, openai_replay: OpenAIReplay
) -> None:
    returns = over_openai.chunk_with("returns-policy.md", "within 30 days")
    warranty = over_openai.chunk_with("returns-policy.md", "lifetime warranty")

    # Given a first turn where the model searches, then answers citing what it found
    openai_replay.script(
        [
            tool_call("search", {"query": "return new bicycles", "mode": "keyword"}, call_id="run1-search"),
            text("New bicycles can be returned within 30 days ", f'<citation ids="{returns}"/>', "."),
        ]
    )
    first = over_openai.chat([{"role": "user", "content": FIRST}])
    answer = answer_of(first)
    assert final_of(first)["answer"] == answer and final_of(first)["exitReason"] == "answered"
    assert returns in cited(answer) and sources_of(first) == [returns]
    assert over_openai.usage()["runs"] == 1
    sent_before = len(openai_replay.chat_requests)
    assert sent_before == 2

    # When the client sends the whole conversation with a follow-up that only makes sense after it
    openai_replay.script(
        [
            tool_call("search", {"query": "frame warranty", "mode": "keyword"}, call_id="run2-search"),
            text("The frame has a lifetime warranty ", f'<citation ids="{warranty}"/>', "."),
        ]
    )
    conversation = [
        {"role": "user", "content": FIRST},
        {"role": "assistant", "content": answer},
        {"role": "user", "content": FOLLOW_UP},
    ]
    second = over_openai.chat(conversation)

    # Then the second run's first model request holds the system prompt and the three turns, in order
    requests = openai_replay.chat_requests[sent_before:]
    assert len(requests) == 2
    opening = requests[0]["messages"]
    assert opening[0]["role"] == "system" and opening[1:] == conversation
    # and none of the first run's tool traffic: no tool message, no tool call, not its search result
    for request in requests:
        earlier = json.dumps(request["messages"][: len(conversation) + 1])
        assert '"tool"' not in earlier and "tool_calls" not in earlier and "run1-search" not in earlier
    # and the second request adds only this run's own search call and result
    after = requests[1]["messages"][len(conversation) + 1 :]
    assert [m["role"] for m in after] == ["assistant", "tool"]
    assert after[0]["tool_calls"][0]["id"] == after[1]["tool_call_id"] == "run2-search"
    assert warranty in after[1]["content"]

    # and the second run streamed its own steps, text, verified sources and final event
    kinds = [k for k, _ in second]
    assert kinds[:2] == ["tool_start", "tool_end"] and "text" in kinds
    assert second[1][1]["error"] is None and second[1][1]["hits"] > 0
    final = final_of(second)
    assert final["exitReason"] == "answered" and final["answer"] == answer_of(second)
    assert "lifetime warranty" in final["answer"] and cited(final["answer"]) == {warranty}
    assert sources_of(second) == [warranty]
    assert final["runId"] != final_of(first)["runId"]
    # and each run was charged once, for its own search and its own two model turns
    assert final["usage"]["retrievals"] == 1 and final["usage"]["llmInputTokens"] == 200
    usage = over_openai.usage()
    assert usage["runs"] == 2 and usage["usage"]["retrievals"] == 2
    assert usage["usage"]["llmInputTokens"] == 400 and usage["usage"]["llmOutputTokens"] == 40


def test_a_follow_up_offline_answers_the_new_question_from_the_documents(offline: Served) -> None:
    # Given a first turn answered by the offline extractive model
    first = offline.chat([{"role": "user", "content": FIRST}])
    answer = final_of(first)["answer"]
    assert "30 days" in answer and final_of(first)["exitReason"] == "answered"

    # When the client sends the conversation back with a follow-up
    second = offline.chat(
        [
            {"role": "user", "content": FIRST},
            {"role": "assistant", "content": answer},
            {"role": "user", "content": FOLLOW_UP},
        ]
    )

    # Then the second run searched again and answered the follow-up, citing only its own sources
    kinds = [k for k, _ in second]
    assert kinds[:2] == ["tool_start", "tool_end"]
    final = final_of(second)
    assert final["exitReason"] == "answered" and "lifetime warranty" in final["answer"]
    assert cited(final["answer"]) and cited(final["answer"]) <= set(sources_of(second))
    # and each run was charged once
    usage = offline.usage()
    assert usage["runs"] == 2 and usage["usage"]["retrievals"] == final["usage"]["retrievals"] + 1
