"""No core file grows past 400 lines: a file that big holds more than one concern (issue 44)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 400


def test_no_core_or_handler_file_is_over_400_lines() -> None:
    files = [*(ROOT / "shared" / "ragline").rglob("*.py"), *(ROOT / "functions").rglob("*.py")]
    assert len(files) > 300
    over = {str(f.relative_to(ROOT)): n for f in files if (n := len(f.read_text().splitlines())) > LIMIT}
    assert over == {}, f"split these by concern (docs/architecture.md): {over}"
