"""Word smoothing: text events re-cut into whole words, other events in place, the text unchanged."""

from __future__ import annotations

import re
from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragline.agents.events import AnswerDelta, RunEvent, ToolFinished, ToolStarted, Warning
from ragline.agents.smoothing import MAX_HELD_CHARS, smooth_words

pytestmark = pytest.mark.unit

WORD = re.compile(r"\S+\s+")
ANSWER = 'Bicycles can be returned within 30 days <citation ids="returns-policy.md#0"/> of delivery.'


def deltas(*texts: str) -> list[RunEvent]:
    return [AnswerDelta(text=t) for t in texts]


def texts(events: list[RunEvent]) -> list[str]:
    return [e.text for e in events if isinstance(e, AnswerDelta)]


def joined(events: list[RunEvent]) -> str:
    return "".join(texts(events))


def test_pieces_cutting_words_anywhere_come_out_one_whole_word_each() -> None:
    # Given a model's pieces that cut words in the middle
    pieces = deltas("Bic", "ycles can be ret", "urned within 3", "0 days.")

    # When smoothed
    out = list(smooth_words(pieces))

    # Then each text event is one word with its trailing space, and the last word ends the stream
    assert texts(out) == ["Bicycles ", "can ", "be ", "returned ", "within ", "30 ", "days."]


def test_another_event_first_releases_the_held_text_then_passes_unchanged() -> None:
    # Given text ending in a partial word, a tool step, then more text
    start = ToolStarted(call_id="c1", tool="search", label="Searching")
    end = ToolFinished(call_id="c1", tool="search", label="Searching", hits=3)
    events = [*deltas("Let me che"), start, end, *deltas("ck. Found ", "it")]

    # When smoothed
    out = list(smooth_words(events))

    # Then the held "che" goes out (as one event) before the tool events, which are the same objects
    assert out == [*deltas("Let ", "me ", "che"), start, end, *deltas("ck. ", "Found ", "it")]
    assert out[3] is start and out[4] is end


def test_whitespace_is_kept_leading_whitespace_rides_with_the_first_word() -> None:
    out = list(smooth_words(deltas("  Two", " spaces\n\nand ", "a", " tab\tend ")))
    assert texts(out) == ["  Two ", "spaces\n\n", "and ", "a ", "tab\t", "end "]


def test_a_word_without_whitespace_is_released_in_pieces_past_the_bound() -> None:
    # Given a "word" of 450 characters streamed 7 at a time, then a space
    long = "x" * 450
    pieces = deltas(*(long[i : i + 7] for i in range(0, len(long), 7)), " done")

    # When smoothed
    out = texts(list(smooth_words(pieces)))

    # Then no event is longer than the bound plus one streamed piece, and nothing is lost
    assert "".join(out) == long + " done"
    assert all(len(t) <= MAX_HELD_CHARS + 7 for t in out)
    assert out[:2] == ["x" * MAX_HELD_CHARS, "x" * MAX_HELD_CHARS]


def test_an_empty_stream_and_empty_text_events_yield_no_empty_text() -> None:
    warning = Warning(code="w", message="m")
    assert list(smooth_words([])) == []
    assert list(smooth_words([*deltas("", ""), warning, *deltas("")])) == [warning]


def test_a_citation_marker_survives_in_the_joined_text() -> None:
    out = list(smooth_words(deltas(*ANSWER)))  # one character per event
    assert joined(out) == ANSWER


OTHERS = st.sampled_from(
    [
        ToolStarted(call_id="c", tool="expand", label="Reading"),
        ToolFinished(call_id="c", tool="expand", label="Reading", hits=10),
        Warning(code="w", message="m"),
    ]
)
TEXT = st.text(alphabet=st.sampled_from([*'ab<>"=#/', " ", "\n", "\t", "\u00a0", "é"]), max_size=400)


@st.composite
def split_stream(draw: st.DrawFn) -> tuple[str, list[RunEvent]]:
    """Some text cut at random places, with other events at random cut points."""
    text = draw(st.one_of(TEXT, st.just(ANSWER), st.just("y" * 500 + " z")))
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=30)))
    bounds = [0, *cuts, len(text)]
    events: list[RunEvent] = []
    for lo, hi in pairwise(bounds):
        if draw(st.booleans()):
            events.append(draw(OTHERS))
        events.append(AnswerDelta(text=text[lo:hi]))
    return text, events


@given(split_stream())
def test_smoothing_keeps_the_text_and_the_other_events_whatever_the_cuts(
    case: tuple[str, list[RunEvent]],
) -> None:
    text, events = case
    out = list(smooth_words(events))

    # The text is the same, and the other events come out unchanged, in order
    assert joined(out) == text
    assert [e for e in out if not isinstance(e, AnswerDelta)] == [
        e for e in events if not isinstance(e, AnswerDelta)
    ]
    # No empty text event, none over the bound unless it is whole words
    pieces = texts(out)
    assert all(pieces)
    assert all(len(p) <= MAX_HELD_CHARS or WORD.fullmatch(p.lstrip()) for p in pieces)
    # Between two other events (and at the end), only the last text event may be a partial word
    run: list[str] = []
    for event in [*out, None]:
        if isinstance(event, AnswerDelta):
            run.append(event.text)
            continue
        for piece in run[:-1]:
            assert WORD.fullmatch(piece.lstrip()) or len(piece) == MAX_HELD_CHARS, piece
        run = []
