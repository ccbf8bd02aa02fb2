"""The rehearsal's fixtures (defined in :mod:`tests.rehearsal.fixtures`, with the worlds they build)."""

from tests.rehearsal.fixtures import artifacts, world

__all__ = ["artifacts", "world"]
