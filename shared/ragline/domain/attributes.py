"""Document metadata: typed key/value attributes, their limits, a namespace's schema, and the one
encoding every store indexes them by.

A document carries ``attributes``: string, number, boolean, string-list or date values under keys
like ``year`` or ``product.line``. Every chunk of the document carries a copy, so a store can narrow a
search inside its index (never after it). A namespace fixes each key's type the first time it sees
it (or as declared); a value of another type later is a :class:`~ragline.errors.MetadataTypeClash`,
never a field that silently stops matching.

Dates travel as canonical UTC text (``2024-05-01T00:00:00Z``, second precision): fixed width, so
text order is time order, and a store compares them as it compares strings.

Stores index attributes as *terms* (:func:`attribute_terms`), one keyword per value —
``key=s<text>``, ``key=n<sortable hex>``, ``key=b1`` — so equality, ``in``, prefixes and ranges are
term, terms, prefix and range queries on one keyword field (OpenSearch) or one indexed column
(SQLite), whatever keys a tenant invents: no mapping per key, no mapping explosion.
"""

from __future__ import annotations

import json
import math
import re
import struct
from collections.abc import Mapping
from datetime import UTC, date, datetime
from typing import Any, Literal, TypeAlias

from ragline import errors

AttributeValue: TypeAlias = str | int | float | bool | list[str]
"""As stored: numbers are floats, dates canonical strings, lists of strings."""
Attributes: TypeAlias = dict[str, AttributeValue]
AttributeType = Literal["string", "number", "boolean", "string_list", "date"]
ATTRIBUTE_TYPES: tuple[AttributeType, ...] = ("string", "number", "boolean", "string_list", "date")
Schema: TypeAlias = Mapping[str, AttributeType]

MAX_ATTRIBUTES = 50
"""Keys per document."""
MAX_KEY_LENGTH = 64
MAX_STRING_LENGTH = 1024
"""Characters of one string value (or list item, or date)."""
MAX_LIST_ITEMS = 100
MAX_ATTRIBUTES_BYTES = 16 * 1024
"""The whole map, as compact JSON."""
MAX_SCHEMA_KEYS = 500
"""Distinct keys one namespace may type."""

KEY = re.compile(rf"[A-Za-z0-9_][A-Za-z0-9_.\-]{{0,{MAX_KEY_LENGTH - 1}}}")
"""Keys never contain ``=``: the term of ``a`` is never a prefix of another key's terms."""

_DATE_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


def check_key(key: object) -> str:
    if not isinstance(key, str) or not KEY.fullmatch(key):
        raise errors.InvalidRequest(
            f"a metadata key must be 1-{MAX_KEY_LENGTH} characters of A-Z a-z 0-9 _ . - and start with a"
            f" letter, digit or _, got {str(key)[: MAX_KEY_LENGTH + 8]!r}",
            key=str(key)[: MAX_KEY_LENGTH + 8],
        )
    return key


def check_text(value: str, key: str) -> str:
    """A string value: bounded, and encodable (a lone surrogate from JSON would break every store)."""
    if len(value) > MAX_STRING_LENGTH:
        raise errors.InvalidRequest(
            f"metadata value of {key!r} is longer than {MAX_STRING_LENGTH} characters", key=key
        )
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise errors.InvalidRequest(f"metadata value of {key!r} is not valid Unicode", key=key) from None
    return value


def canonical_date(value: object, key: str) -> str:
    """ISO-8601 date or date-time (naive: UTC) → ``YYYY-MM-DDTHH:MM:SSZ``; anything else is refused."""
    if isinstance(value, str) and len(value) <= 64:
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
        except ValueError:
            parsed = None
        if parsed is not None:
            if parsed.tzinfo is None:
                parsed = parsed.replace(tzinfo=UTC)
            return parsed.astimezone(UTC).strftime(_DATE_FORMAT)
    if isinstance(value, date) and not isinstance(value, datetime):
        return f"{value.isoformat()}T00:00:00Z"
    raise errors.InvalidRequest(
        f"metadata value of {key!r} must be an ISO-8601 date or date-time", key=key, type="date"
    )


def type_of(value: object) -> AttributeType:
    """The type a raw JSON value infers (a date is only ever declared, never inferred)."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "string_list"
    raise errors.InvalidRequest(
        "a metadata value must be a string, number, boolean or list of strings",
        got=type(value).__name__,
    )


def _number(value: object, key: str) -> int | float:
    """The number as given: ``2024`` stays an integer and ``2024.0`` a float, so a document's
    metadata reads back as it was written (they are one value to filters and terms)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise clash(key, "number", type_of(value))
    if isinstance(value, int):
        if abs(value) > 2**53:
            raise errors.InvalidRequest(f"metadata number of {key!r} is too large to store exactly", key=key)
        return value
    if not math.isfinite(value):
        raise errors.InvalidRequest(f"metadata number of {key!r} must be finite", key=key)
    return value + 0.0  # -0.0 → 0.0: one term for zero


