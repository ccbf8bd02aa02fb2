"""A cited passage the offline grounding scorers' unit tests check claims against."""

from __future__ import annotations

from ragline.domain.grounding import Passage

SOURCE = Passage(
    "policy#0",
    (
        "Returns are accepted within thirty days of purchase.",
        "Used bicycles can be returned if they are undamaged.",
        "Aspirin increases the risk of bleeding.",
    ),
)
