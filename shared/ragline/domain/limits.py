"""Fair sharing between tenants: the limits a tenant or a key runs under, and the token bucket's rule.

A token bucket of ``rate`` tokens a second holding at most ``burst`` is kept as one number, its
*theoretical arrival time* (``tat``, the generic cell rate algorithm, GCRA): the instant the bucket
would be full again if nothing more were taken. A request at ``now`` is admitted when
``tat <= now + tolerance`` (``tolerance = (burst - 1) * interval``, ``interval = 1 / rate``: up to
``burst`` requests at once, then one per interval) and moves it to ``max(tat, now) + interval``; a
refusal moves nothing and may retry after ``tat - now - tolerance``. Times are integer microseconds,
so a store's condition compares exactly what this module computed.

One number instead of (tokens, last refill): a store updates it with one conditional write whose
condition is a *range* on the stored value, not equality with a value read before — concurrent
admissions do not invalidate each other (see :mod:`ragline.adapters.aws.limits`).
"""

from __future__ import annotations

import math
import time
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

MICROS = 1_000_000
MIN_RPS, MAX_RPS = 0.001, 100_000
"""The request rates a limit may set: below ``MIN_RPS`` a bucket's interval outgrows the stores'
integers (a key or tenant set to ``1e-300`` would fail every request); above ``MAX_RPS``, no limit."""
MAX_BURST, MAX_RUNS = 1_000_000, 10_000


def now_micros() -> int:
    """The wall clock in microseconds (the buckets' unit)."""
    return time.time_ns() // 1000


class Limits(BaseModel):
    """Limits set on a tenant or a key; a field left ``None`` is not set here (a tenant's: the
    deployment's default; a key's: only the tenant's limit applies). Camel-case in the API."""

    model_config = ConfigDict(
        alias_generator=to_camel, validate_by_name=True, serialize_by_alias=True, extra="forbid"
    )

    requests_per_second: float | None = Field(default=None, ge=MIN_RPS, le=MAX_RPS)
    """Sustained requests a second (every route); None: not limited here."""
    burst: int | None = Field(default=None, ge=1, le=MAX_BURST)
    """Requests admitted at once after a quiet spell; None: ``max(1, 2 × requests_per_second)``."""
    max_concurrent_runs: int | None = Field(default=None, ge=1, le=MAX_RUNS)
    """Chat, search and hosting-search runs in flight at once; None: not limited here."""

    def over(self, defaults: Limits) -> Limits:
        """These limits, each unset field taken from ``defaults`` — but a rate set here without a
        burst keeps its own burst (twice the rate), not the default rate's."""
        inherited = defaults.model_dump(exclude_none=True, by_alias=False)
        if self.requests_per_second is not None:
            inherited.pop("burst", None)
        return Limits.model_validate({**inherited, **self.model_dump(exclude_none=True, by_alias=False)})

    def rate(self) -> Rate | None:
        """The token bucket of these limits (None: no rate limit)."""
        if self.requests_per_second is None:
            return None
        burst = self.burst or max(1, math.ceil(2 * self.requests_per_second))
        return Rate.of(self.requests_per_second, burst)


def looser(issuer: Limits, requested: Limits | None) -> list[str]:
    """The limits (API names) in which ``requested`` lets a key do more than ``issuer`` does: a limit
    the issuer has and the request lifts or raises (a burst compared as each bucket's, defaults
    included). Empty: the request is within the issuer's limits."""
    wanted = requested or Limits()
    found = []
    mine, theirs = issuer.rate(), wanted.rate()
    if mine is not None and (theirs is None or theirs.interval < mine.interval):
        found.append("requestsPerSecond")
    if mine is not None and theirs is not None and theirs.burst > mine.burst:
        found.append("burst")
    runs = issuer.max_concurrent_runs
    if runs is not None and (wanted.max_concurrent_runs is None or wanted.max_concurrent_runs > runs):
        found.append("maxConcurrentRuns")
    return found


class Rate(NamedTuple):
    """A token bucket in microseconds: one token every ``interval``, ``burst`` at most."""

    interval: int
    burst: int

    @classmethod
    def of(cls, per_second: float, burst: int) -> Rate:
        return cls(interval=max(1, round(MICROS / per_second)), burst=max(1, burst))

    @property
    def tolerance(self) -> int:
        return (self.burst - 1) * self.interval

    def ceiling(self, now: int) -> int:
        """The latest ``tat`` a request at ``now`` is admitted with."""
        return now + self.tolerance


class Admission(NamedTuple):
    """A bucket's answer: admitted with the new ``tat``, or refused (``tat`` unchanged) for ``wait``
    microseconds."""

    admitted: bool
    tat: int | None
    wait: int = 0

    @property
    def retry_after(self) -> int:
        """Whole seconds until a token (HTTP's ``Retry-After`` is whole seconds), at least 1."""
        return max(1, math.ceil(self.wait / MICROS))


def admit(tat: int | None, now: int, rate: Rate) -> Admission:
    """GCRA: the bucket stored as ``tat`` (None: never used, or forgotten — a full bucket)."""
    if tat is not None and tat > rate.ceiling(now):
        return Admission(False, tat, tat - rate.ceiling(now))
    return Admission(True, max(tat or now, now) + rate.interval)


class Bucket(NamedTuple):
    """Whose limit: a tenant's (``key_id`` empty) or one of its keys'."""

    tenant_id: str
    key_id: str = ""

    @property
    def name(self) -> str:
        """The bucket's name within its tenant (a store's sort key part)."""
        return f"key#{self.key_id}" if self.key_id else "tenant"


class Refused(NamedTuple):
    """Why a request was refused: whose ``bucket``, which limit, and whole seconds to wait."""

    bucket: Bucket
    limit: str
    retry_after: int
