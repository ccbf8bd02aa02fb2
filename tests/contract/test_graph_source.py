"""The Source contract, the history contract and the permissions contract on the Microsoft Graph
connector, against the local Graph of :mod:`tests.support.graph_server` (one folder of a SharePoint
drive, with permissions, next to a folder the source must never name)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.contract.source_contract import HistoryContract, PermissionsContract, SourceContract
from tests.support.graph_server import GraphWorld
from tests.support.source_world import SourceWorld

pytestmark = pytest.mark.contract


class TestGraphSource(SourceContract, HistoryContract, PermissionsContract):
    @pytest.fixture
    def world(self) -> Iterator[GraphWorld]:
        w = GraphWorld()
        yield w
        w.close()

    @pytest.fixture
    def settings(self, world: SourceWorld) -> dict[str, Any]:
        assert isinstance(world, GraphWorld)
        return world.settings()
