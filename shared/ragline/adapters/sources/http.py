"""What the data-source connectors share about HTTP: a request's retries, ``Retry-After``, JSON answers.

Every request goes through :func:`ragline.outbound.request` (public addresses only; loopback only with
``allow_loopback``; bounded bytes and time; redirects not followed), or a ``fetch`` of its signature
(a test's wrapper). :meth:`Requester.send` adds the retries the connectors share:

- an answer that is neither ``429`` nor a ``5xx`` is returned as it is: the connector reads it;
- ``429`` and ``503`` wait ``Retry-After`` (seconds or an HTTP date: :func:`retry_after`), else a
  backoff (0.5 s, then 1 s, 2 s…); other ``5xx`` back off; :data:`MAX_ATTEMPTS` attempts in all, and
  no wait after the last;
- a ``429``/``503`` whose wait would pass the call's deadline ``until`` (``time.monotonic()``) or
  :data:`MAX_WAIT` raises :class:`Throttled` with the seconds asked: a listing call ends early with
  ``retry_after`` and a cursor that asks again, while ``fetch`` and ``permissions`` turn it into a
  :class:`~ragline.errors.RaglineError` (the item fails alone);
- each attempt's timeout is what is left until ``until``, at most the request's ``seconds`` and at least
  the connector's :attr:`Retries.min_seconds` (even past ``until``: a call always makes progress).

Where the connectors' rules differ (what a last ``503`` is, whether another ``5xx`` may wait past
``until``) each states in its :class:`Retries`. What the connectors do beyond this — Graph's token and
its renewal on a ``401``, Confluence's Basic auth, the crawler's user agent, conditional requests and
``Crawl-delay`` — stays in the connector (:meth:`Requester.send`'s ``sign`` and ``renew``, a wrapping
``fetch``).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any

from ragline import errors, outbound

Fetch = Callable[..., outbound.Response]
"""The signature of :func:`ragline.outbound.request`."""

MAX_ATTEMPTS = 3
MAX_WAIT = 10.0
"""The longest ``Retry-After`` (or backoff) waited out inside a call; longer raises :class:`Throttled`."""
REQUEST_SECONDS = 10.0
"""An attempt's timeout at most (unless a request asks for more: a download)."""
ITEM_SECONDS = REQUEST_SECONDS * MAX_ATTEMPTS
"""The time a read outside a listing (``fetch``, ``permissions``) has, its retries included."""
MAX_RETRY_AFTER = 86_400.0
"""A ``Retry-After`` in seconds is read as a day at most."""


class Throttled(Exception):
    """A ``429`` or ``503`` asked for a wait the call cannot make: ``seconds``. Not a
    :class:`~ragline.errors.RaglineError`: a listing call answers it with ``retry_after``, a read of
    one item with an error of its own."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds


@dataclass(frozen=True)
class Retries:
    """A connector's retry rules, where they depart from the module's (see its docstring)."""

    min_seconds: float
    """An attempt's shortest timeout, even past ``until`` (a call always makes progress); as long as the
    request's ``seconds``, every attempt has its whole time whatever ``until`` says."""
    last_throttles: frozenset[int] = frozenset({429})
    """The statuses that, still answered after the last attempt, raise :class:`Throttled`; another
    ``5xx`` is returned."""
    last_wait: float | None = None
    """What that :class:`Throttled` carries when ``Retry-After`` says nothing (``None``: the last
    backoff)."""
    errors_within_until: bool = False
    """True: a ``5xx`` other than ``503`` whose backoff would pass ``until`` (or :data:`MAX_WAIT`) is
    returned at once. False: it is waited out (at most :data:`MAX_WAIT`), past ``until`` too."""


class Requester:
    """Requests through ``fetch`` with a connector's :class:`Retries` (``sleep`` and ``monotonic``
    injectable: tests)."""

    def __init__(
        self,
        fetch: Fetch,
        retries: Retries,
        *,
        allow_loopback: bool = False,
        sleep: Callable[[float], None] = time.sleep,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._fetch = fetch
        self._retries = retries
        self._allow_loopback = allow_loopback
        self._sleep = sleep
        self._monotonic = monotonic

    def send(
        self,
        method: str,
        url: str,
        until: float,
        *,
        headers: Mapping[str, str] | None = None,
        body: bytes = b"",
        max_bytes: int = outbound.MAX_RESPONSE_BYTES,
        seconds: float = REQUEST_SECONDS,
        sign: Callable[[], Mapping[str, str]] | None = None,
        renew: Callable[[outbound.Response], bool] | None = None,
    ) -> outbound.Response:
        """The answer to a request, after the retries of the module's docstring (:class:`Throttled`
        when a ``429``/``503`` wait cannot be made). ``sign`` adds headers to each attempt (asked for
        before its timeout is worked out: a credential it fetches takes its own time); ``renew`` sees
        each answer first, once per request: True sends the request again at once, not counted as an
        attempt (a credential renewed on a ``401``)."""
        rules = self._retries
        attempt = 0
        renewed = False
        while True:
            sent = {**(headers or {}), **(sign() if sign is not None else {})}
            timeout = max(rules.min_seconds, min(seconds, until - self._monotonic()))
            response = self._fetch(
                method, url, headers=sent, body=body, timeout=timeout, max_bytes=max_bytes,
                allow_loopback=self._allow_loopback,
            )  # fmt: skip
            if renew is not None and not renewed and renew(response):
                renewed = True
                continue
            if response.status < 500 and response.status != 429:
                return response
            attempt += 1
            asked = response.headers.get("retry-after", "")
            wait = retry_after(asked, default=0.5 * 2 ** (attempt - 1))
            throttled = response.status in (429, 503)
            if (throttled or rules.errors_within_until) and (
                wait > MAX_WAIT or self._monotonic() + wait >= until
            ):
                if throttled:
                    raise Throttled(wait)
                return response
            if attempt >= MAX_ATTEMPTS:
                if response.status in rules.last_throttles:
                    raise Throttled(
                        wait if rules.last_wait is None else retry_after(asked, default=rules.last_wait)
                    )
                return response
            self._sleep(min(wait, MAX_WAIT))


def retry_after(value: str, *, default: float) -> float:
    """``Retry-After`` in seconds — a number (never negative, at most :data:`MAX_RETRY_AFTER`) or an HTTP
    date — or ``default`` when absent or unreadable."""
    value = value.strip()
    if not value:
        return default
    try:
        seconds = float(value)
    except ValueError:
        try:
            return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
        except (TypeError, ValueError):
            return default
    return default if math.isnan(seconds) else min(max(seconds, 0.0), MAX_RETRY_AFTER)


def json_object(body: bytes, what: str) -> dict[str, Any]:
    """``body`` as a JSON object; :class:`~ragline.errors.DependencyFailed` saying ``what`` (``"Confluence
    sent a page"``) ``… that is not JSON`` (or ``… not a JSON object``) otherwise."""
    try:
        value = json.loads(body)
    except (ValueError, RecursionError):
        raise errors.DependencyFailed(f"{what} that is not JSON") from None
    if not isinstance(value, dict):
        raise errors.DependencyFailed(f"{what} that is not a JSON object")
    return value
