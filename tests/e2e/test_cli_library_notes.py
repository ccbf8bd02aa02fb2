"""A PDF pypdf reads only by recovering: the ingest says so beside the file, never as a raw line above."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.unit.documents.test_library_logs import shifted_startxref

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]


def ingest(folder: Path, home: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(ROOT / ".venv" / "bin" / "ragline"), "ingest", str(folder), "-n", "docs", "--create",
         "--home", str(home), *extra],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


def test_what_pypdf_recovered_from_is_a_note_of_its_file_in_the_table_and_the_json(tmp_path: Path) -> None:
    # Given a folder with a PDF whose startxref points a few bytes off (pypdf recovers, and logs)
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "manual.pdf").write_bytes(shifted_startxref())
    # When it is ingested, as a table and as JSON
    table = ingest(folder, tmp_path / "home")
    as_json = ingest(folder, tmp_path / "home2", "--json")
    # Then the file is indexed, its note stands in its row, and nothing raw reached stderr
    assert table.returncode == 0, table.stderr
    assert "pypdf: incorrect" in table.stdout and "startxref" not in table.stderr
    assert as_json.returncode == 0 and "startxref" not in as_json.stderr
    (file,) = json.loads(as_json.stdout)["files"]
    assert file["status"] == "indexed"
    assert any(note.startswith("pypdf: incorrect startxref pointer") for note in file["notes"]), file
