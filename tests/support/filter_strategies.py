"""Hypothesis strategies for metadata filters and the attributes they test (shared by the filter unit
tests and the stores' filter contract), and the plan run the way a store runs it."""

from __future__ import annotations

from hypothesis import strategies as st

from ragline.domain.filters import AllOf, AnyOf, Not, Prefix, Range, Terms

KEYS = ["a", "b", "c"]
strings = st.sampled_from(["", "x", "xy", "y", "é", "z\u00ff", "10", "9"])
numbers = st.sampled_from([-2.5, -1.0, 0.0, 1.0, 1.5, 10.0, 1e300, -1e-300])
scalars = st.one_of(strings, numbers, st.booleans())
values = st.one_of(scalars, st.lists(strings, max_size=3))
attribute_maps = st.dictionaries(st.sampled_from(KEYS), values, max_size=3)


def _leaf() -> st.SearchStrategy[dict[str, object]]:
    key = st.sampled_from(KEYS)
    compare = st.builds(
        lambda op, k, v: {op: {"key": k, "value": v}},
        st.sampled_from(
            ["equals", "notEquals", "greaterThan", "greaterThanOrEquals", "lessThan", "lessThanOrEquals"]
        ),
        key,
        st.one_of(strings, numbers),
    )
    boolean = st.builds(
        lambda op, k, v: {op: {"key": k, "value": v}},
        st.sampled_from(["equals", "notEquals"]),
        key,
        st.booleans(),
    )
    text_only = st.builds(
        lambda op, k, v: {op: {"key": k, "value": v}},
        st.sampled_from(["startsWith", "listContains"]),
        key,
        strings,
    )
    among = st.builds(
        lambda op, k, v: {op: {"key": k, "value": v}},
        st.sampled_from(["in", "notIn"]),
        key,
        st.one_of(st.lists(strings, min_size=1, max_size=3), st.lists(numbers, min_size=1, max_size=3)),
    )
    exists = st.builds(lambda k: {"exists": {"key": k}}, key)
    return st.one_of(compare, boolean, text_only, among, exists)


raw_filters = st.recursive(
    _leaf(),
    lambda inner: st.one_of(
        st.builds(lambda xs: {"andAll": xs}, st.lists(inner, min_size=1, max_size=3)),
        st.builds(lambda xs: {"orAll": xs}, st.lists(inner, min_size=1, max_size=3)),
        st.builds(lambda x: {"not": x}, inner),
    ),
    max_leaves=8,
)


def run_plan(p: object, terms: set[str]) -> bool:
    """The plan the way a store runs it: term, terms, prefix and range tests over the chunk's terms."""
    if isinstance(p, AllOf):
        return all(run_plan(x, terms) for x in p.parts)
    if isinstance(p, AnyOf):
        return any(run_plan(x, terms) for x in p.parts)
    if isinstance(p, Not):
        return not run_plan(p.part, terms)
    if isinstance(p, Terms):
        return bool(terms & set(p.terms))
    if isinstance(p, Prefix):
        return any(t.startswith(p.prefix) for t in terms)
    assert isinstance(p, Range)
    enc = [t.encode() for t in terms]
    lo, hi = p.lower.encode(), p.upper.encode()
    return any(
        (t > lo or (p.include_lower and t == lo)) and (t < hi or (p.include_upper and t == hi)) for t in enc
    )
