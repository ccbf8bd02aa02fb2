from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from ragline import errors
from ragline.adapters.embedded.store import SqliteVectorStoreProvider
from ragline.domain.access import UserContext
from ragline.domain.filters import Not, ReadView, parse_filter
from ragline.domain.models import ChunkMetadata, KeywordQuery, TenantScope
from ragline.ports import VectorStore, VectorStoreProvider
from tests.contract.vector_store_contract import VectorStoreContract, make_chunks
from tests.contract.vector_store_filter_contract import check_one_among_10000, ten_thousand
from tests.contract.vector_store_publish_contract import PublishFault
from tests.support.vectors import DIM

pytestmark = pytest.mark.contract


class TestSqliteVectorStore(VectorStoreContract):
    filter_examples = 60

    @pytest.fixture
    def provider(self, tmp_path: Path) -> Iterator[SqliteVectorStoreProvider]:
        p = SqliteVectorStoreProvider(tmp_path / "store.sqlite", dimension=DIM)
        yield p
        p.close()

    @pytest.fixture
    def publish_fault(self) -> PublishFault:
        """The file refuses every write of the document's fence (a trigger aborting the statement)."""

        @contextmanager
        def fault(
            provider: VectorStoreProvider, store: VectorStore, doc: str, generation: int
        ) -> Iterator[VectorStore]:
            assert isinstance(provider, SqliteVectorStoreProvider)
            conn = provider.connection()
            for event in ("insert", "update"):
                conn.execute(
                    f"CREATE TRIGGER refuse_{event} BEFORE {event.upper()} ON fences"
                    f" WHEN NEW.document_id = '{doc}' BEGIN SELECT RAISE(ABORT, 'write refused'); END"
                )
            try:
                yield store
            finally:
                for event in ("insert", "update"):
                    conn.execute(f"DROP TRIGGER refuse_{event}")

        return fault


def test_k1_with_a_filter_matching_one_chunk_among_10000(tmp_path: Path) -> None:
    provider = SqliteVectorStoreProvider(tmp_path / "big.sqlite", dimension=DIM)
    scope = TenantScope(tenant_id="acme", namespace_id="big")
    provider.scoped(scope).upsert(ten_thousand())
    provider.scoped(TenantScope(tenant_id="other", namespace_id="big")).upsert(ten_thousand()[:200])
    check_one_among_10000(provider, scope)
    provider.close()


def test_a_publish_failing_after_its_fences_rose_undoes_them_all_and_raises(tmp_path: Path) -> None:
    """The other side of a per-document failure: when the transaction fails after every fence of the
    call rose (here: the scope's generation bump, its last write), nothing of it is kept — the call
    raises, and raising means no fence rose."""
    provider = SqliteVectorStoreProvider(tmp_path / "s.sqlite", dimension=DIM)
    store = provider.scoped(TenantScope(tenant_id="acme", namespace_id="docs"))
    store.upsert(make_chunks("a", ["alpha old"]) + make_chunks("b", ["beta old"]), generation=1)
    assert store.publish_many({"a": 1, "b": 1}) == {"a": True, "b": True}
    store.upsert(make_chunks("a", ["alpha new"]) + make_chunks("b", ["beta new"]), generation=2)
    provider.connection().execute(
        "CREATE TRIGGER refuse_bump BEFORE UPDATE ON scopes BEGIN SELECT RAISE(ABORT, 'disk full'); END"
    )
    with pytest.raises(errors.DependencyFailed):
        store.publish_many({"a": 2, "b": 2})
    provider.connection().execute("DROP TRIGGER refuse_bump")
    assert [c.text for c in store.neighbors("a", 0)] == ["alpha old"]
    assert [c.text for c in store.neighbors("b", 0)] == ["beta old"]
    assert store.publish_many({"a": 2, "b": 2}) == {"a": True, "b": True}
    provider.close()


def test_writes_from_another_process_are_seen(tmp_path: Path) -> None:
    """Given two providers on one file (two CLI processes), a write by one is visible to the other."""
    scope = TenantScope(tenant_id="acme", namespace_id="docs")
    reader = SqliteVectorStoreProvider(tmp_path / "s.sqlite", dimension=DIM)
    writer = SqliteVectorStoreProvider(tmp_path / "s.sqlite", dimension=DIM)
    assert reader.scoped(scope).search(KeywordQuery(text="bees")) == []
    reader.scoped(scope)._p.matrix(scope)  # warm the matrix cache before the foreign write
    writer.scoped(scope).upsert(make_chunks("b", ["bees buzz"]))
    from tests.contract.vector_store_contract import semantic

    assert [h.chunk.id for h in reader.scoped(scope).search(semantic("bees buzz"))] == ["b#0"]


