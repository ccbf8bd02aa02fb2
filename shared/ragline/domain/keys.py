"""API keys: ``rl_`` + 32 random bytes (URL-safe), shown once, stored only as SHA-256.

A registry stores and looks keys up only by :func:`hash_api_key`'s digest: a ``key_hash`` that is not
one (a plaintext key, a typo) is never stored and never matches, so a lookup of it can skip the read.
A key's times are stored as :func:`timestamp` text. Nothing here imports pydantic: the authorizer
reads keys through this module alone (its cold start).
"""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime, timedelta
from typing import NamedTuple

PREFIX = "rl_"
_SHA256_HEX = re.compile(r"[0-9a-f]{64}")
TOUCH_INTERVAL = timedelta(seconds=60)
"""``touch_api_key`` writes a key's ``last_used_at`` at most once per interval (a busy key: one write)."""


class KeyGrant(NamedTuple):
    """What a stored API key grants: all the authorizer reads of a key (no record model needed)."""

    tenant_id: str
    key_id: str
    scopes: frozenset[str]
    namespaces: frozenset[str] = frozenset()
    """Allow-list; empty means every namespace of the tenant."""
    revoked: bool = False
    may_assert_user: bool = False
    requires_user: bool = False


def timestamp(at: datetime) -> str:
    """Fixed-width UTC ISO-8601, so text order is time order (naive datetimes are taken as UTC)."""
    at = at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)
    return at.isoformat(timespec="microseconds")


def touch_cutoff(at: datetime, interval: timedelta = TOUCH_INTERVAL) -> str:
    """A touch at ``at`` writes only over a stored ``last_used_at`` (as :func:`timestamp`) before this."""
    return timestamp(at - interval)


def new_api_key() -> str:
    import secrets  # only keys are made with it: not on the authorizer's import path

    return PREFIX + secrets.token_urlsafe(32)


def new_key_id() -> str:
    """A public handle for listing and revoking; unrelated to the secret."""
    import secrets

    return "key_" + secrets.token_hex(8)


def hash_api_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def looks_like_api_key(value: str) -> bool:
    return value.startswith(PREFIX) and 40 <= len(value) <= 100


def is_key_hash(value: str) -> bool:
    """A lowercase SHA-256 hex digest (what :func:`hash_api_key` returns), nothing before or after it:
    ``fullmatch``, since ``$`` would also accept a digest followed by a newline."""
    return bool(_SHA256_HEX.fullmatch(value))


def require_key_hash(key_hash: str, key_id: str) -> None:
    """Refuse to store anything but a key hash under key ``key_id`` (never a plaintext key)."""
    if not is_key_hash(key_hash):
        raise ValueError(f"key_hash of key {key_id!r} is not a SHA-256 hex digest; refusing to store it")
