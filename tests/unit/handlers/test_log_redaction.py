"""No handler ever logs a credential: with ``POWERTOOLS_LOGGER_LOG_EVENT=true`` Powertools logs every
whole event, and the ``Authorization`` header (the tenant's API key), ``x-api-key`` and cookies in it
are redacted before the line is written."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragline import telemetry
from ragline.cli.serve import LambdaContext, gateway_event
from ragline.config import Settings
from ragline.domain.keys import new_api_key
from ragline.services.namespaces import new_namespace
from ragline.wiring import Container
from tests.support.fakes import BowEmbedder
from tests.support.lambda_harness import authorizer_context, load_handler

pytestmark = pytest.mark.unit
KEY = new_api_key()
COOKIE = "session=s3cr3t-cookie-value"
GATEWAY_KEY = "gw-usage-plan-key-0123456789"
REQUESTS = {
    "documents": ("GET", "/v1/namespaces/docs/documents", "/v1/namespaces/{namespace}/documents", None),
    "keys": ("GET", "/v1/keys", "/v1/keys", None),
    "namespaces": ("GET", "/v1/namespaces", "/v1/namespaces", None),
    "search": ("POST", "/v1/namespaces/docs/search", "/v1/namespaces/{namespace}/search", '{"query": "x"}'),
}


@pytest.fixture
def container(tmp_path: Path) -> Container:
    c = Container(Settings(home=tmp_path), embedder=BowEmbedder(), tokenizer=BowEmbedder())
    c.registry.create_namespace(new_namespace("acme", "docs"))
    return c


@pytest.fixture
def stdout() -> Iterator[io.StringIO]:
    """What the handlers' Powertools logger writes to stdout (its one handler, shared by all)."""
    handler = telemetry.handler_logger().registered_handler
    assert isinstance(handler, logging.StreamHandler)
    captured = io.StringIO()
    previous = handler.setStream(captured)
    yield captured
    handler.setStream(previous)


def event_with_credentials(name: str) -> dict[str, Any]:
    method, path, resource, body = REQUESTS[name]
    event = gateway_event(
        method,
        path,
        resource=resource,
        path_parameters={"namespace": "docs"} if "{namespace}" in resource else None,
        authorizer=authorizer_context("acme"),
        headers={"Authorization": f"Bearer {KEY}", "x-api-key": GATEWAY_KEY, "Cookie": COOKIE},
        body=body,
    )
    event["multiValueHeaders"] = {"Authorization": [f"Bearer {KEY}"], "cookie": [COOKIE]}
    event["requestContext"]["identity"] = {"apiKey": GATEWAY_KEY, "sourceIp": "203.0.113.9"}
    return event


@pytest.mark.parametrize("name", REQUESTS)
def test_event_logging_never_writes_a_credential(
    name: str, container: Container, stdout: io.StringIO, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given event logging switched on for a cold start of the handler (Powertools reads it on import)
    monkeypatch.setenv("POWERTOOLS_LOGGER_LOG_EVENT", "true")
    handler = load_handler(name)
    event = event_with_credentials(name)

    # When it serves a request carrying an API key, a gateway key and a cookie
    result = handler.lambda_handler(event, LambdaContext(), container=container)

    # Then the event was logged, with every credential redacted and nothing else lost
    assert result["statusCode"] == 200
    out = stdout.getvalue()
    for secret in (KEY, GATEWAY_KEY, "s3cr3t"):
        assert secret not in out
    (logged,) = [line for line in map(json.loads, out.splitlines()) if "httpMethod" in line["message"]]
    headers = logged["message"]["headers"]
    assert headers["Authorization"] == headers["x-api-key"] == headers["Cookie"] == telemetry.REDACTED
    assert logged["message"]["multiValueHeaders"]["Authorization"] == telemetry.REDACTED
    assert logged["message"]["requestContext"]["identity"] == {
        "apiKey": telemetry.REDACTED,
        "sourceIp": "203.0.113.9",
    }
    assert logged["message"]["path"] == REQUESTS[name][1]
    # and the handler itself got the event untouched
    assert event["headers"]["Authorization"] == f"Bearer {KEY}"


def test_a_key_in_free_text_or_extra_fields_is_redacted_too(stdout: io.StringIO) -> None:
    logger = telemetry.handler_logger()
    logger.info("caller sent %s", f"Bearer {KEY}", extra={"request": {"headers": {"X-Api-Key": KEY}}})
    logger.warning(f"raw header: Authorization: Bearer {KEY}")

    out = stdout.getvalue()
    assert KEY not in out and out.count(telemetry.REDACTED) == 3


def test_a_data_sources_credentials_in_a_logged_body_are_redacted(
    tmp_path: Path, stdout: io.StringIO, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given event logging on, and a source created with credentials in the request's body (its first
    # sync queued, not run: nothing here reaches the site)
    from ragline.adapters.embedded.step_queue import InlineStepQueue

    queue = InlineStepQueue()
    container = Container(
        Settings(home=tmp_path), embedder=BowEmbedder(), tokenizer=BowEmbedder(), step_queue=queue
    )
    container.registry.create_namespace(new_namespace("acme", "docs"))
    monkeypatch.setenv("POWERTOOLS_LOGGER_LOG_EVENT", "true")
    handler = load_handler("namespaces")
    body = {
        "kind": "confluence",
        "confluence": {"siteUrl": "https://acme.atlassian.net"},
        "credentials": {"email": "bot@acme.example", "apiToken": "ATATT3xFfGF0-very-secret"},
    }
    event = gateway_event(
        "POST", "/v1/namespaces/docs/sources", resource="/v1/namespaces/{namespace}/sources",
        path_parameters={"namespace": "docs"}, authorizer=authorizer_context("acme"), body=json.dumps(body),
    )  # fmt: skip
    result = handler.lambda_handler(event, LambdaContext(), container=container)
    # Then the source was made, and no line carries the token (the logged body kept its other fields)
    assert result["statusCode"] == 201, result
    out = stdout.getvalue()
    assert "ATATT3xFfGF0" not in out
    (logged,) = [line for line in map(json.loads, out.splitlines()) if "httpMethod" in line["message"]]
    assert json.loads(logged["message"]["body"])["credentials"] == telemetry.REDACTED
    assert json.loads(logged["message"]["body"])["kind"] == "confluence"
    assert len(queue.steps) == 1
