"""Metadata filters: the request's JSON shape, its bounds, the rule it means (:func:`matches`, also the
contract tests' brute-force oracle), and the plan stores push down (:func:`plan`).

JSON shape (Bedrock Knowledge Bases' names, plus ``not`` and ``exists``)::

    {"andAll": [{"equals": {"key": "product", "value": "kettle"}},
                {"greaterThanOrEquals": {"key": "year", "value": 2024}},
                {"not": {"listContains": {"key": "tags", "value": "draft"}}}]}

Meaning: an attribute is the *set* of its values (a scalar is a set of one, a list its items, a
missing key the empty set). A comparison holds when some value of the key's type satisfies it;
``notEquals``/``notIn`` are ``not`` of ``equals``/``in`` (so a document without the key matches
them); ``exists`` holds for a present key. Strings and dates order as text (dates are canonical UTC
text); booleans only compare for equality.

A filter never widens what a request may read: :class:`ReadView` is the request's bound filter and
reader set, fixed out of band (never by a model), and a tool's filter only narrows it (``and``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, get_args

from ragline import errors
from ragline.domain.access import may_read
from ragline.domain.attributes import (
    AttributeValue,
    Schema,
    canonical_date,
    check_key,
    check_text,
    clash,
    term,
    values_of,
)

Scalar: TypeAlias = str | float | bool
CompareOp = Literal[
    "equals",
    "notEquals",
    "greaterThan",
    "greaterThanOrEquals",
    "lessThan",
    "lessThanOrEquals",
    "startsWith",
    "listContains",
]
COMPARE_OPS: tuple[CompareOp, ...] = get_args(CompareOp)
RANGE_OPS = ("greaterThan", "greaterThanOrEquals", "lessThan", "lessThanOrEquals")
MAX_FILTER_DEPTH = 8
MAX_FILTER_NODES = 64
"""Operators and comparisons in one filter (each ``in`` value counts as one more)."""
MAX_IN_VALUES = 100


@dataclass(frozen=True)
class Compare:
    op: CompareOp
    key: str
    value: Scalar


@dataclass(frozen=True)
class Among:
    """``in`` (``negated``: ``notIn``): some value of the key is one of ``values``."""

    key: str
    values: tuple[Scalar, ...]
    negated: bool = False


@dataclass(frozen=True)
class Exists:
    key: str


@dataclass(frozen=True)
class AllOf:
    parts: tuple[Any, ...]


@dataclass(frozen=True)
class AnyOf:
    parts: tuple[Any, ...]


@dataclass(frozen=True)
class Not:
    part: Any


Filter: TypeAlias = Compare | Among | Exists | AllOf | AnyOf | Not

Narrowed: TypeAlias = "Filter | Mapping[str, Filter]"
"""An agent tool's filter: one for every namespace, or one typed per namespace id (a key may have one
type in one namespace and another type in the next: each store gets the filter typed by its own)."""


def narrowed_for(where: Narrowed | None, namespace_id: str) -> Filter | None:
    """The filter ``namespace_id``'s store is narrowed by (a per-namespace one missing the id: none)."""
    if where is None or not isinstance(where, Mapping):
        return where
    return where.get(namespace_id)


# -- parsing ---------------------------------------------------------------------------------------


def parse_filter(raw: object) -> Filter:
    """The filter a request's JSON describes, bounded in depth and size; InvalidRequest otherwise."""
    budget = [MAX_FILTER_NODES]
    return _parse(raw, 1, budget)


def _spend(budget: list[int], n: int = 1) -> None:
    budget[0] -= n
    if budget[0] < 0:
        raise errors.InvalidRequest(f"a filter may hold at most {MAX_FILTER_NODES} conditions")


