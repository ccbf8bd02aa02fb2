"""docs/architecture.md's diagram is the code's: a stale diagram or an undescribed room fails here."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("architecture", ROOT / "scripts" / "architecture.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


architecture = _generator()


def test_the_committed_diagram_is_the_one_the_code_draws() -> None:
    assert architecture.main(["--doc", str(ROOT / "docs" / "architecture.md")]) == 0


def test_a_diagram_missing_an_import_is_stale(tmp_path: Path) -> None:
    # Given the document with one arrow of the diagram taken out
    text = (ROOT / "docs" / "architecture.md").read_text()
    arrow = next(line for line in text.splitlines() if " --> " in line)
    stale = tmp_path / "architecture.md"
    stale.write_text(text.replace(arrow + "\n", "", 1))
    # Then the check fails, and --write puts the arrow back
    assert architecture.main(["--doc", str(stale)]) == 1
    assert architecture.main(["--doc", str(stale), "--write"]) == 0
    assert stale.read_text() == text


def test_every_room_needs_its_paragraph(tmp_path: Path) -> None:
    text = (ROOT / "docs" / "architecture.md").read_text()
    without = tmp_path / "architecture.md"
    without.write_text(text.replace("### `ragline.services`", "### services"))
    assert architecture.main(["--doc", str(without)]) == 1


def test_a_module_in_no_room_is_refused_not_drawn() -> None:
    assert architecture.room_of("ragline.adapters.opensearch.store") == "ragline.adapters.opensearch"
    assert architecture.room_of("ragline.adapters.rerank") == "ragline.adapters"
    assert architecture.room_of("functions.chat.app") == "functions"
    with pytest.raises(architecture.Unplaced):
        architecture.room_of("ragline.somewhere_new")


def test_the_core_imports_no_adapter_and_the_domain_only_errors() -> None:
    edges = architecture.room_imports()
    core = architecture.LAYERS["core"]
    adapters = architecture.LAYERS["adapters"]
    assert not [(a, b) for a, b in edges if a in core and b in adapters]
    assert {b for a, b in edges if a == "ragline.domain"} <= {"ragline.errors"}
