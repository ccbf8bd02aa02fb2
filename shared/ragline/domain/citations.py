"""Citations: the answer cites chunks with ``<citation ids="docId#3,docId#4"/>``.

After generation every cited id is checked against the chunks retrieved in this run; unknown ids are
removed (a marker left with none is dropped) and reported, so a client never renders a dead link.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

CITATION = re.compile(r'\s?<citation\s+ids="([^"]*)"\s*/?>(?:\s*</citation\s*>)?')
"""A marker as models write it: any whitespace before ``ids`` and in the closing tag (the CLI's
streaming renderer, :mod:`ragline.cli.citation_marks`, reads the same shapes)."""


def format_citation(ids: Collection[str]) -> str:
    return f'<citation ids="{",".join(ids)}"/>'


@dataclass(frozen=True)
class VerifiedAnswer:
    text: str
    cited: list[str]
    """Known ids in order of first citation."""
    invented: list[str]
    """Ids the model cited that this run never retrieved (removed from ``text``)."""


def verify_citations(answer: str, retrieved: Collection[str]) -> VerifiedAnswer:
    cited: dict[str, None] = {}
    invented: dict[str, None] = {}

    def keep_known(match: re.Match[str]) -> str:
        ids = [i.strip() for i in match.group(1).split(",") if i.strip()]
        known = [i for i in ids if i in retrieved]
        for i in ids:
            (cited if i in retrieved else invented).setdefault(i, None)
        if not known:
            return ""
        return " " + format_citation(known) if match.group(0).startswith(" ") else format_citation(known)

    text = CITATION.sub(keep_known, answer)
    return VerifiedAnswer(text=text, cited=list(cited), invented=list(invented))
