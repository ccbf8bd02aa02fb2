"""A chat run that fails outside the events it reports itself (its charge cannot be committed, a bug)
answers in the one error shape in JSON mode, and ends a started stream with an ``error`` event —
never Starlette's plain-text "Internal Server Error" or a cut connection."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.testclient import TestClient

from ragline import errors
from ragline.adapters.embedded.ledger import SqliteUsageLedger
from ragline.config import Settings
from ragline.domain.models import RunUsage
from ragline.services.namespaces import new_namespace
from ragline.streaming import ERROR_HANDLERS
from ragline.wiring import Container
from tests.support.fakes import BowEmbedder, ScriptedChatModel
from tests.support.lambda_harness import authorizer_context, chat_client, chat_headers, load_handler

pytestmark = pytest.mark.unit
CHAT = load_handler("chat")
HEADERS = {**chat_headers(authorizer_context("acme")), "content-type": "application/json"}
INTERNAL = {"error": {"code": "internal_error", "message": "internal error", "details": {}}}


class LedgerFailingAtCommit(SqliteUsageLedger):
    """A ledger that reserves runs but cannot commit them: the run fails after its answer streamed."""

    def __init__(self, path: Path, failure: Exception) -> None:
        super().__init__(path)
        self.failure = failure

    def commit(self, tenant_id: str, run_id: str, usage: RunUsage, *args: Any, **kw: Any) -> RunUsage:
        raise self.failure


def container(tmp_path: Path, failure: Exception) -> Container:
    c = Container(
        Settings(home=tmp_path),
        ledger=LedgerFailingAtCommit(tmp_path / "u.sqlite", failure),
        embedder=BowEmbedder(),
        chat_model=ScriptedChatModel([["Hello."]]),
    )
    c.registry.create_namespace(new_namespace("acme", "docs"))
    return c


def ask(stream: bool) -> str:
    return json.dumps(
        {"messages": [{"role": "user", "content": "hi"}], "namespaces": ["docs"], "stream": stream}
    )


def test_an_unexpected_error_in_json_mode_is_a_logged_500_in_the_one_shape(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Given a run whose charge fails with a bug (whose text must not reach the client)
    c = container(tmp_path, RuntimeError("ledger bug at /srv/secret/path"))

    # When it is asked for as one JSON body
    with chat_client(CHAT, c) as client, caplog.at_level(logging.ERROR, logger="ragline.streaming"):
        resp = client.post("/v1/chat", content=ask(stream=False), headers=HEADERS)

    # Then the answer is the one shape, 500 internal_error naming the request and run, and the bug is
    # logged with its trace
    request_id = json.loads(HEADERS["x-amzn-request-context"])["requestId"]
    internal = {"error": {**INTERNAL["error"], "details": {"requestId": request_id, "runId": request_id}}}
    assert (resp.status_code, resp.json()) == (500, internal)
    assert resp.headers["content-type"] == "application/json"
    (record,) = [r for r in caplog.records if r.name == "ragline.streaming"]
    assert record.exc_info is not None and isinstance(record.exc_info[1], RuntimeError)


def test_a_dependency_failing_in_json_mode_keeps_its_code_and_status(tmp_path: Path) -> None:
    c = container(tmp_path, errors.DependencyUnavailable("usage ledger unreachable"))
    with chat_client(CHAT, c) as client:
        resp = client.post("/v1/chat", content=ask(stream=False), headers=HEADERS)
    assert resp.status_code == 503
    assert resp.json()["error"] == {
        "code": "dependency_unavailable",
        "message": "usage ledger unreachable",
        "details": {},
    }


def sse_events(text: str) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for block in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        events.append((lines["event"], json.loads(lines["data"])))
    return events


def test_an_unexpected_error_after_the_stream_started_is_an_error_event(tmp_path: Path) -> None:
    # Given the same failing run, streamed
    c = container(tmp_path, RuntimeError("ledger bug at /srv/secret/path"))

    # When it is asked for as a stream
    with chat_client(CHAT, c) as client:
        resp = client.post("/v1/chat", content=ask(stream=True), headers=HEADERS)

    # Then what streamed is kept, and the stream ends with an error event (not a cut connection)
    assert resp.status_code == 200
    events = sse_events(resp.text)
    assert events[0] == ("text", {"type": "text", "text": "Hello."})
    assert events[-1] == ("error", {"type": "error", "code": "internal_error", "message": "internal error"})
    assert "secret" not in resp.text


def test_an_error_no_route_catches_is_the_one_shape_too() -> None:
    async def broken(request: Request) -> Response:
        raise RuntimeError("a bug")

    app = Starlette(routes=[Route("/broken", broken)], exception_handlers=ERROR_HANDLERS)
    with TestClient(app, raise_server_exceptions=False) as client:
        resp = client.get("/broken")
    assert (resp.status_code, resp.json()) == (500, INTERNAL)