def _parse(raw: object, depth: int, budget: list[int]) -> Filter:
    if depth > MAX_FILTER_DEPTH:
        raise errors.InvalidRequest(f"a filter may nest at most {MAX_FILTER_DEPTH} levels")
    if not isinstance(raw, Mapping) or len(raw) != 1:
        raise errors.InvalidRequest('a filter is an object with exactly one operator, e.g. {"equals": …}')
    _spend(budget)
    ((op, body),) = raw.items()
    if op in ("andAll", "orAll"):
        if not isinstance(body, list) or not body:
            raise errors.InvalidRequest(f"{op} takes a non-empty list of filters")
        parts = tuple(_parse(p, depth + 1, budget) for p in body)
        return AllOf(parts) if op == "andAll" else AnyOf(parts)
    if op == "not":
        return Not(_parse(body, depth + 1, budget))
    if not isinstance(body, Mapping) or not isinstance(body.get("key"), str):
        raise errors.InvalidRequest(f'{op} takes {{"key": …, "value": …}}', operator=str(op)[:40])
    key = check_key(body["key"])
    if op == "exists":
        return Exists(key)
    if "value" not in body:
        raise errors.InvalidRequest(f"{op} needs a value", operator=op, key=key)
    value = body["value"]
    if op in ("in", "notIn"):
        if not isinstance(value, list) or not value or len(value) > MAX_IN_VALUES:
            raise errors.InvalidRequest(
                f"{op} takes a list of 1-{MAX_IN_VALUES} values", operator=op, key=key
            )
        _spend(budget, len(value) - 1)
        values = tuple(_scalar(v, key) for v in value)
        if len({_kind(v) for v in values}) > 1:
            raise errors.InvalidRequest(f"{op} values must all be of one type", operator=op, key=key)
        return Among(key, values, negated=op == "notIn")
    if op not in COMPARE_OPS:
        raise errors.InvalidRequest(f"unknown filter operator {str(op)[:40]!r}", operator=str(op)[:40])
    scalar = _scalar(value, key)
    if op in RANGE_OPS and isinstance(scalar, bool):
        raise errors.InvalidRequest(f"{op} compares numbers, strings or dates, not booleans", key=key)
    if op in ("startsWith", "listContains") and not isinstance(scalar, str):
        raise errors.InvalidRequest(f"{op} takes a string value", operator=op, key=key)
    return Compare(op, key, scalar)


def _scalar(value: object, key: str) -> Scalar:
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        try:
            number = float(value)
        except OverflowError:
            number = math.inf
        if not math.isfinite(number):
            raise errors.InvalidRequest("a filter number must be finite", key=key)
        return number + 0.0
    if isinstance(value, str):
        return check_text(value, key)
    raise errors.InvalidRequest("a filter value must be a string, number or boolean", key=key)


def _kind(value: Scalar) -> str:
    return "b" if isinstance(value, bool) else "n" if isinstance(value, int | float) else "s"


# -- typing against a namespace's schema -----------------------------------------------------------


def typed(f: Filter, schema: Schema) -> Filter:
    """``f`` checked against the namespace's schema: a value of another type than the key's is a
    ``MetadataTypeClash`` (a filter that could never match is a mistake to report), a date key's
    values become canonical dates (``startsWith`` keeps its prefix as written). Keys the schema does
    not know are kept as they are (no document has them yet: they match nothing)."""
    if isinstance(f, AllOf):
        return AllOf(tuple(typed(p, schema) for p in f.parts))
    if isinstance(f, AnyOf):
        return AnyOf(tuple(typed(p, schema) for p in f.parts))
    if isinstance(f, Not):
        return Not(typed(f.part, schema))
    if isinstance(f, Exists) or f.key not in schema:
        return f
    kind = schema[f.key]
    if isinstance(f, Among):
        return Among(f.key, tuple(_typed_value(f.key, v, kind, "in") for v in f.values), f.negated)
    if f.op == "startsWith":
        if kind in ("number", "boolean"):
            raise clash(f.key, kind, "string")
        return f
    if f.op in RANGE_OPS and kind == "boolean":
        raise errors.InvalidRequest(f"{f.op} cannot compare booleans", key=f.key)
    return Compare(f.op, f.key, _typed_value(f.key, f.value, kind, f.op))


def _typed_value(key: str, value: Scalar, kind: str, op: str) -> Scalar:
    got = {"b": "boolean", "n": "number", "s": "string"}[_kind(value)]
    if kind == "date":
        if got != "string":
            raise clash(key, "date", got)  # type: ignore[arg-type]
        return canonical_date(value, key)
    expected = "string" if kind == "string_list" else kind
    if got != expected:
        raise clash(key, kind, got)  # type: ignore[arg-type]
    return value


# -- meaning (the brute-force oracle) --------------------------------------------------------------


def _holds(op: str, value: Scalar, literal: Scalar) -> bool:
    if _kind(value) != _kind(literal):
        return False
    if op in ("equals", "listContains"):
        return value == literal
    if op == "startsWith":
        return isinstance(value, str) and value.startswith(str(literal))
    if isinstance(value, bool):
        return False
    a, b = value, literal
    if op == "greaterThan":
        return a > b  # type: ignore[operator]
    if op == "greaterThanOrEquals":
        return a >= b  # type: ignore[operator]
    if op == "lessThan":
        return a < b  # type: ignore[operator]
    return a <= b  # type: ignore[operator]


