"""The JSON schema of a request's ``filter`` (:mod:`ragline.domain.filters`), for OpenAPI and MCP.

Self-contained (no ``$ref``): MCP clients and code generators read it as it is. Nested filters
(``andAll``/``orAll`` items, ``not``) are described as filter objects without repeating the whole
schema at every level; the server checks them on arrival all the same (a 400 names the problem).
"""

from __future__ import annotations

from typing import Any

from ragline.domain.filters import COMPARE_OPS, MAX_FILTER_DEPTH, MAX_FILTER_NODES, MAX_IN_VALUES

_SCALAR: dict[str, Any] = {"anyOf": [{"type": "string"}, {"type": "number"}, {"type": "boolean"}]}
_NESTED: dict[str, Any] = {
    "type": "object",
    "minProperties": 1,
    "maxProperties": 1,
    "description": "A filter (this same shape).",
}


def _operand(value: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["key", "value"],
        "additionalProperties": False,
        "properties": {"key": {"type": "string", "minLength": 1, "maxLength": 64}, "value": value},
    }


def _one(op: str, body: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "required": [op],
        "additionalProperties": False,
        "properties": {op: body},
    }


def filter_json_schema() -> dict[str, Any]:
    """One operator object: a comparison, ``in``/``notIn``, ``exists``, or ``andAll``/``orAll``/``not``."""
    among = {"type": "array", "minItems": 1, "maxItems": MAX_IN_VALUES, "items": _SCALAR}
    branches = [_one(op, _operand(_SCALAR)) for op in COMPARE_OPS]
    branches += [_one(op, _operand(among)) for op in ("in", "notIn")]
    branches.append(
        _one(
            "exists",
            {
                "type": "object",
                "required": ["key"],
                "additionalProperties": False,
                "properties": {"key": {"type": "string", "minLength": 1, "maxLength": 64}},
            },
        )
    )
    branches += [_one(op, {"type": "array", "minItems": 1, "items": _NESTED}) for op in ("andAll", "orAll")]
    branches.append(_one("not", _NESTED))
    return {
        "title": "Filter",
        "description": (
            "A metadata filter: exactly one operator. A key's values are a set (a list attribute its"
            " items; a missing key none): a comparison holds when some value satisfies it; notEquals"
            " and notIn are `not` of equals and in (a document without the key matches them). Dates"
            " are ISO-8601 strings compared as instants. Booleans only compare for equality. At most"
            f" {MAX_FILTER_DEPTH} levels and {MAX_FILTER_NODES} conditions (each `in` value counts)."
        ),
        "oneOf": branches,
    }
