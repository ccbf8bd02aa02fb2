"""The Python client honours a 429's ``Retry-After`` up to a minute; asked to wait longer, it raises
the typed ``RateLimited`` at once instead of sleeping a minute per retry for refusals it can foresee."""

from __future__ import annotations

import httpx
import pytest

from ragline import client as client_module
from ragline import errors
from ragline.client import RaglineClient

pytestmark = pytest.mark.unit


def limited(retry_after: str, seen: list[httpx.Request]) -> httpx.MockTransport:
    body = {"error": {"code": "rate_limited", "message": "slow down", "details": {"retryAfter": 1}}}

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(429, json=body, headers={"retry-after": retry_after})

    return httpx.MockTransport(answer)


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    slept: list[float] = []
    monkeypatch.setattr(client_module.time, "sleep", slept.append)
    return slept


def test_a_429_asking_for_more_than_a_minute_is_raised_without_waiting(sleeps: list[float]) -> None:
    seen: list[httpx.Request] = []
    rl = RaglineClient("http://127.0.0.1:9", "rl_x", transport=limited("100", seen))
    with pytest.raises(errors.RateLimited):
        rl.usage()
    assert (len(seen), sleeps) == (1, [])
    with pytest.raises(errors.RateLimited):
        list(rl.chat("q", namespaces=["docs"]))
    assert (len(seen), sleeps) == (2, [])


def test_a_429_asking_for_seconds_is_waited_for_then_retried(sleeps: list[float]) -> None:
    seen: list[httpx.Request] = []
    rl = RaglineClient("http://127.0.0.1:9", "rl_x", transport=limited("2", seen), max_retries=2)
    with pytest.raises(errors.RateLimited):
        rl.usage()
    assert len(seen) == 3 and len(sleeps) == 2 and all(s >= 2 for s in sleeps)
