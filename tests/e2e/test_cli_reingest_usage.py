"""``ragline ingest`` of the same folder twice: the second run reports every file unchanged and adds
nothing to the tenant's ingestion usage; a file edited since is indexed and charged (embedded
backend, real parsers and the local embedder)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragline.cli.app import app
from ragline.config import Settings
from ragline.domain.billing import current_period
from ragline.domain.models import IngestUsage
from ragline.wiring import Container

pytestmark = pytest.mark.e2e
SAMPLES = Path(__file__).parents[2] / "samples" / "northwind"
runner = CliRunner()


def ingest(folder: Path, home: Path) -> str:
    result = runner.invoke(
        app, ["ingest", str(folder), "-n", "docs", "--create", "--home", str(home)], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    return result.output


def ingestion(home: Path) -> IngestUsage:
    return Container(Settings(home=home)).ledger.period_ingestion("local", current_period())


def test_the_same_folder_ingested_twice_is_charged_once(tmp_path: Path) -> None:
    # Given a folder ingested once
    folder, home = tmp_path / "docs", tmp_path / "home"
    folder.mkdir()
    for name in ("faq.txt", "returns-policy.md"):
        shutil.copy(SAMPLES / name, folder / name)
    ingest(folder, home)
    once = ingestion(home)
    assert once.documents == 2 and once.embedded_tokens > 0

    # When it is ingested again, unchanged
    out = ingest(folder, home)

    # Then every file is reported unchanged and the usage is the same
    assert out.count("unchanged") == 2 and "indexed" not in out
    assert ingestion(home) == once

    # And a file edited since is indexed, and charged
    with (folder / "faq.txt").open("a") as f:
        f.write("\nQ: Do you sell gift cards? A: Yes, in every store.\n")
    out = ingest(folder, home)
    assert out.count("unchanged") == 1 and out.count("indexed") == 1
    after = ingestion(home)
    assert after.documents == 3 and after.embedded_tokens > once.embedded_tokens
