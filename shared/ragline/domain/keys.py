"""API keys: ``rl_`` + 32 random bytes (URL-safe), shown once, stored only as SHA-256.

A registry stores and looks keys up only by :func:`hash_api_key`'s digest: a ``key_hash`` that is not
one (a plaintext key, a typo) is never stored and never matches, so a lookup of it can skip the read.
"""

from __future__ import annotations

import hashlib
import re
import secrets

PREFIX = "rl_"
_SHA256_HEX = re.compile(r"[0-9a-f]{64}")


def new_api_key() -> str:
    return PREFIX + secrets.token_urlsafe(32)


def new_key_id() -> str:
    """A public handle for listing and revoking; unrelated to the secret."""
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