def matches(f: Filter | None, attributes: Mapping[str, AttributeValue]) -> bool:
    """Whether a chunk with these attributes passes ``f`` (None passes all): the rule, in Python."""
    if f is None:
        return True
    if isinstance(f, AllOf):
        return all(matches(p, attributes) for p in f.parts)
    if isinstance(f, AnyOf):
        return any(matches(p, attributes) for p in f.parts)
    if isinstance(f, Not):
        return not matches(f.part, attributes)
    values = values_of(attributes.get(f.key))
    if isinstance(f, Exists):
        return bool(values)
    if isinstance(f, Among):
        found = any(_holds("equals", v, lit) for v in values for lit in f.values)
        return not found if f.negated else found
    if f.op == "notEquals":
        return not any(_holds("equals", v, f.value) for v in values)
    return any(_holds(f.op, v, f.value) for v in values)


# -- the plan stores push down ---------------------------------------------------------------------


@dataclass(frozen=True)
class Terms:
    """Some indexed term is one of ``terms``."""

    terms: tuple[str, ...]


@dataclass(frozen=True)
class Prefix:
    """Some indexed term starts with ``prefix``."""

    prefix: str


@dataclass(frozen=True)
class Range:
    """Some indexed term lies between ``lower`` and ``upper`` (text order of UTF-8 bytes; the bounds
    always share the key's ``key=<tag>`` prefix, so a range never reaches another key or type)."""

    lower: str
    include_lower: bool
    upper: str
    include_upper: bool


Plan: TypeAlias = Terms | Prefix | Range | AllOf | AnyOf | Not
"""``AllOf``/``AnyOf``/``Not`` over plans; leaves test one chunk's set of attribute terms."""

_TAG_END = {"n": "o", "s": "t"}
"""The tag after each ordered type's: ``key=o`` bounds every ``key=n…`` term from above."""


def plan(f: Filter) -> Plan:
    """``f`` over attribute terms (:func:`ragline.domain.attributes.attribute_terms`): a store runs
    this tree as term / terms / prefix / range queries and boolean logic, and means :func:`matches`."""
    if isinstance(f, AllOf):
        return AllOf(tuple(plan(p) for p in f.parts))
    if isinstance(f, AnyOf):
        return AnyOf(tuple(plan(p) for p in f.parts))
    if isinstance(f, Not):
        return Not(plan(f.part))
    if isinstance(f, Exists):
        return Prefix(f"{f.key}=")
    if isinstance(f, Among):
        leaf: Plan = Terms(tuple(sorted({term(f.key, v) for v in f.values})))
        return Not(leaf) if f.negated else leaf
    if f.op in ("equals", "listContains"):
        return Terms((term(f.key, f.value),))
    if f.op == "notEquals":
        return Not(Terms((term(f.key, f.value),)))
    if f.op == "startsWith":
        return Prefix(term(f.key, f.value))
    tag = _kind(f.value)
    at = term(f.key, f.value)
    low, high = f"{f.key}={tag}", f"{f.key}={_TAG_END[tag]}"
    if f.op == "greaterThan":
        return Range(at, False, high, False)
    if f.op == "greaterThanOrEquals":
        return Range(at, True, high, False)
    if f.op == "lessThan":
        return Range(low, True, at, False)
    return Range(low, True, at, True)


# -- what one request may read ---------------------------------------------------------------------


@dataclass(frozen=True)
class ReadView:
    """What a request may read, bound into every store it uses: ``where`` (the request's filter,
    None: all) and ``readers`` (the user's reader terms; None: no user context, every document).
    Fixed out of band — from the authorised request, never from a model."""

    where: Filter | None = None
    readers: frozenset[str] | None = None

    def narrowed(self, extra: Filter | None) -> ReadView:
        """This view and ``extra`` (a tool's own filter): narrower or equal, never wider."""
        if extra is None:
            return self
        where = extra if self.where is None else AllOf((self.where, extra))
        return ReadView(where, self.readers)

    def admits(self, attributes: Mapping[str, AttributeValue], readers: Sequence[str]) -> bool:
        """The rule for one chunk (its document's attributes and reader terms)."""
        return may_read(self.readers, readers) and matches(self.where, attributes)

    @property
    def everything(self) -> bool:
        return self.where is None and self.readers is None


EVERYTHING = ReadView()
