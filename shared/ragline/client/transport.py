"""The client's HTTP exchange with the API: one connection pool, the end user's headers, and the
retry policy every call shares — backoff honouring ``Retry-After``, and a retry only where it cannot
do the work twice (reads, idempotent writes, and runs under their ``Idempotency-Key``).

Each resource's requests (:mod:`.runs`, :mod:`.documents`, :mod:`.evaluations`, :mod:`.admin`)
are a subclass of :class:`ApiTransport`; :class:`~ragline.client.RaglineClient` combines them.
"""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Mapping
from typing import Any, TypeVar, overload
from urllib.parse import quote

import httpx
from pydantic import BaseModel

from .api_errors import api_error

M = TypeVar("M", bound=BaseModel)
RETRY_STATUSES = frozenset({429, 502, 503, 504})
MAX_RETRY_WAIT_S = 60.0
"""The longest ``Retry-After`` the client waits: a 429 asking for longer is raised at once (a retry
sooner would be refused again; the caller decides whether to come back)."""


class ApiTransport:
    """Requests to one Ragline API, answered with the server's models or raised as its errors."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        timeout: float = 120.0,
        max_retries: int = 3,
        backoff_s: float = 0.5,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.Client(
            base_url=base_url.rstrip("/"),
            headers=headers,
            timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
            transport=transport,
        )
        self._max_retries = max_retries
        self._backoff_s = backoff_s
        self._user: dict[str, str] = {}

    @overload
    def _call(
        self,
        model: type[M],
        method: str,
        path: str,
        body: Any = ...,
        *,
        run: str | None = ...,
        params: Mapping[str, str] | None = ...,
    ) -> M: ...

    @overload
    def _call(
        self,
        model: None,
        method: str,
        path: str,
        body: Any = ...,
        *,
        run: str | None = ...,
        params: Mapping[str, str] | None = ...,
    ) -> None: ...

    def _call(
        self,
        model: type[M] | None,
        method: str,
        path: str,
        body: Any = None,
        *,
        run: str | None = None,
        params: Mapping[str, str] | None = None,
    ) -> M | None:
        headers = {**self._user, "Idempotency-Key": run} if run else dict(self._user)
        # A retry must not do the work twice: reads and idempotent writes, and runs under their key.
        retriable = method in ("GET", "PUT", "PATCH", "DELETE") or run is not None
        for attempt in range(self._max_retries + 1):
            try:
                response = self._http.request(method, path, json=body, headers=headers, params=params)
            except httpx.TransportError:
                if not retriable or attempt >= self._max_retries:
                    raise
                self._sleep(attempt, None)
                continue
            if response.status_code < 400:
                return None if model is None else model.model_validate_json(response.content)
            if self._should_retry(response, attempt, retriable=retriable):
                self._sleep(attempt, response)
                continue
            raise api_error(response.status_code, _json(response))
        raise AssertionError("unreachable")  # pragma: no cover

    def _should_retry(self, response: httpx.Response, attempt: int, *, retriable: bool) -> bool:
        status = response.status_code
        if attempt >= self._max_retries or (_retry_after(response) or 0.0) > MAX_RETRY_WAIT_S:
            return False  # out of retries, or asked to wait longer than a retry would
        # 429 means the request was not processed: every request may retry it.
        return status == 429 or (retriable and status in RETRY_STATUSES)

    def _sleep(self, attempt: int, response: httpx.Response | None) -> None:
        delay = self._backoff_s * 2**attempt * (0.5 + random.random() / 2)
        after = _retry_after(response) if response is not None else None
        if after is not None:
            delay = max(delay, min(after, MAX_RETRY_WAIT_S))
        time.sleep(delay)


def _retry_after(response: httpx.Response) -> float | None:
    """The response's ``Retry-After`` in seconds (None: absent, or an HTTP date)."""
    try:
        return float(response.headers["retry-after"])
    except (KeyError, ValueError):
        return None


def _seg(value: str) -> str:
    """One path segment, percent-escaped (a document id may hold ``/``)."""
    return quote(value, safe="")


def _run_key() -> str:
    return f"client-{uuid.uuid4().hex}"


def _json(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None
