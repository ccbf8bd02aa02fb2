"""SQLite errors of the embedded backend land in the error tree: a held lock is ``Throttled``
(retryable), a broken file or a bug is ``DependencyFailed``, an unusable path a ``ConfigurationError``;
never a raw ``sqlite3.Error`` (an HTTP 500 with no code)."""

from __future__ import annotations

import functools
import inspect
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragline import errors
from ragline.adapters.embedded.sqlite import maps_sqlite_errors, open_sqlite, translate

pytestmark = pytest.mark.unit
SCHEMA = "CREATE TABLE IF NOT EXISTS notes (id TEXT PRIMARY KEY, body TEXT NOT NULL);"


@maps_sqlite_errors
class Notes:
    """A tiny adapter shaped like the embedded ones: one connection, explicit transactions."""

    kind = "notes"  # not code: left alone

    def __init__(self, path: Path, *, timeout: float = 5.0) -> None:
        self.conn = open_sqlite(path, SCHEMA, timeout=timeout)

    def add(self, note_id: str, body: str) -> None:
        """Insert one note."""
        self.conn.execute("INSERT INTO notes VALUES (?, ?)", (note_id, body))

    def add_or_conflict(self, note_id: str, body: str) -> None:
        try:
            self.add(note_id, body)
        except errors.DependencyFailed as exc:  # what an adapter does, but translated already
            raise errors.Conflict("note exists", note_id=note_id) from exc

    def raw_sql(self, sql: str) -> list[tuple[object, ...]]:
        return self.conn.execute(sql).fetchall()

    def bodies(self) -> Iterator[str]:
        for (body,) in self.conn.execute("SELECT body FROM notes ORDER BY id"):
            yield body
        self.conn.execute("SELECT * FROM missing_table")

    def refuse(self) -> None:
        raise errors.NotFound("no such note", note_id="x")

    def fail_with(self, exc: Exception) -> None:
        raise exc

    @property
    def count(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM notez").fetchone()[0])

    @staticmethod
    def probe(path: Path) -> None:
        sqlite3.connect(path).execute("SELECT * FROM nowhere")

    @classmethod
    def named(cls) -> str:
        raise sqlite3.OperationalError("database is locked")

    def _private(self) -> None:
        raise sqlite3.OperationalError("database is locked")


@pytest.fixture
def notes(tmp_path: Path) -> Notes:
    return Notes(tmp_path / "db" / "notes.db", timeout=0.05)


def sqlite_error(
    message: str, name: str = "", kind: type[sqlite3.Error] = sqlite3.OperationalError
) -> sqlite3.Error:
    """An error as SQLite raises it (result code ``name``), or as the module raises it (no code)."""
    exc = kind(message)
    if name:
        exc.sqlite_errorcode = getattr(sqlite3, name)
        exc.sqlite_errorname = name
    return exc


# -- a held lock ------------------------------------------------------------------------------------


def test_a_write_blocked_by_another_connections_lock_is_throttled(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    notes = Notes(path, timeout=0.05)
    holder = sqlite3.connect(path, isolation_level=None, timeout=0.05)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(errors.Throttled) as caught:
            notes.add("n1", "blocked")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    exc = caught.value
    assert exc.code == "throttled"
    assert isinstance(exc, errors.RETRYABLE)
    assert "busy" in exc.message
    assert exc.details == {"sqlite_error": "SQLITE_BUSY"}
    assert isinstance(exc.__cause__, sqlite3.OperationalError)
    assert "database is locked" in str(exc.__cause__)
    notes.add("n1", "once the lock is gone")  # nothing stuck: the next call goes through
    assert notes.raw_sql("SELECT body FROM notes") == [("once the lock is gone",)]


def test_opening_a_database_another_connection_holds_is_throttled(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    Notes(path)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(errors.Throttled) as caught:
            open_sqlite(path, "CREATE TABLE IF NOT EXISTS more (x);", timeout=0.05)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert caught.value.details == {"sqlite_error": "SQLITE_BUSY", "path": str(path)}


def test_connections_opening_a_fresh_database_at_once_all_open(tmp_path: Path) -> None:
    # Given connections opening one new file at the same instant, again and again (they race to
    # switch it to WAL, and SQLite answers the losers "locked" without waiting: CI saw it once)
    import threading

    failures: list[BaseException] = []
    for round_ in range(60):
        path = tmp_path / f"fresh-{round_}.db"
        start = threading.Barrier(8)

        def open_one(path: Path = path, start: threading.Barrier = start) -> None:
            start.wait()
            try:
                open_sqlite(path, SCHEMA, timeout=5.0).close()
            except BaseException as exc:
                failures.append(exc)

        threads = [threading.Thread(target=open_one) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    # Then every one of them opened (the setup waits for the lock, as the timeout promises)
    assert failures == []


# -- the other mappings -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("exc", "expected"),
    [
        (sqlite_error("database is locked", "SQLITE_BUSY"), errors.Throttled),
        (sqlite_error("database is locked", "SQLITE_BUSY_SNAPSHOT"), errors.Throttled),
        (sqlite_error("database table is locked", "SQLITE_LOCKED"), errors.Throttled),
        (sqlite_error("database is locked"), errors.Throttled),  # no code: the message decides
        (sqlite_error("database table is locked: notes"), errors.Throttled),
        (sqlite_error("database or disk is full", "SQLITE_FULL"), errors.DependencyUnavailable),
        (sqlite_error("disk I/O error", "SQLITE_IOERR_WRITE"), errors.DependencyUnavailable),
        (sqlite_error("disk I/O error"), errors.DependencyUnavailable),
        (sqlite_error("out of memory", "SQLITE_NOMEM"), errors.DependencyUnavailable),
        (sqlite_error("interrupted", "SQLITE_INTERRUPT"), errors.DependencyUnavailable),
        (
            sqlite_error("attempt to write a readonly database", "SQLITE_READONLY_RECOVERY"),
            errors.DependencyUnavailable,
        ),
        (
            sqlite_error("attempt to write a readonly database", "SQLITE_READONLY"),
            errors.DependencyFailed,
        ),
        (sqlite_error("unable to open database file", "SQLITE_CANTOPEN"), errors.DependencyFailed),
        (sqlite_error("unable to open database file"), errors.DependencyFailed),
        (
            sqlite_error("database disk image is malformed", "SQLITE_CORRUPT", sqlite3.DatabaseError),
            errors.DependencyFailed,
        ),
        (
            sqlite_error("file is not a database", "SQLITE_NOTADB", sqlite3.DatabaseError),
            errors.DependencyFailed,
        ),
        (
            sqlite_error("UNIQUE constraint failed", "SQLITE_CONSTRAINT_UNIQUE", sqlite3.IntegrityError),
            errors.DependencyFailed,
        ),
        (sqlite_error("no such table: x", "SQLITE_ERROR"), errors.DependencyFailed),
        (sqlite3.ProgrammingError("Cannot operate on a closed database."), errors.DependencyFailed),
        (sqlite3.InterfaceError("Error binding parameter 1"), errors.DependencyFailed),
    ],
    ids=lambda value: str(value)[:30] if isinstance(value, Exception) else value.__name__,
)
def test_translate_maps_each_kind_of_sqlite_error(
    exc: sqlite3.Error, expected: type[errors.RaglineError]
) -> None:
    translated = translate(exc)
    assert type(translated) is expected
    assert isinstance(translated, errors.RETRYABLE) == (
        expected in (errors.Throttled, errors.DependencyUnavailable)
    )
    assert translated.message.startswith("The embedded database")  # SQLite's text stays on the cause
    assert set(translated.details) == {"sqlite_error"}


def test_a_readonly_database_is_a_dependency_failure(tmp_path: Path, notes: Notes) -> None:
    notes.add("n1", "x")
    reader = sqlite3.connect(f"file:{tmp_path / 'db' / 'notes.db'}?mode=ro", uri=True)
    with pytest.raises(sqlite3.OperationalError) as raw:
        reader.execute("DELETE FROM notes")
    reader.close()
    translated = translate(raw.value)
    assert type(translated) is errors.DependencyFailed
    assert translated.details["sqlite_error"].startswith("SQLITE_READONLY")


def test_an_unexpected_integrity_error_is_a_dependency_failure(notes: Notes) -> None:
    notes.add("n1", "first")
    with pytest.raises(errors.DependencyFailed) as caught:
        notes.add("n1", "again")
    assert caught.value.code == "dependency_failed"
    assert not isinstance(caught.value, errors.RETRYABLE)
    assert isinstance(caught.value.__cause__, sqlite3.IntegrityError)
    with pytest.raises(errors.Conflict):  # an adapter's own handling still sees a Ragline error
        notes.add_or_conflict("n1", "again")


def test_sql_errors_and_a_closed_connection_are_dependency_failures(notes: Notes) -> None:
    with pytest.raises(errors.DependencyFailed) as caught:
        notes.raw_sql("SELECT * FROM nowhere")
    assert caught.value.details == {"sqlite_error": "SQLITE_ERROR"}
    notes.conn.close()
    with pytest.raises(errors.DependencyFailed) as closed:
        notes.add("n2", "x")
    assert isinstance(closed.value.__cause__, sqlite3.ProgrammingError)


# -- opening ----------------------------------------------------------------------------------------


def test_a_folder_that_cannot_be_created_is_a_configuration_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a folder")
    path = tmp_path / "file" / "sub" / "notes.db"
    with pytest.raises(errors.ConfigurationError) as caught:
        open_sqlite(path, SCHEMA)
    assert caught.value.details["path"] == str(path.parent)
    assert "/tmp" in caught.value.message  # the Lambda hint
    assert isinstance(caught.value.__cause__, OSError)


@pytest.mark.parametrize(
    ("make", "code"),
    [
        (lambda p: p.mkdir(), "SQLITE_CANTOPEN"),  # a folder where the file should be
        (lambda p: p.write_bytes(b"not sqlite " * 500), "SQLITE_NOTADB"),
    ],
    ids=["folder", "not-a-database"],
)
def test_a_path_that_cannot_hold_a_database_is_a_configuration_error(
    tmp_path: Path, make: object, code: str
) -> None:
    path = tmp_path / "notes.db"
    make(path)  # type: ignore[operator]
    with pytest.raises(errors.ConfigurationError) as caught:
        open_sqlite(path, SCHEMA)
    assert caught.value.details["path"] == str(path)
    assert caught.value.details["sqlite_error"].startswith(code)
    assert isinstance(caught.value.__cause__, sqlite3.Error)


def test_a_bad_schema_is_a_dependency_failure_and_closes_the_connection(tmp_path: Path) -> None:
    with pytest.raises(errors.DependencyFailed) as caught:
        open_sqlite(tmp_path / "notes.db", "CREATE TABLE broken (")
    assert caught.value.details["path"] == str(tmp_path / "notes.db")


# -- what passes through, and what the decorator keeps ----------------------------------------------


def test_ragline_errors_pass_through_unchanged(notes: Notes) -> None:
    with pytest.raises(errors.NotFound) as caught:
        notes.refuse()
    assert caught.value.details == {"note_id": "x"}
    assert caught.value.__cause__ is None
    original = errors.Throttled("slow down")
    with pytest.raises(errors.Throttled) as same:
        notes.fail_with(original)
    assert same.value is original


def test_other_exceptions_pass_through_unchanged(notes: Notes) -> None:
    with pytest.raises(KeyError):
        notes.fail_with(KeyError("k"))


def test_every_kind_of_public_member_is_mapped(tmp_path: Path, notes: Notes) -> None:
    notes.add("a", "first")
    bodies = notes.bodies()
    assert next(bodies) == "first"
    with pytest.raises(errors.DependencyFailed):  # raised while the generator runs, not when called
        next(bodies)
    with pytest.raises(errors.DependencyFailed):
        _ = notes.count
    with pytest.raises(errors.DependencyFailed):
        Notes.probe(tmp_path / "other.db")
    with pytest.raises(errors.Throttled):
        Notes.named()
    with pytest.raises(sqlite3.OperationalError):  # private helpers are the public ones' business
        notes._private()


def test_names_signatures_and_wrapped_are_preserved() -> None:
    add = Notes.__dict__["add"]
    assert add.__name__ == "add"
    assert add.__qualname__ == "Notes.add"
    assert add.__doc__ == "Insert one note."
    assert inspect.signature(add) == inspect.signature(add.__wrapped__)
    assert "body" in inspect.signature(Notes.add).parameters
    assert inspect.isgeneratorfunction(Notes.__dict__["bodies"].__wrapped__)
    assert isinstance(Notes.__dict__["count"], property)
    assert isinstance(Notes.__dict__["probe"], staticmethod)
    assert isinstance(Notes.__dict__["named"], classmethod)
    assert Notes.kind == "notes"
    assert not hasattr(Notes.__dict__["_private"], "__wrapped__")
    assert not hasattr(Notes.__init__, "__wrapped__")


def test_applying_it_twice_wraps_once() -> None:
    once = Notes.__dict__["add"]
    assert maps_sqlite_errors(Notes) is Notes
    assert Notes.__dict__["add"] is once
    assert once.__wrapped__.__name__ == "add"
    assert not hasattr(once.__wrapped__, "__wrapped__")


def test_a_cached_property_still_caches(tmp_path: Path) -> None:
    calls = []

    @maps_sqlite_errors
    class Cached:
        @functools.cached_property
        def value(self) -> int:
            calls.append(1)
            return 7

        @functools.cached_property
        def broken(self) -> int:
            raise sqlite3.OperationalError("database is locked")

    cached = Cached()
    assert (cached.value, cached.value, len(calls)) == (7, 7, 1)
    with pytest.raises(errors.Throttled):
        _ = cached.broken


def test_every_embedded_adapter_maps_a_locked_database_into_the_error_tree(tmp_path: Path) -> None:
    """The adapters wear the decorator: a busy file is 503-able ``Throttled``, never a raw sqlite3 error."""
    from ragline.adapters.embedded.documents import SqliteDocumentRegistry
    from ragline.adapters.embedded.ledger import SqliteUsageLedger
    from ragline.adapters.embedded.tenants import SqliteTenantRegistry
    from ragline.domain.models import RunUsage
    from ragline.domain.tenancy import Tenant

    path = tmp_path / "shared.sqlite"
    tenants, documents, ledger = (
        SqliteTenantRegistry(path),
        SqliteDocumentRegistry(path),
        SqliteUsageLedger(path),
    )
    tenants.list_namespaces("acme"), documents.list("acme", "docs"), ledger.period_runs("acme", "2026-01")
    for adapter in (tenants, documents, ledger):  # a short busy timeout, so the test does not wait 5 s
        adapter._db().execute("PRAGMA busy_timeout=50")
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        for write in (
            lambda: tenants.create_tenant(Tenant(tenant_id="acme")),
            lambda: documents.claim("acme", "docs", "a.txt", "01"),
            lambda: ledger.commit("acme", "run-1", RunUsage(), None, None, "fp"),
        ):
            with pytest.raises(errors.Throttled):
                write()
    finally:
        holder.execute("ROLLBACK")
        holder.close()
