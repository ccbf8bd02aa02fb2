"""When growth rounds run and the thresholds they use by default (:mod:`ragline.adapters.opensearch.growth`,
``OpenSearchVectorStoreProvider.grow``); the rounds themselves run against a node in
tests/contract/test_opensearch_growth.py and test_opensearch_silo.py."""

from __future__ import annotations

from typing import Any

import pytest

from ragline.adapters.opensearch import growth as gr
from ragline.adapters.opensearch import store as st
from ragline.adapters.opensearch.store import OpenSearchVectorStoreProvider

pytestmark = pytest.mark.unit


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def rounds(monkeypatch: pytest.MonkeyPatch) -> tuple[list[tuple[str, bool]], Clock]:
    """The rounds :meth:`grow` starts (tenant, pool-wide part or not), on a clock the test moves."""
    calls: list[tuple[str, bool]] = []

    def record(provider: Any, growth: Any, tenant_id: str, *, pool_wide: bool = True) -> dict[str, Any]:
        calls.append((tenant_id, pool_wide))
        return {}

    clock = Clock()
    monkeypatch.setattr(st, "grow", record)
    monkeypatch.setattr(st.time, "monotonic", clock)
    return calls, clock


def provider(interval: float | None) -> OpenSearchVectorStoreProvider:
    return OpenSearchVectorStoreProvider(object(), index="chunks", dimension=384, growth_interval=interval)  # type: ignore[arg-type]


def test_every_writing_tenant_gets_its_own_round_and_the_pool_part_runs_once_per_interval(
    rounds: tuple[list[tuple[str, bool]], Clock],
) -> None:
    calls, clock = rounds
    p = provider(300)
    assert p.grow("a") == {} and p.grow("b") == {}  # b is not starved by a's round
    assert p.grow("a") is None and p.grow("b") is None  # each at most once per interval
    assert calls == [("a", True), ("b", False)]  # the pool-wide part once for both
    clock.now += 299
    assert p.grow("c") == {}
    assert p.grow("a") is None
    clock.now += 1
    assert p.grow("a") == {} and p.grow("b") == {}
    assert calls[2:] == [("c", False), ("a", True), ("b", False)]


def test_no_rounds_without_an_interval_and_every_write_with_zero(
    rounds: tuple[list[tuple[str, bool]], Clock],
) -> None:
    calls, _ = rounds
    assert provider(None).grow("a") is None
    p = provider(0)
    p.grow("a"), p.grow("a")
    assert calls == [("a", True), ("a", True)]


def test_the_rounds_remembered_stay_bounded(
    rounds: tuple[list[tuple[str, bool]], Clock], monkeypatch: pytest.MonkeyPatch
) -> None:
    calls, clock = rounds
    monkeypatch.setattr(st, "GROWTH_TENANTS", 3)
    p = provider(300)
    for t in "abc":
        p.grow(t)
    clock.now += 300
    p.grow("d")  # a, b and c lapsed: forgotten
    assert set(p._grown_at) == {"d"}
    assert p.grow("a") == {}  # and, being lapsed, due again
    assert len(calls) == 5


def test_a_shard_fills_at_a_million_chunks_unless_their_bytes_pass_40_gib_first() -> None:
    assert gr.max_shard_chunks_for(384) == 1_000_000
    assert gr.max_shard_chunks_for(1024) == 1_000_000
    at_4096 = gr.max_shard_chunks_for(4096)
    assert at_4096 < 1_000_000
    assert at_4096 * gr.CHUNK_BYTES_1024 * 4 <= 40 * 1024**3 < (at_4096 + 1) * gr.CHUNK_BYTES_1024 * 4 + 1


def test_a_tenant_gets_an_index_of_its_own_at_a_twentieth_of_a_full_shard() -> None:
    p = provider(300)
    assert p.growth.max_shard_chunks == 1_000_000
    assert p.growth.silo_chunks == 50_000
    named = OpenSearchVectorStoreProvider(
        object(),  # type: ignore[arg-type]
        index="chunks",
        dimension=384,
        max_shard_chunks=200_000,
        silo_chunks=0,
    )
    assert named.growth.silo_chunks == 10_000


def test_a_silo_threshold_at_or_past_a_full_shard_is_refused() -> None:
    from ragline import errors

    for silo in (200_000, 300_000):
        with pytest.raises(errors.ConfigurationError, match="before it fills a pool shard"):
            OpenSearchVectorStoreProvider(
                object(),  # type: ignore[arg-type]
                index="chunks",
                dimension=384,
                max_shard_chunks=200_000,
                silo_chunks=silo,
            )


def test_a_growth_rounds_vendor_error_is_a_ragline_error_so_the_write_that_ran_it_stands(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from opensearchpy.exceptions import RequestError

    from ragline import errors

    def refused(*args: Any, **kwargs: Any) -> dict[str, Any]:
        raise RequestError(400, "invalid_alias_name_exception", {})

    monkeypatch.setattr(st, "grow", refused)
    with pytest.raises(errors.DependencyFailed):  # what upsert logs and lets pass (errors.RaglineError)
        provider(0).grow("a")
