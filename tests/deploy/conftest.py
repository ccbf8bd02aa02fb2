from __future__ import annotations

from typing import Any

import pytest

from tests.deploy.translated import ROOT, translate


@pytest.fixture(scope="session")
def translated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """template.yaml translated by SAM (offline), as deployed."""
    return translate(ROOT / "template.yaml", tmp_path_factory.mktemp("sam") / "translated.json")
