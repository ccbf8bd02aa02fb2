"""API keys: ``rl_`` + 32 random bytes (URL-safe), shown once, stored only as SHA-256."""

from __future__ import annotations

import hashlib
import secrets

PREFIX = "rl_"


def new_api_key() -> str:
    return PREFIX + secrets.token_urlsafe(32)


def new_key_id() -> str:
    """A public handle for listing and revoking; unrelated to the secret."""
    return "key_" + secrets.token_hex(8)


def hash_api_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def looks_like_api_key(value: str) -> bool:
    return value.startswith(PREFIX) and 40 <= len(value) <= 100
