from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragline.domain.chat import ChatMessage, ToolCall
from ragline.domain.pruning import (
    ELIDED,
    is_continuation,
    prune_messages,
    shrink_for_context,
    strip_reasoning,
)

pytestmark = pytest.mark.unit

CALL = ToolCall(id="c1", name="search", arguments='{"query": "bees"}')


def system(text: str = "You answer with citations.") -> ChatMessage:
    return ChatMessage(role="system", content=text)


def user(text: str) -> ChatMessage:
    return ChatMessage(role="user", content=text)


def assistant(text: str = "", *calls: ToolCall) -> ChatMessage:
    return ChatMessage(role="assistant", content=text, tool_calls=calls)


def tool(text: str = "[hits]", call_id: str = "c1") -> ChatMessage:
    return ChatMessage(role="tool", content=text, tool_call_id=call_id)


def test_given_tool_traffic_before_the_last_user_message_then_it_is_dropped() -> None:
    history = [
        system(),
        user("what do bees eat?"),
        assistant("", CALL),
        tool(),
        assistant("Nectar and pollen."),
        user("and wasps?"),
    ]

    assert prune_messages(history) == [
        system(),
        user("what do bees eat?"),
        assistant("Nectar and pollen."),
        user("and wasps?"),
    ]


def test_given_an_assistant_message_with_text_and_tool_calls_then_only_its_text_is_kept() -> None:
    history = [user("q1"), assistant("Let me search.", CALL), tool(), user("q2")]

    assert prune_messages(history) == [user("q1"), assistant("Let me search."), user("q2")]


def test_given_reasoning_before_the_last_user_message_then_it_is_stripped() -> None:
    history = [
        user("q1"),
        assistant("<think>the user wants bees</think>\nBees eat nectar."),
        assistant("<think>only thinking, no answer</think>"),
        user("q2"),
    ]

    assert prune_messages(history) == [user("q1"), assistant("Bees eat nectar."), user("q2")]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<think>a</think>\n\nAnswer", "Answer"),
        ("Before <THINK>x</THINK>after", "Before after"),
        ("Answer <think>cut off mid-thought", "Answer "),
        ("reasoning whose opening tag was in the prompt</think>\nAnswer", "Answer"),
        ("No reasoning at all.", "No reasoning at all."),
    ],
)
def test_strip_reasoning(text: str, expected: str) -> None:
    assert strip_reasoning(text) == expected


def test_given_blank_messages_before_the_last_user_message_then_they_are_dropped() -> None:
    history = [system(""), user("  "), assistant("\n"), user("q1"), assistant("a1"), user("q2")]

    assert prune_messages(history) == [user("q1"), assistant("a1"), user("q2")]


def test_the_last_user_message_and_what_follows_are_kept_verbatim() -> None:
    history = [
        user("q1"),
        assistant("", CALL),
        tool(),
        user("<think>not mine to strip</think> q2"),
        system(""),
    ]

    assert prune_messages(history) == [user("q1"), user("<think>not mine to strip</think> q2"), system("")]


@pytest.mark.parametrize("last", [assistant("", CALL), tool(), assistant("<think>x</think>partial")])
def test_given_a_continuation_payload_then_it_is_kept_intact(last: ChatMessage) -> None:
    history = [system(""), user("q1"), assistant("<think>r</think>", CALL), tool(), user("q2"), last]

    assert is_continuation(history)
    assert prune_messages(history) == history


def test_given_no_messages_then_none() -> None:
    assert prune_messages([]) == []
    assert not is_continuation([])


def test_given_no_user_message_then_everything_is_pruned() -> None:
    assert prune_messages([system(), system("")]) == [system()]


def test_the_input_is_not_modified() -> None:
    history = [user("q1"), assistant("<think>r</think>a", CALL), tool(), user("q2")]
    snapshot = [m.model_copy(deep=True) for m in history]

    prune_messages(history)

    assert history == snapshot


# -- properties ---------------------------------------------------------------------------------

texts = st.sampled_from(["", " ", "hi", "<think>r</think>", "<think>r</think> answer", "done</think> ok"])
messages = st.one_of(
    st.builds(system, texts),
    st.builds(user, texts),
    st.builds(assistant, texts),
    st.builds(lambda t: assistant(t, CALL), texts),
    st.builds(tool, texts),
)
histories = st.lists(messages, max_size=12)


@given(histories)
def test_property_the_last_user_message_and_everything_after_it_is_preserved(
    history: list[ChatMessage],
) -> None:
    pruned = prune_messages(history)

    users = [i for i, m in enumerate(history) if m.role == "user"]
    if users:
        tail = history[users[-1] :]
        assert pruned[len(pruned) - len(tail) :] == tail


@given(histories)
def test_property_no_tool_traffic_or_reasoning_survives_before_the_last_user_message(
    history: list[ChatMessage],
) -> None:
    pruned = prune_messages(history)

    if is_continuation(history):
        assert pruned == history
        return
    users = [i for i, m in enumerate(pruned) if m.role == "user"]
    for m in pruned[: users[-1]] if users else pruned:
        assert m.role != "tool"
        assert not m.tool_calls
        assert m.content.strip()
        if m.role == "assistant":
            assert "think>" not in m.content.lower()


@given(histories)
def test_property_pruning_is_idempotent(history: list[ChatMessage]) -> None:
    once = prune_messages(history)

    assert prune_messages(once) == once


# -- shrink_for_context: a history that overflowed the model's window ---------------------------------
def _call(i: int) -> ToolCall:
    return ToolCall(id=f"c{i}", name="search", arguments="{}")


def test_shrinking_elides_older_results_halves_the_latest_and_keeps_every_pair() -> None:
    history = [
        ChatMessage(role="system", content="rules"),
        ChatMessage(role="user", content="old question"),
        ChatMessage(role="assistant", content="old answer", tool_calls=(_call(0),)),
        ChatMessage(role="tool", content="old result", tool_call_id="c0"),
        ChatMessage(role="user", content="q" * 30_000),
        ChatMessage(role="assistant", tool_calls=(_call(1),)),
        ChatMessage(role="tool", content="a" * 100, tool_call_id="c1"),
        ChatMessage(role="assistant", tool_calls=(_call(2), _call(3))),
        ChatMessage(role="tool", content="b" * 100, tool_call_id="c2"),
        ChatMessage(role="tool", content="c" * 10, tool_call_id="c3"),
    ]
    shrunk = shrink_for_context(history)

    assert [m.role for m in shrunk] == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "tool",
    ]
    assert shrunk[2].content == "old answer" and not shrunk[2].tool_calls  # earlier traffic dropped
    assert len(shrunk[3].content) == 20_000
    assert [m.content for m in shrunk if m.role == "tool"] == [ELIDED, "b" * 50, "c" * 5]
    calls = {c.id for m in shrunk for c in m.tool_calls}
    assert calls == {m.tool_call_id for m in shrunk if m.role == "tool"}
    assert history[6].content == "a" * 100  # the input is not modified


def test_shrinking_what_cannot_shrink_returns_it_unchanged() -> None:
    history = [ChatMessage(role="system", content="rules"), ChatMessage(role="user", content="short")]
    assert shrink_for_context(history) == history
