"""The CLI's rendering of an answer's grounding: a summary line, then each checked sentence with its
label, its score and the ``[n]`` numbers its citations got in the streamed answer. A sentence is named
by its first words only: the answer itself is on screen once (issue 30 #5)."""

from __future__ import annotations

from collections import Counter

from rich.console import Console
from rich.markup import escape

from ragline.agents.events import Grounding

STYLE = {"supported": "green", "contradicted": "bold red", "not_enough_info": "yellow"}
MARK = {"supported": "✔", "contradicted": "✘", "not_enough_info": "?"}
EXCERPT_WORDS = 5


def print_grounding(console: Console, grounding: Grounding | None, numbers: dict[str, int]) -> None:
    if grounding is None or grounding.status == "off":
        return
    if grounding.status != "scored":
        why = {"no_citations": "no cited sentence to check", "unavailable": "unavailable (see warning)"}
        console.print(escape(f"Grounding ({grounding.scorer}): {why[grounding.status]}"), style="dim")
        return
    counts: Counter[str] = Counter(s.label for s in grounding.sentences)
    tally = " · ".join(f"{counts[label]} {label.replace('_', ' ')}" for label in STYLE if counts[label])
    extra = f" · {grounding.unchecked} unchecked" if grounding.unchecked else ""
    score = f"{grounding.score:.2f}" if grounding.score is not None else "-"
    console.print(f"[bold]Grounding[/bold] ({escape(grounding.scorer)}): score {score} · {tally}{extra}")
    for s in grounding.sentences:
        cited = "".join(f"[{numbers[i]}]" for i in s.citations if i in numbers)
        words = s.text.split()
        text = " ".join(words[:EXCERPT_WORDS]) + ("…" if len(words) > EXCERPT_WORDS else "")
        line = f"  {MARK[s.label]} {s.label.replace('_', ' ')} {s.score:.2f} {cited}: {text}"
        console.print(escape(line), style=STYLE[s.label], highlight=False)