def test_hits_are_read_by_rowid_not_by_scanning_the_scope(tmp_path: Path) -> None:
    """Given a search, the statement reading its hits looks rows up by rowid (a scan of the scope's
    index range cost ~50 ms per search at 100k chunks)."""
    provider = SqliteVectorStoreProvider(tmp_path / "s.sqlite", dimension=DIM)
    scope = TenantScope(tenant_id="acme", namespace_id="docs")
    provider.scoped(scope).upsert(make_chunks("b", [f"bees buzz {i}" for i in range(12)]))
    statements: list[str] = []
    conn = provider.connection()
    conn.set_trace_callback(statements.append)
    try:
        assert len(provider.scoped(scope).search(KeywordQuery(text="bees", k=10))) == 10
    finally:
        conn.set_trace_callback(None)
    (read,) = [s for s in statements if "rowid IN" in s]
    plan = " ".join(str(row) for row in conn.execute(f"EXPLAIN QUERY PLAN {read}"))
    assert "INTEGER PRIMARY KEY" in plan
    provider.close()


@pytest.mark.parametrize("mode", ["semantic", "keyword", "hybrid"])
def test_a_document_deleted_between_ranking_and_reading_is_left_out(
    tmp_path: Path, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Given a search that has ranked a document's chunks, when another process deletes the document
    before the hits are read, the search returns the chunks still there (no KeyError, nothing gone)."""
    from tests.contract.vector_store_contract import hybrid, semantic

    scope = TenantScope(tenant_id="acme", namespace_id="docs")
    reader = SqliteVectorStoreProvider(tmp_path / "s.sqlite", dimension=DIM)
    writer = SqliteVectorStoreProvider(tmp_path / "s.sqlite", dimension=DIM)
    writer.scoped(scope).upsert(
        make_chunks("gone", ["bees buzz loudly"]) + make_chunks("kept", ["bees buzz"])
    )
    store = reader.scoped(scope)
    read = store._by_rowid

    def slow_read(rowids: list[int]) -> dict[int, object]:
        assert len(rowids) == 2  # both were ranked
        writer.scoped(scope).delete_document("gone")
        return read(rowids)  # type: ignore[return-value]

    monkeypatch.setattr(store, "_by_rowid", slow_read)
    text = "bees buzz"
    query = {"semantic": semantic(text), "keyword": KeywordQuery(text=text), "hybrid": hybrid(text)}[mode]
    assert [h.chunk.id for h in store.search(query)] == ["kept#0"]
    reader.close()
    writer.close()


def test_a_file_written_before_filters_reads_its_chunks_as_open_and_without_attributes(
    tmp_path: Path,
) -> None:
    """Given a store file without the ``terms`` columns (as every file was before filters), opening it
    adds them: its chunks are read by every user and match only negated filters; new writes filter."""
    path = tmp_path / "old.sqlite"
    scope = TenantScope(tenant_id="acme", namespace_id="docs")
    SqliteVectorStoreProvider(path, dimension=DIM).scoped(scope).upsert(make_chunks("old", ["bees buzz"]))
    conn = sqlite3.connect(path)
    for trigger in ("chunk_terms_insert", "chunk_terms_update", "chunk_terms_delete"):
        conn.execute(f"DROP TRIGGER {trigger}")
    conn.execute("DROP TABLE chunk_terms")
    conn.execute("ALTER TABLE chunks DROP COLUMN terms")
    conn.execute("ALTER TABLE staged_chunks DROP COLUMN terms")
    conn.commit()
    conn.close()
    provider = SqliteVectorStoreProvider(path, dimension=DIM)
    user = UserContext.of("ann", ["hr"]).reader_terms()
    tagged = parse_filter({"equals": {"key": "team", "value": "red"}})
    q = KeywordQuery(text="bees")
    assert [h.chunk.id for h in provider.scoped(scope, ReadView(readers=user)).search(q)] == ["old#0"]
    assert provider.scoped(scope, ReadView(tagged)).search(q) == []
    assert len(provider.scoped(scope, ReadView(Not(tagged), user)).search(q)) == 1
    # and a chunk written now carries its terms
    private = make_chunks("new", ["bees hum"])[0]
    private = private.model_copy(
        update={"metadata": ChunkMetadata(attributes={"team": "red"}, readers=("g:ops",))}
    )
    provider.scoped(scope).upsert([private])
    assert [h.chunk.id for h in provider.scoped(scope, ReadView(tagged)).search(q)] == ["new#0"]
    assert [h.chunk.id for h in provider.scoped(scope, ReadView(readers=user)).search(q)] == ["old#0"]
    provider.close()
