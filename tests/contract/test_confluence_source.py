"""The Source contract, the history contract and the permissions contract on the Confluence Cloud
connector, against a local server speaking Confluence's documented REST shapes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.contract.source_contract import HistoryContract, PermissionsContract, SourceContract
from tests.support.confluence_server import ConfluenceWorld
from tests.support.source_world import SourceWorld

pytestmark = pytest.mark.contract


class TestConfluenceSource(SourceContract, HistoryContract, PermissionsContract):
    @pytest.fixture
    def world(self) -> Iterator[ConfluenceWorld]:
        w = ConfluenceWorld()
        yield w
        w.close()

    @pytest.fixture
    def settings(self, world: SourceWorld) -> dict[str, Any]:
        assert isinstance(world, ConfluenceWorld)
        return world.settings()
