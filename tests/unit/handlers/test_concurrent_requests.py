"""Two REST requests of two tenants resolved at the same time in threads of one process each answer
for their own tenant: a handler's request state (the event, its authorizer context, the route
context) is the request's own, never a process-wide "current event" the other request overwrote.

The interleaving is forced, not hoped for: each request stops at a barrier inside its handler,
after routing and before it reads its caller, so both events have been taken in before either
handler reads one. On a resolver that keeps the current event per process, both read the later."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, cast

import pytest

from ragline.config import Settings
from ragline.domain.api import NewKey
from ragline.services.authentication import Principal
from ragline.services.namespaces import new_namespace
from ragline.wiring import Container
from tests.support.fakes import BowEmbedder
from tests.support.lambda_harness import authorizer_context, call_rest, load_handler

pytestmark = pytest.mark.unit
TENANTS = ("acme", "globex")
REQUESTS = {
    "namespaces": ("GET", "/v1/namespaces", "/v1/namespaces"),
    "keys": ("GET", "/v1/keys", "/v1/keys"),
}
HANG_GUARD = 60.0
"""Seconds before a barrier that is never reached fails the test instead of hanging it (not a timing
assertion: both requests reach it at once unless the code under test breaks)."""


class MeetingContainer:
    """The real container, but a handler reaching for its service waits there for the other request."""

    def __init__(self, inner: Container, barrier: threading.Barrier) -> None:
        self._inner, self._barrier = inner, barrier

    def __getattr__(self, name: str) -> Any:
        if name in ("namespaces", "tenancy"):  # the service a handler calls, before it reads its caller
            self._barrier.wait(HANG_GUARD)
        return getattr(self._inner, name)


@pytest.fixture
def container(tmp_path: Path) -> Container:
    c = Container(Settings(home=tmp_path), embedder=BowEmbedder(), tokenizer=BowEmbedder())
    for tenant in TENANTS:
        c.tenancy.create_tenant(tenant)
        c.registry.create_namespace(new_namespace(tenant, f"{tenant}-docs"))
        c.tenancy.issue_key(Principal.operator(tenant), NewKey(name=f"{tenant}-ci", scopes=["search"]))
    return c


def own_names(name: str, answer: Any) -> list[str]:
    if name == "namespaces":
        return [n["namespaceId"] for n in answer["namespaces"]]
    return [k["name"] for k in answer["keys"]]


@pytest.mark.parametrize(
    "functions", [("namespaces", "keys"), ("namespaces", "namespaces"), ("keys", "keys")], ids="+".join
)
def test_two_tenants_requests_at_once_each_answer_for_their_own_tenant(
    functions: tuple[str, str], container: Container
) -> None:
    # Given two REST functions loaded in one process (one function twice: one app for both requests)
    modules = {name: load_handler(name) for name in set(functions)}
    meeting = cast(Container, MeetingContainer(container, threading.Barrier(2)))

    def request(name: str, tenant: str) -> tuple[int, Any]:
        method, path, resource = REQUESTS[name]
        return call_rest(
            modules[name], meeting, method, path, resource=resource, authorizer=authorizer_context(tenant)
        )

    # When acme's and globex's requests are resolved at once, meeting inside their handlers
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = [
            pool.submit(request, name, tenant) for name, tenant in zip(functions, TENANTS, strict=True)
        ]
        answers = [future.result() for future in futures]

    # Then each answered for its own tenant
    for name, tenant, (status, answer) in zip(functions, TENANTS, answers, strict=True):
        assert status == 200, answer
        assert own_names(name, answer) == [f"{tenant}-docs" if name == "namespaces" else f"{tenant}-ci"]
