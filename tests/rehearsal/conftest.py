"""The rehearsal's fixtures (defined with the world they build, :mod:`tests.rehearsal.world`)."""

from tests.rehearsal.world import artifacts, world

__all__ = ["artifacts", "world"]
