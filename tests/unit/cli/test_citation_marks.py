"""The CLI's streamed citations (issue 30 #5): markers cut anywhere render as [n], once, in order."""

from __future__ import annotations

import io
import itertools

from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from ragline.agents.events import AnswerDelta, RunFinished, Sources, Usage, Warning
from ragline.cli import output
from ragline.cli.citation_marks import MAX_HELD_CHARS, CitationMarks
from ragline.domain.api import ChunkView

ANSWER = (
    'Oil the chain weekly <citation ids="guide#0,intervals#0"/>. Keep x<y and <b>bold</b>'
    ' <citation ids="intervals#0"></citation> and <citation ids=" guide#3 "/>.'
)
RENDERED = "Oil the chain weekly [1][2]. Keep x<y and <b>bold</b> [2] and [3]."


def render(pieces: list[str]) -> tuple[str, dict[str, int]]:
    marks = CitationMarks()
    return "".join(marks.feed(p) for p in pieces) + marks.flush(), marks.numbers


def test_markers_render_as_numbers_in_the_order_first_cited() -> None:
    text, numbers = render([ANSWER])
    assert text == RENDERED
    assert numbers == {"guide#0": 1, "intervals#0": 2, "guide#3": 3}


@given(st.lists(st.integers(min_value=0, max_value=len(ANSWER)), max_size=12))
def test_any_cut_of_the_stream_renders_the_same(cuts: list[int]) -> None:
    bounds = [0, *sorted(cuts), len(ANSWER)]
    assert render([ANSWER[a:b] for a, b in itertools.pairwise(bounds)])[0] == RENDERED


def test_text_is_shown_at_once_and_only_a_possible_marker_is_held() -> None:
    marks = CitationMarks()
    assert marks.feed("Oil it <cit") == "Oil it "
    assert marks.feed('ation ids="a#1"') == ""
    assert marks.feed("/> weekly <citations") == "[1] weekly <citations"  # not a marker: shown
    assert marks.feed(" x<") == " x"
    assert marks.feed("3") == "<3"


def test_an_unclosed_marker_is_released_as_text_past_the_cap() -> None:
    marks = CitationMarks()
    opened = '<citation ids="'
    opened += "a" * (MAX_HELD_CHARS - len(opened))
    assert marks.feed(opened) == ""  # up to the cap it may still close
    assert marks.feed("a") == opened + "a"  # past it: text, nothing held
    assert marks.flush() == ""


def test_an_unfinished_marker_at_the_end_is_text() -> None:
    marks = CitationMarks()
    assert marks.feed("end <citation ids=") == "end "
    assert marks.flush() == "<citation ids="


def run_cli(events: list[object]) -> str:
    buffer = io.StringIO()
    saved, output.console = output.console, Console(file=buffer, width=200)
    try:
        output.stream_chat(events, "scripted")  # type: ignore[arg-type]
    finally:
        output.console = saved
    return buffer.getvalue()


def chunk(cid: str, text: str) -> ChunkView:
    doc, seq = cid.split("#")
    view = {"id": cid, "documentId": doc, "filename": "f.txt", "text": text, "score": 1.0}
    return ChunkView.model_validate({**view, "namespace": "ns", "sequenceNumber": int(seq)})


def test_the_cli_streams_once_and_lists_sources_under_the_streamed_numbers() -> None:
    answer = 'Chains need oil <citation ids="b#1"/> and wax <citation ids="a#0"/>.'
    final = RunFinished(run_id="r", exit_reason="answered", answer=answer, usage=Usage())
    out = run_cli([
        AnswerDelta(text='Chains need oil <citation ids="b#1"/> and w'),
        AnswerDelta(text='ax <citation ids="a#0,x#9"/>.'),
        Warning(code="unknown_citations", message="removed", details={"ids": ["x#9"]}),
        Sources(chunks=[chunk("a#0", "wax it"), chunk("b#1", "oil it")]),
        final,
    ])  # fmt: skip
    assert "Chains need oil [1] and wax [2][3]." in out and out.count("Chains need oil") == 1
    sources = out.split("Sources\n", 1)[1]
    assert "[1] b#1 — f.txt: oil it" in sources and "[2] a#0 — f.txt: wax it" in sources
    assert "[3] x#9 — not retrieved in this run: citation removed" in sources
    assert "<citation" not in out


def test_a_replayed_answer_with_no_stream_is_shown_once_rendered() -> None:
    answer = 'Oil it <citation ids="a#0"/>.'
    final = RunFinished(run_id="r", exit_reason="answered", answer=answer, usage=Usage(), replayed=True)
    out = run_cli([Sources(chunks=[chunk("a#0", "oil")]), final])
    assert out.count("Oil it [1].") == 1 and "[1] a#0" in out.split("Sources\n", 1)[1]
