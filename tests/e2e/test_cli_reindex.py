"""``ragline namespaces reindex`` (the CLI's in-process rebuild) waits for a document being written
when the rebuild began, instead of failing on it: the step runs again once that write settles."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragline.cli.reindex import run_reindex
from ragline.config import Settings
from ragline.domain.models import TenantScope
from ragline.services.namespaces import new_namespace
from ragline.wiring import Container
from tests.support.fakes import BowEmbedder

pytestmark = pytest.mark.e2e


def test_the_cli_reindex_waits_for_a_write_in_flight_then_switches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a namespace with two documents, and a write of one claimed (its worker at work) just now
    settings = Settings(home=tmp_path)
    embedder = BowEmbedder()
    c = Container(settings, embedder=embedder, tokenizer=embedder)
    c.tenancy.create_tenant("acme")
    c.registry.create_namespace(new_namespace("acme", "docs"))
    scope = TenantScope(tenant_id="acme", namespace_id="docs")
    for name in ("a.txt", "b.txt"):
        c.ingest.ingest(scope, filename=name, data=f"{name} says alpha bravo charlie".encode())
    claim = c.documents.claim("acme", "docs", "b.txt", None, source="b.txt", lease_seconds=330)
    assert claim.granted
    lines: list[str] = []

    def sleep(_: float) -> None:  # while the CLI waits, the write settles (it failed, say)
        c.documents.fail(claim.record, "dependency_failed", "the worker gave up")

    # When the CLI rebuilds it (with the same test embedder)
    import ragline.cli.reindex as cli

    monkeypatch.setattr(
        cli, "Container", lambda s, **kw: Container(s, embedder=embedder, tokenizer=embedder, **kw)
    )
    code = run_reindex(
        settings, "acme", "docs", model=None, chunk_tokens=8, overlap_tokens=0, keep_old_for=0,
        echo=lines.append, sleep=sleep,
    )  # fmt: skip
    # Then it said it waited, and the new generation serves both documents
    assert code == 0, lines
    assert any(line.startswith("waiting: b.txt") for line in lines), lines
    ns = c.registry.get_namespace("acme", "docs")
    assert ns.settings.generation == 2 and ns.settings.chunking.chunk_tokens == 8
    c.close()


def test_the_cli_switches_the_chunking_strategy_and_refuses_an_unknown_one_without_a_traceback(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    from tests.e2e.test_cli import cli, ingested

    fixtures = Path(__file__).parents[1] / "fixtures" / "scans"
    home = ingested(tmp_path_factory, [fixtures / "handbook.txt"], "docs")
    code, out = cli("namespaces", "reindex", "docs", "--chunking", "paragraphs", "--home", str(home))
    assert code == 2 and "invalid_request" in out and "chunking" in out and "Traceback" not in out
    code, out = cli(
        "namespaces", "reindex", "docs", "--chunking", "hierarchical", "--parent-tokens", "1000",
        "--keep-old-for", "0", "--home", str(home),
    )  # fmt: skip
    assert code == 0, out
    ns = Container(Settings(home=home)).registry.get_namespace("local", "docs")
    assert (ns.settings.generation, ns.settings.chunking.strategy, ns.settings.chunking.parent_tokens) == (
        2, "hierarchical", 1000,
    )  # fmt: skip
