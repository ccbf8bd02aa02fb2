"""A REST handler (or the chat app) that meets an error nobody expected (a store raising
``RuntimeError``) answers it in the one JSON error shape — 500 ``internal_error`` naming the request
(and the run, on run routes) — and logs it with its trace; it never raises to Lambda, where API
Gateway would answer 502 with a body of its own."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NoReturn

import pytest

from ragline import telemetry
from ragline.config import Settings
from ragline.wiring import Container
from tests.support.fakes import BowEmbedder
from tests.support.lambda_harness import (
    authorizer_context,
    call_rest,
    chat_client,
    chat_headers,
    load_handler,
)

pytestmark = pytest.mark.unit
SECRET = "table ragline-tenants is on fire at 10.0.3.7"
"""The failure's own text: never shown to the caller."""

REQUESTS = {
    "documents": ("GET", "/v1/namespaces/docs/documents", "/v1/namespaces/{namespace}/documents", None),
    "hosting_search": ("POST", "/v1/hosting-search", "/v1/hosting-search", {"query": "pump"}),
    "keys": ("GET", "/v1/keys", "/v1/keys", None),
    "namespaces": ("GET", "/v1/namespaces", "/v1/namespaces", None),
    "search": ("POST", "/v1/namespaces/docs/search", "/v1/namespaces/{namespace}/search", {"query": "pump"}),
}
"""One request per REST function."""
RUN_ROUTES = {"search", "hosting_search"}


class FailingStore:
    """A store whose every call fails as no one planned: the error is not a ``RaglineError``."""

    def __getattr__(self, name: str) -> Callable[..., NoReturn]:
        def fail(*args: Any, **kwargs: Any) -> NoReturn:
            raise RuntimeError(SECRET)

        return fail


@pytest.fixture
def container(tmp_path: Path) -> Container:
    store = FailingStore()
    return Container(
        Settings(home=tmp_path),
        embedder=BowEmbedder(),
        tokenizer=BowEmbedder(),
        registry=store,
        documents=store,
    )


@pytest.fixture
def stdout() -> Iterator[io.StringIO]:
    """What the handlers' Powertools logger writes to stdout (its one handler, shared by all)."""
    handler = telemetry.handler_logger().registered_handler
    assert isinstance(handler, logging.StreamHandler)
    captured = io.StringIO()
    previous = handler.setStream(captured)
    yield captured
    handler.setStream(previous)


@pytest.mark.parametrize("name", REQUESTS)
def test_an_unexpected_error_is_a_500_in_the_one_shape_and_logged_with_its_trace(
    name: str, container: Container, stdout: io.StringIO
) -> None:
    # Given a REST function whose store raises RuntimeError
    method, path, resource, body = REQUESTS[name]

    # When a request reaches it
    status, answer = call_rest(
        load_handler(name),
        container,
        method,
        path,
        resource=resource,
        authorizer=authorizer_context("acme"),
        body=body,
        request_id=f"gw-{name}",
    )

    # Then it is a 500 internal_error naming the request (and the run), without the failure's text
    expected = {"requestId": f"gw-{name}"} | ({"runId": f"gw-{name}"} if name in RUN_ROUTES else {})
    assert (status, answer) == (
        500,
        {"error": {"code": "internal_error", "message": "internal error", "details": expected}},
    )
    # And the failure is logged with its trace and the request's id
    lines = [json.loads(line) for line in stdout.getvalue().splitlines() if line.startswith("{")]
    failure = next(line for line in lines if line["message"] == "request failed unexpectedly")
    assert failure["level"] == "ERROR" and failure["request_id"] == f"gw-{name}"
    assert "RuntimeError" in failure["exception"] and SECRET in failure["exception"]


def test_the_chat_app_names_the_request_and_run_of_an_unexpected_error(tmp_path: Path) -> None:
    # Given a chat service that fails as no one planned before the run starts
    failing = Container(Settings(home=tmp_path), chat=FailingStore())
    headers = {**chat_headers(authorizer_context("acme"), request_id="gw-chat"), "Idempotency-Key": "run-7"}
    body = {"messages": [{"role": "user", "content": "hi"}], "stream": False}

    # When a chat request reaches it
    with chat_client(load_handler("chat"), failing) as client:
        resp = client.post("/v1/chat", json=body, headers=headers)

    # Then it is the same 500 as the REST handlers': the request and its run, not the failure's text
    details = {"requestId": "gw-chat", "runId": "run-7"}
    assert (resp.status_code, resp.json()) == (
        500,
        {"error": {"code": "internal_error", "message": "internal error", "details": details}},
    )
