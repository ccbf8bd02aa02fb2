"""The streaming markup filter: text-form tool calls are recognised, tool markup never streams.

Weak open models write tool calls as text (tags, fences, bare JSON) or echo tool responses back.
:class:`MarkupFilter` records the calls, drops the markup and streams everything else unchanged, as
early as it can, whatever the split of the text into deltas, in linear time.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragline.agents.text_calls import MarkupFilter, TextCall
from tests.conftest import examples_at_scale

pytestmark = pytest.mark.unit

TOOLS = ("search", "expand")
Result = tuple[str, list[TextCall], int]


def run(parts: Iterable[str], tools: Iterable[str] = TOOLS, **kw: int) -> Result:
    """Feed the parts as deltas of one turn; return the streamed text, the calls and removed."""
    f = MarkupFilter(list(tools), **kw)
    out = "".join(f.feed(p) for p in parts) + f.close()
    return out, f.calls, f.removed


def call(name: str, **args: Any) -> TextCall:
    return TextCall(name=name, arguments=json.dumps(args))


SEARCH = '{"name": "search", "arguments": {"query": "bees"}}'
EXPAND = '{"name": "expand", "arguments": {"documentId": "d1", "sequenceNumber": 3}}'
BEES = call("search", query="bees")
D1_3 = call("expand", documentId="d1", sequenceNumber=3)


# -- formats ----------------------------------------------------------------------------------------

FORMATS = {
    "hermes tool_call": (f"<tool_call>{SEARCH}</tool_call>", [BEES]),
    "tool_call on lines": (f"<tool_call>\n{SEARCH}\n</tool_call>", [BEES]),
    "parameters key": (
        '<tool_call>{"name": "search", "parameters": {"query": "bees"}}</tool_call>',
        [BEES],
    ),
    "arguments as JSON string": (
        '<tool_call>{"name": "search", "arguments": "{\\"query\\": \\"bees\\"}"}</tool_call>',
        [BEES],
    ),
    "two tool_calls": (f"<tool_call>{SEARCH}</tool_call>\n<tool_call>{EXPAND}</tool_call>", [BEES, D1_3]),
    "tool_call with a list": (f"<tool_call>[{SEARCH}, {EXPAND}]</tool_call>", [BEES, D1_3]),
    "tools tag": (f"<tools>{SEARCH}</tools>", [BEES]),
    "function_call tag": (f"<function_call>{SEARCH}</function_call>", [BEES]),
    "pipe token": (f"<|tool_call|>{SEARCH}<|/tool_call|>", [BEES]),
    "pipe start/end tokens": (f"<|tool_call_start|>{SEARCH}<|tool_call_end|>", [BEES]),
    "extra closing brace": (f"<tool_call>{SEARCH}}}</tool_call>", [BEES]),
    "closing tag omitted before the next": (
        f"<tool_call>{SEARCH}\n<tool_call>{EXPAND}</tool_call>",
        [BEES, D1_3],
    ),
    "llama function=": ('<function=search>{"query": "bees"}</function>', [BEES]),
    "function= with parameter elements": (
        "<function=search>\n<parameter=query>\nbees\n</parameter>\n</function>",
        [BEES],
    ),
    "qwen3-coder in tool_call": (
        "<tool_call>\n<function=expand>\n<parameter=documentId>d1</parameter>\n"
        "<parameter=sequenceNumber>3</parameter>\n</function>\n</tool_call>",
        [D1_3],
    ),
    "python-style in tool_call": ('<tool_call>search(query="bees")</tool_call>', [BEES]),
    "json fence": (f"```json\n{SEARCH}\n```", [BEES]),
    "tool_call fence": (f"```tool_call\n{SEARCH}\n```", [BEES]),
    "plain fence": (f"```\n{SEARCH}\n```", [BEES]),
    "fence with a list": (f"```json\n[{SEARCH}, {EXPAND}]\n```", [BEES, D1_3]),
    "xml fence with a tag": (f"```xml\n<tool_call>\n{SEARCH}\n</tool_call>\n```", [BEES]),
    "bare object": (SEARCH, [BEES]),
    "bare object with spaces": (f"\n  {SEARCH}  \n", [BEES]),
    "bare list": (f"[{SEARCH}, {EXPAND}]", [BEES, D1_3]),
    "openai function shape": (
        '{"type": "function", "function": {"name": "search", "arguments": "{\\"query\\": \\"bees\\"}"}}',
        [BEES],
    ),
    "openai tool_calls shape": (
        '{"tool_calls": [{"id": "c1", "type": "function", "function": {"name": "search", '
        '"arguments": {"query": "bees"}}}]}',
        [BEES],
    ),
    "tool tag with attributes": (
        '<search query="bees" mode="keyword"/>',
        [call("search", query="bees", mode="keyword")],
    ),
    "tool tag with JSON body": ('<search>{"query": "bees"}</search>', [BEES]),
    "tool tag with plain text": (
        "<search>plain query text</search>",
        [call("search", query="plain query text")],
    ),
    "tool tag with int attribute": ('<expand documentId="d1" sequenceNumber="3"/>', [D1_3]),
    "tool tag with child elements": ("<search><query>bees</query></search>", [BEES]),
    "tool tag, single quotes, entity": (
        "<search query='bees &amp; wasps' />",
        [call("search", query="bees & wasps")],
    ),
}


@pytest.mark.parametrize(("text", "calls"), list(FORMATS.values()), ids=list(FORMATS))
def test_each_text_form_is_recognised_as_calls_and_not_streamed(text: str, calls: list[TextCall]) -> None:
    out, got, removed = run([text])
    assert (out.strip(), got, removed) == ("", calls, 0)
    assert out == "" or out.isspace()


def test_the_arguments_are_json_dumps_of_the_arguments_object() -> None:
    _, calls, _ = run(['<expand documentId="é" sequenceNumber="-12" score="1.5" code="007"/>'])
    assert calls == [
        TextCall(
            "expand", json.dumps({"documentId": "é", "sequenceNumber": -12, "score": "1.5", "code": "007"})
        )
    ]
    assert json.loads(calls[0].arguments)["sequenceNumber"] == -12


# -- prose --------------------------------------------------------------------------------------------

PROSE = {
    "citation": 'Bees pollinate plants <citation ids="a#1,b#2"/>. They make honey <citation ids="c#3"/>.',
    "comparisons": "If a < b and b > c then a<b, also 3<4 and x<-y and <<< arrows.",
    "braces mid-sentence": "Use the pattern x {y} or {name} here; a dict {'a': 1} too.",
    "brace as a first char": "{Note} the chain must be lubricated.",
    "bracket as a first char": "[1] The manual says so. [2] And more.",
    "bracketed JSON list that is data": '[{"name": "Alice"}] is a list.',
    "inline code": 'Call `search` with `<search query="x"/>` or ``a ` b``.',
    "html-ish": "Press <kbd>Ctrl</kbd>+<b>C</b>, see <a href='x'>this</a><br/> and <toolbox>.",
    "JSON sample in a fence": 'A sample:\n```json\n{"name": "Alice", "age": 30}\n```\nThat is all.',
    "a call-shaped JSON sample of an unknown tool": (
        '```json\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n```'
    ),
    "python fence": '```python\nprint("<tool_call>{}</tool_call>")\nx = {"a": [1]}\n```\nDone.',
    "html fence": "```html\n<div><search>x</search></div>\n```",
    "empty fence": "```\n```",
    "fence with prose": "```\nplain code, not json\n```",
    "unknown pipe token": "Some <|im_start|> text",
    "tool word that is not a tag": "<search for the answer> is what I did; <tools are great>.",
    "tool-name tag that is not a call": "<search>[not, json</search>",
}


@pytest.mark.parametrize("text", list(PROSE.values()), ids=list(PROSE))
def test_prose_streams_unchanged(text: str) -> None:
    assert run([text]) == (text, [], 0)


def test_bare_json_later_in_the_turn_is_prose() -> None:
    text = f"The call would be {SEARCH} but I will not make it."
    assert run([text]) == (text, [], 0)


def test_prose_streams_before_the_turn_ends() -> None:
    f = MarkupFilter(TOOLS)
    assert f.feed("Bees <citation ids=") == "Bees <citation ids="
    assert f.feed('"a#1"/> a < b, x {') == '"a#1"/> a < b, x {'
    assert f.feed("y} and <") == "y} and "  # a "<" at the end may open a tag: held
    assert f.feed("b>bold</b> `co") == "<b>bold</b> `co"
    assert f.feed("de` end") == "de` end"
    assert f.close() == ""


def test_text_is_held_only_from_a_possible_opener_and_released_when_it_cannot_be_one() -> None:
    f = MarkupFilter(TOOLS)
    assert f.feed("Done. <tool_ca") == "Done. "
    assert f.feed("rpet>") == "<tool_carpet>"
    assert f.feed(" and <sea") == " and "
    assert f.feed("shell>") == "<seashell>"
    assert f.feed("\n```") == "\n"
    assert f.feed("py") == ""
    assert f.feed("thon\nx = 1\n```\n") == "```python\nx = 1\n```\n"
    assert (f.close(), f.calls, f.removed) == ("", [], 0)


def test_a_fence_is_released_as_soon_as_its_body_is_prose() -> None:
    f = MarkupFilter(TOOLS)
    assert f.feed("```json\n") == ""
    assert f.feed("  [1, 2]") == "```json\n  [1, 2]"
    assert f.feed("\n```") == "\n```"
    assert f.close() == ""


# -- calls among prose --------------------------------------------------------------------------------


def test_prose_before_and_after_a_call_streams_and_the_call_is_recorded() -> None:
    f = MarkupFilter(TOOLS)
    assert f.feed("Let me look that up. <tool_") == "Let me look that up. "
    assert f.feed('call>{"name": "search", "arguments": {"query": "be') == ""
    assert f.feed('es"}}</tool_call>\nThen I') == "\nThen I"
    assert f.feed(" will answer.") == " will answer."
    assert (f.close(), f.calls, f.removed) == ("", [BEES], 0)


def test_calls_in_several_forms_in_one_turn_are_recorded_in_order() -> None:
    text = (
        f'First:\n```json\n{SEARCH}\n```\nthen <expand documentId="d1" sequenceNumber="3"/> and '
        '<function=search>{"query": "wasps"}</function> done.'
    )
    assert run([text]) == ("First:\n\nthen  and  done.", [BEES, D1_3, call("search", query="wasps")], 0)


def test_a_bare_call_followed_by_prose_is_still_a_call() -> None:
    assert run([f"{SEARCH}\nLet me check."]) == ("\nLet me check.", [BEES], 0)


def test_bare_calls_one_after_another_are_all_recorded() -> None:
    assert run([f"{SEARCH}\n{EXPAND}\n"]) == ("\n\n", [BEES, D1_3], 0)


# -- tool responses and other markup -------------------------------------------------------------------


@pytest.mark.parametrize(
    "block",
    [
        '<tool_response>\n{"results": [{"id": "a#1", "text": "Bees..."}]}\n</tool_response>',
        "<tool_result>Bees pollinate.</tool_result>",
        "<|tool_response|>Bees pollinate.<|/tool_response|>",
        "<|tool_response|>Bees pollinate.<|tool_response_end|>",
        "<tool_response/>",
    ],
)
def test_an_echoed_tool_response_is_dropped_and_counted(block: str) -> None:
    assert run([f"{block}\nBees pollinate plants."]) == ("\nBees pollinate plants.", [], 1)


def test_a_stray_closing_tag_is_dropped_and_counted() -> None:
    assert run(["Answer.</tool_call> More."]) == ("Answer. More.", [], 1)


def test_a_fence_holding_only_a_tool_response_is_dropped() -> None:
    assert run(["```\n<tool_response>x</tool_response>\n```\nOK"]) == ("\nOK", [], 1)


def test_an_echoed_tool_definition_is_not_a_call() -> None:
    definition = (
        '{"type": "function", "function": {"name": "search", "description": "Search.", '
        '"parameters": {"type": "object", "properties": {"query": {"type": "string"}}}}}'
    )
    assert run([f"<tools>{definition}</tools>Hi"]) == ("Hi", [], 1)
    assert run([definition]) == (definition, [], 0)


# -- unknown tools and bad arguments ---------------------------------------------------------------


@pytest.mark.parametrize(
    "markup",
    [
        '<tool_call>{"name": "delete_all", "arguments": {}}</tool_call>',
        '<function=delete_all>{"x": 1}</function>',
        "<tool_call>delete_all(x=1)</tool_call>",
        '<tool_call>{"name": "search", "arguments": ["bees"]}</tool_call>',
        '<tool_call>{"name": "search", "arguments": "not json"}</tool_call>',
        "<tool_call>I will search now</tool_call>",
        "<tool_call></tool_call>",
    ],
)
def test_tool_markup_that_is_not_a_call_of_a_known_tool_is_dropped(markup: str) -> None:
    assert run([f"A{markup}B"]) == ("AB", [], 1)


def test_a_mixed_list_keeps_the_known_calls_and_counts_the_block() -> None:
    text = f'<tool_call>[{SEARCH}, {{"name": "delete_all", "arguments": {{}}}}]</tool_call>'
    assert run([text]) == ("", [BEES], 1)


@pytest.mark.parametrize(
    "text",
    [
        '```json\n{"name": "delete_all", "arguments": {}}\n```',
        '```json\n{"name": "search", "arguments": ["bees"]}\n```',
        f'```json\n[{SEARCH}, {{"name": "delete_all", "arguments": {{}}}}]\n```',
        '{"name": "delete_all", "arguments": {}}',
        '{"name": "search"}',
    ],
)
def test_json_that_is_not_entirely_known_calls_is_prose(text: str) -> None:
    assert run([text]) == (text, [], 0)


def test_without_tools_every_call_form_is_markup_or_prose() -> None:
    text = f"<tool_call>{SEARCH}</tool_call>A <search query='x'/> {SEARCH}"
    assert run([text], tools=()) == (f"A <search query='x'/> {SEARCH}", [], 1)


# -- unclosed blocks at the end of the turn -----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"<tool_call>\n{SEARCH}\n", ("", [BEES], 0)),
        (f"Sure. <tool_call>{SEARCH}", ("Sure. ", [BEES], 0)),
        (f"```json\n{SEARCH}\n", ("", [BEES], 0)),
        ('<function=search>{"query": "bees"}', ("", [BEES], 0)),
        ('<search query="bees">', ("", [BEES], 0)),
        ('<search query="bees"', ("", [BEES], 0)),
        ("<tool_call>\nI think", ("", [], 1)),
        ("<tool_response>Bees", ("", [], 1)),
        ("<tool_call", ("", [], 1)),
        ("<search>bees", ("<search>bees", [], 0)),
        (
            '{"name": "search", "arguments": {"query": "be',
            ('{"name": "search", "arguments": {"query": "be', [], 0),
        ),
        ("```json\n[1, 2", ("```json\n[1, 2", [], 0)),
        ("```js", ("```js", [], 0)),
        ("Tail ``", ("Tail ``", [], 0)),
        ("Tail <tool_", ("Tail <tool_", [], 0)),
        ("Tail <", ("Tail <", [], 0)),
    ],
)
def test_an_unclosed_block_at_close_is_parsed_as_a_call_or_released_or_dropped(
    text: str, expected: Result
) -> None:
    assert run([text]) == expected


def test_the_filter_starts_a_fresh_turn_after_close() -> None:
    f = MarkupFilter(TOOLS)
    assert f.feed("Text.") == "Text."
    assert f.close() == ""
    assert f.feed(SEARCH) == ""
    assert f.close() == ""
    assert f.calls == [BEES]


# -- bounds -----------------------------------------------------------------------------------------


def test_an_overlong_tool_response_is_dropped_through_its_closing_tag() -> None:
    long = "<tool_response>" + "evidence " * 50 + "</tool_response>"
    assert run([long + "Answer."], max_block_chars=100) == ("Answer.", [], 1)


def test_overlong_blocks_that_may_be_prose_are_released_as_text() -> None:
    fence = "```json\n[" + "1, " * 50 + "1]\n```"
    tag = "<search>" + "word " * 50 + "</search>"
    brace = '{"' + "a" * 200 + '": 1}'
    for text in (fence, tag, brace):
        assert run([text + " end"], max_block_chars=64) == (text + " end", [], 0)


def test_a_block_within_the_bound_is_still_parsed() -> None:
    text = f"<tool_call>{SEARCH}</tool_call>"
    assert run([text], max_block_chars=len(text)) == ("", [BEES], 0)
    assert run([text], max_block_chars=len(text) - 1) == ("", [], 1)


MEGA = 1_000_000


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<" * MEGA, ("<" * MEGA, [], 0)),
        ("`" * MEGA, ("`" * MEGA, [], 0)),
        ("```" * (MEGA // 3), ("```" * (MEGA // 3), [], 0)),
        ("{" * MEGA, ("{" * MEGA, [], 0)),
        ("[" * MEGA, ("[" * MEGA, [], 0)),
        ('{"' + "a" * MEGA, ('{"' + "a" * MEGA, [], 0)),
        ("x " + "{" * MEGA, ("x " + "{" * MEGA, [], 0)),
        ("<tool_call>" * (MEGA // 11), ("", [], MEGA // 11)),
        ("<tool_response>" + "x" * MEGA, ("", [], 1)),
        ('<search q="' + "x" * MEGA, ('<search q="' + "x" * MEGA, [], 0)),
        (
            "```json\n" + "[" * 5000 + "]" * 5000 + "\n```",
            ("```json\n" + "[" * 5000 + "]" * 5000 + "\n```", [], 0),
        ),
        ("[" * 7000 + "]" * 7000, ("[" * 7000 + "]" * 7000, [], 0)),
        ("<tool_call>" + "[" * 7000 + "]" * 7000 + "</tool_call>", ("", [], 1)),
        ("<tool_call>search(q=" + "[" * 5000 + "]" * 5000 + ")</tool_call>", ("", [], 1)),
        (
            '{"name": "search", "arguments": {"n": ' + "9" * 5000 + "}}",
            ('{"name": "search", "arguments": {"n": ' + "9" * 5000 + "}}", [], 0),
        ),
        ('<search n="' + "9" * 5000 + '"/>', ("", [call("search", n="9" * 5000)], 0)),
    ],
    ids=[
        "1MB <",
        "1MB backticks",
        "1MB fences",
        "1MB {",
        "1MB [",
        "1MB JSON string",
        "1MB { mid-text",
        "90k empty tool_calls",
        "1MB tool_response",
        "1MB attribute",
        "deep JSON in a fence",
        "deep bare JSON",
        "deep JSON in a tag",
        "deep Python call",
        "huge JSON int",
        "huge attribute int",
    ],
)
def test_hostile_input_finishes_with_a_bounded_result(text: str, expected: Result) -> None:
    assert run([text]) == expected
    chunks = [text[i : i + 4093] for i in range(0, len(text), 4093)]
    assert run(chunks) == expected


# -- splitting invariance -----------------------------------------------------------------------------

SAMPLES = [
    *(text for text, _ in FORMATS.values()),
    *PROSE.values(),
    f"Let me look. <tool_call>{SEARCH}</tool_call> Thanks.",
    '<tool_response>x</tool_response>Answer <citation ids="a#1"/>.',
    f"  {SEARCH}  {EXPAND}",
    f"<tool_call>{SEARCH}\n<tool_call>",
    "a `b` c ``d`` ```json\n{}\n``` e",
    "```python\nx = '```'\n```` ok",
    '<search query="a > b" mode=\'x\'/> <search\n  query="c"\n/>',
    "</tools></tool_response><|/tool_call|> x <|tool_result|>y",
    '<tool_call name="x">y</tool_call><function name="search">{"query": "bees"}</function>',
    '[ {"name": "search", "arguments": {"query": "a\\"b}"}} ]',
    '```\n<search query="x"/>\n``` and `<tool_call>` inline',
    "<<tool_call>>{}</tool_call>>",
]


@pytest.mark.parametrize("text", SAMPLES)
def test_char_by_char_feeding_gives_the_same_result(text: str) -> None:
    for bound in (16_000, 24):
        assert run(list(text), max_block_chars=bound) == run([text], max_block_chars=bound)


@settings(max_examples=examples_at_scale(), deadline=None)
@given(
    data=st.data(),
    pieces=st.lists(st.sampled_from(SAMPLES), min_size=1, max_size=3),
    bound=st.sampled_from([16_000, 40, 7]),
)
def test_any_split_of_the_text_gives_the_same_output_calls_and_removed(
    data: st.DataObject, pieces: list[str], bound: int
) -> None:
    text = "".join(pieces)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=12), label="cuts"))
    parts = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    assert "".join(parts) == text
    assert run(parts, max_block_chars=bound) == run([text], max_block_chars=bound)
