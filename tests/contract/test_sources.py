"""The Source contract on every connector, each against its local server."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.contract.source_contract import HistoryContract, SourceContract
from tests.support.source_world import SourceWorld
from tests.support.web_site import WebWorld

pytestmark = pytest.mark.contract


class TestWebSource(SourceContract, HistoryContract):
    @pytest.fixture
    def world(self) -> Iterator[WebWorld]:
        w = WebWorld()
        yield w
        w.close()

    @pytest.fixture
    def settings(self, world: SourceWorld) -> dict[str, Any]:
        assert isinstance(world, WebWorld)
        return world.settings()