def clash(key: str, declared: AttributeType, got: AttributeType) -> errors.MetadataTypeClash:
    return errors.MetadataTypeClash(
        f"metadata key {key!r} is a {declared} in this namespace; got a {got}",
        key=key,
        declared=declared,
        got=got,
    )


def coerce(key: str, value: object, kind: AttributeType) -> AttributeValue:
    """``value`` as an attribute of type ``kind``, or a clear error (a clash names both types)."""
    if kind == "date":
        if not isinstance(value, str):
            raise clash(key, kind, type_of(value))
        return canonical_date(check_text(value, key), key)
    got = type_of(value)
    if kind == "number":
        return _number(value, key)
    if got != kind:
        raise clash(key, kind, got)
    if kind == "boolean":
        return bool(value)
    if kind == "string":
        return check_text(str(value), key)
    items = list(value)  # type: ignore[call-overload]
    if len(items) > MAX_LIST_ITEMS:
        raise errors.InvalidRequest(f"metadata list {key!r} has more than {MAX_LIST_ITEMS} items", key=key)
    if not all(isinstance(item, str) for item in items):
        raise errors.InvalidRequest(f"metadata list {key!r} must hold strings only", key=key)
    return sorted({check_text(item, key) for item in items})


def normalise(raw: Mapping[str, object], schema: Schema) -> tuple[Attributes, dict[str, AttributeType]]:
    """Validate a document's attributes against the namespace's schema.

    Returns the attributes as stored and the keys the schema did not know yet, with the type each
    one infers (the caller fixes them on the namespace before the document is written). ``None``
    values and empty lists are dropped (absent and empty are the same to every filter).
    """
    if not isinstance(raw, Mapping):
        raise errors.InvalidRequest("metadata must be a JSON object of key: value")
    if len(raw) > MAX_ATTRIBUTES:
        raise errors.InvalidRequest(
            f"a document may carry at most {MAX_ATTRIBUTES} metadata keys", keys=len(raw)
        )
    out: Attributes = {}
    new: dict[str, AttributeType] = {}
    for key, value in raw.items():
        check_key(key)
        if value is None:
            continue
        kind = schema.get(key) or type_of(value)
        stored = coerce(key, value, kind)
        if stored == []:
            continue
        out[key] = stored
        if key not in schema:
            new[key] = kind
    if len(json.dumps(out, separators=(",", ":"), ensure_ascii=False).encode()) > MAX_ATTRIBUTES_BYTES:
        raise errors.InvalidRequest(
            f"metadata is larger than {MAX_ATTRIBUTES_BYTES // 1024} KiB as JSON", limit=MAX_ATTRIBUTES_BYTES
        )
    return out, new


def merge_schema(schema: Schema, new: Mapping[str, AttributeType]) -> dict[str, AttributeType]:
    """The schema with ``new`` keys added; a key already typed otherwise is a clash, and a schema
    may not grow past :data:`MAX_SCHEMA_KEYS`."""
    merged = dict(schema)
    for key, kind in new.items():
        known = merged.setdefault(key, kind)
        if known != kind:
            raise clash(key, known, kind)
    if len(merged) > MAX_SCHEMA_KEYS:
        raise errors.InvalidRequest(
            f"a namespace may type at most {MAX_SCHEMA_KEYS} metadata keys", keys=len(merged)
        )
    return merged


# -- the terms stores index ------------------------------------------------------------------------


def sortable_number(value: float) -> str:
    """16 hex digits whose text order is the numbers' order (IEEE-754 bits, sign-flipped)."""
    (bits,) = struct.unpack(">Q", struct.pack(">d", value + 0.0))
    bits = bits ^ 0xFFFFFFFFFFFFFFFF if bits >> 63 else bits | 1 << 63
    return f"{bits:016x}"


def term(key: str, value: str | float | bool) -> str:
    """The term one scalar value of ``key`` is indexed (and looked up) by."""
    if isinstance(value, bool):
        return f"{key}=b{int(value)}"
    if isinstance(value, int | float):
        return f"{key}=n{sortable_number(float(value))}"
    return f"{key}=s{value}"


def attribute_terms(attributes: Mapping[str, AttributeValue]) -> list[str]:
    """Every term of a chunk's attributes (a list contributes one per item), sorted."""
    out: set[str] = set()
    for key, value in attributes.items():
        if isinstance(value, list):
            out.update(term(key, item) for item in value)
        else:
            out.add(term(key, value))
    return sorted(out)


def values_of(value: Any) -> list[str | float | bool]:
    """An attribute as the set of values a filter tests (a scalar is a set of one)."""
    if value is None:
        return []
    return list(value) if isinstance(value, list | tuple) else [value]
