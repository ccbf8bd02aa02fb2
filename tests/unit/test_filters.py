"""Metadata filters: bounds, typing, and the plan stores push down meaning exactly :func:`matches`."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragline import errors
from ragline.domain.attributes import attribute_terms, merge_schema, normalise, sortable_number
from ragline.domain.filters import (
    MAX_FILTER_DEPTH,
    MAX_FILTER_NODES,
    ReadView,
    matches,
    parse_filter,
    plan,
    typed,
)
from tests.support.filter_strategies import attribute_maps, raw_filters, run_plan


@settings(max_examples=400, deadline=None)
@given(raw_filters, attribute_maps)
def test_the_pushed_down_plan_means_what_matches_means(
    raw: dict[str, object], attrs: dict[str, object]
) -> None:
    stored, _ = normalise(attrs, {})
    f = parse_filter(raw)
    assert run_plan(plan(f), set(attribute_terms(stored))) == matches(f, stored)


@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=2, max_size=2))
def test_number_terms_sort_as_the_numbers_do(pair: list[float]) -> None:
    a, b = pair
    assert (sortable_number(a) < sortable_number(b)) == (a + 0.0 < b + 0.0)


def test_semantics_of_missing_keys_lists_and_negation() -> None:
    attrs, _ = normalise({"tags": ["hr", "policy"], "year": 2024}, {})
    assert matches(parse_filter({"listContains": {"key": "tags", "value": "hr"}}), attrs)
    assert matches(parse_filter({"in": {"key": "tags", "value": ["x", "policy"]}}), attrs)
    assert matches(parse_filter({"notEquals": {"key": "missing", "value": "x"}}), attrs)
    assert not matches(parse_filter({"equals": {"key": "missing", "value": "x"}}), attrs)
    assert not matches(
        parse_filter({"equals": {"key": "year", "value": "2024"}}), attrs
    )  # a string is not a number
    assert matches(parse_filter({"greaterThan": {"key": "year", "value": 2023.5}}), attrs)
    assert not matches(parse_filter({"exists": {"key": "gone"}}), attrs)


def test_bounds_refuse_deep_wide_and_malformed_filters() -> None:
    deep: dict[str, object] = {"exists": {"key": "a"}}
    for _ in range(MAX_FILTER_DEPTH):
        deep = {"not": deep}
    with pytest.raises(errors.InvalidRequest, match="nest"):
        parse_filter(deep)
    wide = {"orAll": [{"equals": {"key": "a", "value": i}} for i in range(MAX_FILTER_NODES)]}
    with pytest.raises(errors.InvalidRequest, match="at most"):
        parse_filter(wide)
    for bad in (
        {},
        {"equals": {"key": "a"}},
        {"equals": {"key": "a=b", "value": 1}},
        {"greaterThan": {"key": "a", "value": True}},
        {"in": {"key": "a", "value": [1, "x"]}},
        {"in": {"key": "a", "value": []}},
        {"equals": {"key": "a", "value": 10**400}},
        {"equals": {"key": "a", "value": "\ud800"}},
        {"equals": {"key": "a", "value": {"x": 1}}},
        {"nope": {"key": "a", "value": 1}},
        {"andAll": []},
    ):
        with pytest.raises(errors.InvalidRequest):
            parse_filter(json.loads(json.dumps(bad)) if "\ud800" not in json.dumps(bad) else bad)


def test_typing_clashes_and_canonical_dates() -> None:
    schema = {"year": "number", "published": "date", "tags": "string_list", "draft": "boolean"}
    with pytest.raises(errors.MetadataTypeClash):
        typed(parse_filter({"equals": {"key": "year", "value": "2024"}}), schema)  # type: ignore[arg-type]
    with pytest.raises(errors.MetadataTypeClash):
        typed(parse_filter({"startsWith": {"key": "year", "value": "20"}}), schema)  # type: ignore[arg-type]
    f = typed(parse_filter({"greaterThan": {"key": "published", "value": "2024-05-01"}}), schema)  # type: ignore[arg-type]
    attrs, new = normalise({"published": "2024-05-01T10:00:00+02:00"}, schema)  # type: ignore[arg-type]
    assert attrs == {"published": "2024-05-01T08:00:00Z"} and not new
    assert matches(f, attrs)
    same = typed(parse_filter({"equals": {"key": "published", "value": "2024-05-01T10:00+02:00"}}), schema)  # type: ignore[arg-type]
    assert same == parse_filter({"equals": {"key": "published", "value": "2024-05-01T08:00:00Z"}})
    assert matches(same, attrs)  # the literal is read as the stored canonical date
    with pytest.raises(errors.MetadataTypeClash):
        normalise({"draft": "yes"}, schema)  # type: ignore[arg-type]
    _, new = normalise({"owner": "ann", "score": 3}, {})
    assert new == {"owner": "string", "score": "number"}
    with pytest.raises(errors.MetadataTypeClash):
        merge_schema({"owner": "string"}, {"owner": "number"})


def test_a_tool_filter_only_narrows_the_bound_view() -> None:
    view = ReadView(
        parse_filter({"equals": {"key": "product", "value": "kettle"}}), frozenset({"*", "u:ann"})
    )
    wide = view.narrowed(
        parse_filter({"orAll": [{"exists": {"key": "product"}}, {"not": {"exists": {"key": "product"}}}]})
    )
    assert not wide.admits({"product": "toaster"}, ())
    assert wide.admits({"product": "kettle"}, ())
    assert not wide.admits({"product": "kettle"}, ("u:bob",))
    assert wide.admits({"product": "kettle"}, ("u:bob", "u:ann"))


def test_reader_terms_admit_the_named_user_their_groups_and_everyone_only() -> None:
    from ragline.domain.access import UserContext, document_readers, may_read

    bob = UserContext.of("bob", ["hr"]).reader_terms()
    assert may_read(None, document_readers(["alice"]))  # no user context: every document
    assert may_read(bob, document_readers())  # a document naming no one is everyone's
    assert may_read(bob, document_readers(["bob"]))
    assert may_read(bob, document_readers(groups=["hr"]))
    assert not may_read(bob, document_readers(["alice"], ["eng"]))
    assert not may_read(bob, document_readers(["hr"]))  # a user named like bob's group is not bob
    hr_user = UserContext.of("hr").reader_terms()
    assert not may_read(hr_user, document_readers(groups=["hr"]))
