"""Fair sharing at the edge: a refused request is a 429 in the one error shape with ``Retry-After``,
answered before any work (no embedding, no reserved run) — on the REST handlers and on the chat
route before its stream starts — and the usage route shows the limits and the refusals."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from starlette.requests import ClientDisconnect

from ragline.adapters.embedded.limits import SqliteRateLimiter
from ragline.cli.serve import LambdaContext, gateway_event
from ragline.config import Settings
from ragline.domain.billing import current_period
from ragline.domain.limits import MICROS, Limits
from ragline.services.authentication import Principal
from ragline.services.namespaces import new_namespace
from ragline.wiring import Container
from tests.contract.rate_limiter_contract import Clock
from tests.support.fakes import BowEmbedder, ScriptedChatModel
from tests.support.lambda_harness import authorizer_context, chat_client, chat_headers, load_handler

pytestmark = pytest.mark.unit
SEARCH, CHAT, KEYS = load_handler("search"), load_handler("chat"), load_handler("keys")


class CountingEmbedder(BowEmbedder):
    calls = 0

    def embed_query(self, text: str) -> Any:
        self.calls += 1
        return super().embed_query(text)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def container(tmp_path: Path, clock: Clock) -> Container:
    c = Container(
        Settings(home=tmp_path),
        embedder=CountingEmbedder(),
        chat_model=ScriptedChatModel([["Hi."]] * 5),
        limiter=SqliteRateLimiter(tmp_path / "limits.sqlite", clock=clock),
    )
    c.tenancy.create_tenant("acme", limits=Limits(requests_per_second=0.5, burst=1, max_concurrent_runs=1))
    c.registry.create_namespace(new_namespace("acme", "docs", default=True))
    return c


def rest(module: Any, container: Container, method: str, path: str, resource: str, body: Any = None) -> Any:
    event = gateway_event(
        method,
        path,
        resource=resource,
        path_parameters={"namespace": "docs"} if "{namespace}" in resource else None,
        authorizer=authorizer_context("acme"),
        body=None if body is None else json.dumps(body),
    )
    return module.lambda_handler(event, LambdaContext(), container=container)


def search(container: Container) -> Any:
    path, resource = "/v1/namespaces/docs/search", "/v1/namespaces/{namespace}/search"
    return rest(SEARCH, container, "POST", path, resource, {"query": "rockets"})


def test_a_search_over_the_rate_is_a_429_with_retry_after_before_any_work(container: Container) -> None:
    assert search(container)["statusCode"] == 200
    embedded = container.embedder.calls  # type: ignore[attr-defined]
    refused = search(container)  # Given the tenant's one token spent, when it searches again
    assert refused["statusCode"] == 429
    assert (
        refused["multiValueHeaders"].get("Retry-After") == ["2"] or refused["headers"]["Retry-After"] == "2"
    )
    error = json.loads(refused["body"])["error"]
    assert (error["code"], error["details"]["retryAfter"], error["details"]["scope"]) == (
        "rate_limited",
        2,
        "tenant",
    )
    assert container.embedder.calls == embedded  # type: ignore[attr-defined]  # nothing embedded
    assert container.ledger.period_runs("acme", current_period()) == 1  # nothing reserved or charged


def test_a_search_while_the_tenants_runs_are_all_in_flight_is_a_429(
    container: Container, clock: Clock
) -> None:
    running = container.tenant_gate.run_slot(Principal.operator("acme"))
    refused = search(container)
    assert refused["statusCode"] == 429
    assert json.loads(refused["body"])["error"]["code"] == "too_many_runs"
    running.release()
    clock.advance(2 * MICROS)  # a token again
    assert search(container)["statusCode"] == 200
    clock.advance(2 * MICROS)
    assert search(container)["statusCode"] == 200  # the search before freed its slot


def test_the_chat_route_refuses_before_the_stream_starts_and_frees_its_slot_after(
    container: Container, clock: Clock
) -> None:
    body = {"messages": [{"role": "user", "content": "hi"}], "namespaces": ["docs"], "stream": True}
    headers = {**chat_headers(authorizer_context("acme")), "content-type": "application/json"}
    with chat_client(CHAT, container) as client:
        first = client.post("/v1/chat", json=body, headers=headers)
        assert first.status_code == 200 and first.headers["content-type"].startswith("text/event-stream")
        refused = client.post("/v1/chat", json=body, headers=headers)
        assert refused.status_code == 429 and refused.headers["retry-after"] == "2"
        assert refused.headers["content-type"] == "application/json"
        assert refused.json()["error"]["code"] == "rate_limited"
        clock.advance(2 * MICROS)  # a token back; the first run's slot must be free too
        assert client.post("/v1/chat", json=body, headers=headers).status_code == 200


def test_the_usage_route_shows_the_limits_in_force_and_the_refusals(
    container: Container, clock: Clock
) -> None:
    search(container)
    assert search(container)["statusCode"] == 429
    clock.advance(2 * MICROS)
    report = json.loads(rest(KEYS, container, "GET", "/v1/usage", "/v1/usage")["body"])
    assert report["limits"] == {"requestsPerSecond": 0.5, "burst": 1, "maxConcurrentRuns": 1}
    assert report["throttled"] == 1


def test_an_admin_creates_a_key_with_limits_of_its_own(container: Container) -> None:
    container.tenancy.set_limits("acme", Limits())
    created = rest(
        KEYS,
        container,
        "POST",
        "/v1/keys",
        "/v1/keys",
        {"scopes": ["search"], "limits": {"requestsPerSecond": 2}},
    )
    view = json.loads(created["body"])
    assert created["statusCode"] == 201
    assert view["limits"] == {"requestsPerSecond": 2.0, "burst": None, "maxConcurrentRuns": None}
    assert container.registry.list_api_keys("acme")[0].limits == Limits(requests_per_second=2)


def test_a_rate_too_small_for_the_buckets_is_refused_when_the_key_is_created(container: Container) -> None:
    # Given an admin asks for a key limited to 1e-300 requests a second (its bucket's interval would
    # outgrow the store's integers, and every request of the key would be a 500)
    container.tenancy.set_limits("acme", Limits())
    body = {"scopes": ["search"], "limits": {"requestsPerSecond": 1e-300}}
    created = rest(KEYS, container, "POST", "/v1/keys", "/v1/keys", body)
    # Then the request is refused in the one error shape, and no key exists
    assert created["statusCode"] == 400, created["body"]
    assert json.loads(created["body"])["error"]["code"] == "invalid_request"
    assert container.registry.list_api_keys("acme") == []


@pytest.mark.parametrize("spec_version", ["2.3", "2.4"])
def test_a_chat_whose_client_is_gone_before_the_first_byte_frees_its_run_slot(
    container: Container, spec_version: str
) -> None:
    # Given a tenant with one run in flight at most, whose client goes away once its chat is admitted
    # and before the stream's first byte (ASGI 2.4: sending fails; before: the server says so)
    container.tenancy.set_limits("acme", Limits(max_concurrent_runs=1))
    app = CHAT.create_app(container)
    body = json.dumps({"messages": [{"role": "user", "content": "hi"}], "namespaces": ["docs"]})

    async def post(gone: bool) -> list[dict[str, Any]]:
        headers = {**chat_headers(authorizer_context("acme")), "content-type": "application/json"}
        scope = {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": spec_version},
            "http_version": "1.1",
            "method": "POST",
            "path": "/v1/chat",
            "raw_path": b"/v1/chat",
            "query_string": b"",
            "root_path": "",
            "scheme": "http",
            "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
            "client": ("127.0.0.1", 1),
            "server": ("127.0.0.1", 2),
        }
        messages = [{"type": "http.request", "body": body.encode(), "more_body": False}]
        sent: list[dict[str, Any]] = []

        async def receive() -> dict[str, Any]:
            if messages:
                return messages.pop(0)
            if gone:
                return {"type": "http.disconnect"}
            await anyio.sleep_forever()
            raise AssertionError

        async def send(message: dict[str, Any]) -> None:
            if gone and spec_version == "2.4":
                raise OSError("the client went away")
            sent.append(message)

        with contextlib.suppress(ClientDisconnect):
            await app(scope, receive, send)
        return sent

    anyio.run(post, True)
    # When the tenant asks again, then it is answered: the abandoned chat held no slot
    answered = anyio.run(post, False)
    assert answered[0]["status"] == 200, answered


def test_a_key_burst_without_a_rate_is_refused_rather_than_ignored(container: Container) -> None:
    # Given an admin asks for a key with a burst but no rate of its own (a key has no default rate:
    # the burst would limit nothing, silently)
    body = {"scopes": ["search"], "limits": {"burst": 5}}
    created = rest(KEYS, container, "POST", "/v1/keys", "/v1/keys", body)
    # Then it is refused in the one error shape, naming the field, and no key exists
    assert created["statusCode"] == 400, created["body"]
    error = json.loads(created["body"])["error"]
    assert (error["code"], error["details"]["field"]) == ("invalid_request", "limits.burst")
    assert container.registry.list_api_keys("acme") == []


def test_a_limited_key_cannot_issue_a_key_with_looser_limits(container: Container, clock: Clock) -> None:
    # Given an admin key of acme limited to 1 request a second and 2 runs at once
    container.tenancy.set_limits("acme", Limits())
    _, limited = container.tenancy.create_key(
        "acme", scopes=["search", "admin"], limits=Limits(requests_per_second=1, max_concurrent_runs=2)
    )
    context = {**authorizer_context("acme", scopes="search,admin"), "keyId": limited.key_id}

    def issue(limits: dict[str, Any] | None) -> Any:
        clock.advance(2 * MICROS)  # the key's own rate: a token for each ask
        body = {"scopes": ["search"], **({"limits": limits} if limits is not None else {})}
        event = gateway_event(
            "POST", "/v1/keys", resource="/v1/keys", authorizer=context, body=json.dumps(body)
        )
        return KEYS.lambda_handler(event, LambdaContext(), container=container)

    # When it asks for a key without limits, or with a higher rate, burst or run count, it is refused
    for asked, lifted in [
        (None, ["requestsPerSecond", "maxConcurrentRuns"]),
        ({"requestsPerSecond": 5, "maxConcurrentRuns": 2}, ["requestsPerSecond", "burst"]),
        ({"requestsPerSecond": 1, "burst": 3, "maxConcurrentRuns": 2}, ["burst"]),
        ({"requestsPerSecond": 1, "maxConcurrentRuns": 3}, ["maxConcurrentRuns"]),
    ]:
        refused = issue(asked)
        assert refused["statusCode"] == 403, (asked, refused["body"])
        assert json.loads(refused["body"])["error"]["details"]["limits"] == lifted
    # and a key within its limits is issued
    assert issue({"requestsPerSecond": 0.5, "maxConcurrentRuns": 1})["statusCode"] == 201
    assert len(container.registry.list_api_keys("acme")) == 2
