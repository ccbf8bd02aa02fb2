"""The RAG router and the collection router: strict number parsing, fallbacks, and a routed set that
never leaves the key's allow-list (replies from the scripted OpenAI-compatible server through the real
adapter, and a hypothesis property over random allow-lists and replies)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from ragline.adapters.openai.chat import OpenAIChatModel
from ragline.agents.catalog import AGENTS, DEFAULT_AGENT, INFOS
from ragline.agents.routing import (
    MAX_ROUTED_NAMESPACES,
    AgentRouter,
    CollectionRouter,
    always_searched,
    parse_choice,
)
from ragline.domain.api import ChatRequest
from ragline.domain.chat import ChatMessage
from ragline.domain.tenancy import Namespace
from tests.support.fakes import ScriptedChatModel
from tests.support.openai_replay import OpenAIReplay, error, text

pytestmark = pytest.mark.unit

QUESTION = [ChatMessage(role="user", content="Compare the warranty and the return policy")]


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("2", 2),
        (" 2\n", 2),
        ("The best agent is [2] because 3 …", 3),  # the last number, as specified (and in range)
        ("<think>1</think>2", 2),
        ("<think>let me think: 3 or 1", None),  # an unclosed think block hides everything after it
        ("0", None),
        ("10", None),
        ("-1", None),
        ("+2", 2),
        ("2.", 2),
        ("", None),
        ("I would pick the agent that searches deeply.", None),
        ("9" * 5000, None),  # no int() of thousands of digits
        ("agent 1 then -2", None),
    ],
)
def test_parse_choice(reply: str, expected: int | None) -> None:
    assert parse_choice(reply, 3) == expected


def test_agents_are_numbered_with_their_descriptions_and_agentic_is_the_default() -> None:
    assert [a.name for a in AGENTS] == ["agentic", "deep_search", "chain_of_rag"]
    assert DEFAULT_AGENT == "agentic"
    prompt = AgentRouter(None, INFOS, DEFAULT_AGENT).prompt()
    for i, agent in enumerate(AGENTS, start=1):
        assert f"{i}. {agent.name}: {agent.description}" in prompt
        assert len(agent.description) > 80  # a paragraph, not a label


def replay_model(openai_replay: OpenAIReplay) -> OpenAIChatModel:
    return OpenAIChatModel(model="router-test", client=openai_replay.client(max_retries=1))


@pytest.mark.parametrize(
    ("reply", "agent", "fallback"),
    [
        ("2", "deep_search", False),
        (" 2\n", "deep_search", False),
        ("The best agent is [2] because 3 …", "chain_of_rag", False),
        ("<think>1</think>2", "deep_search", False),
        ("3", "chain_of_rag", False),
        ("1", "agentic", False),
        ("0", "agentic", True),
        ("10", "agentic", True),
        ("-1", "agentic", True),
        ("2.", "deep_search", False),
        ("", "agentic", True),
        ("Deep search seems right.", "agentic", True),
    ],
)
def test_agent_router_over_the_real_adapter(
    openai_replay: OpenAIReplay, reply: str, agent: str, fallback: bool
) -> None:
    openai_replay.script([text(reply, usage=(300, 2))])
    choice = AgentRouter(replay_model(openai_replay), INFOS, DEFAULT_AGENT).route(QUESTION)
    assert (choice.agent, choice.fallback) == (agent, fallback)
    assert [n.code for n in choice.notices] == (["router_fallback"] if fallback else [])
    assert (choice.usage.llm_input_tokens, choice.usage.llm_output_tokens) == (300, 2)  # charged either way
    sent = openai_replay.chat_requests[0]
    assert "tools" not in sent and sent["messages"][0]["role"] == "system"
    assert (
        "deep_search" in sent["messages"][0]["content"]
        and QUESTION[0].content in sent["messages"][1]["content"]
    )


def test_agent_router_falls_back_when_the_model_fails(openai_replay: OpenAIReplay) -> None:
    openai_replay.script([error(500, times=None)])
    choice = AgentRouter(replay_model(openai_replay), INFOS, DEFAULT_AGENT).route(QUESTION)
    assert (choice.agent, choice.fallback) == ("agentic", True)
    assert choice.notices[0].code == "router_fallback" and "dependency" in choice.reason


def test_agent_router_offline_takes_the_default_and_says_so() -> None:
    choice = AgentRouter(None, INFOS, DEFAULT_AGENT).route(QUESTION)
    assert (choice.agent, choice.fallback, choice.notices) == ("agentic", False, [])
    assert "offline" in choice.reason


def ns(name: str, description: str = "", default: bool = False) -> Namespace:
    return Namespace(tenant_id="acme", namespace_id=name, description=description, default=default)


SPACES = [
    ns("docs", "Product manuals and guides", default=True),
    ns("hr", "Staff handbook: holidays, pay, leave"),
    ns("legal", "Contracts and warranty terms"),
    ns("scratch"),  # no description: always searched
]


def names(spaces: list[Namespace]) -> list[str]:
    return [s.namespace_id for s in spaces]


def test_collection_router_needs_no_model_for_zero_or_one_namespace() -> None:
    model = ScriptedChatModel([])
    none = CollectionRouter(model).route(QUESTION, [])
    assert none.namespaces == [] and [n.code for n in none.notices] == ["no_namespaces"]
    one = CollectionRouter(model).route(QUESTION, [SPACES[1]])
    assert names(one.namespaces) == ["hr"] and model.seen == []


def test_collection_router_keeps_the_default_and_undescribed_and_drops_inventions(
    openai_replay: OpenAIReplay,
) -> None:
    reply = 'Sure: {"namespaces": ["legal", "payroll", "legal", "docs", 7]}'
    openai_replay.script([text(reply, usage=(200, 12))])
    choice = CollectionRouter(replay_model(openai_replay)).route(QUESTION, SPACES)
    assert names(choice.namespaces) == ["docs", "legal", "scratch"]
    assert [n.code for n in choice.notices] == ["collection_router_unknown"]
    assert choice.usage.llm_output_tokens == 12
    prompt = openai_replay.chat_requests[0]["messages"][0]["content"]
    # only the described, non-default namespaces are offered to the model
    assert "- hr: Staff handbook" in prompt and "- legal:" in prompt and "scratch" not in prompt


@pytest.mark.parametrize("reply", ["I cannot tell.", "", '{"namespaces": "hr"}'])
def test_collection_router_unusable_reply_searches_every_candidate(
    openai_replay: OpenAIReplay, reply: str
) -> None:
    openai_replay.script([text(reply)])
    choice = CollectionRouter(replay_model(openai_replay)).route(QUESTION, SPACES)
    assert names(choice.namespaces) == names(SPACES)
    assert [n.code for n in choice.notices] == ["collection_router_fallback"]


def test_collection_router_model_failure_searches_every_candidate(openai_replay: OpenAIReplay) -> None:
    openai_replay.script([error(503, times=None)])
    choice = CollectionRouter(replay_model(openai_replay)).route(QUESTION, SPACES)
    assert names(choice.namespaces) == names(SPACES)
    assert [n.code for n in choice.notices] == ["collection_router_fallback"]


def test_collection_router_offline_searches_every_readable_namespace() -> None:
    choice = CollectionRouter(None).route(QUESTION, SPACES)
    assert names(choice.namespaces) == names(SPACES) and "offline" in choice.reason


def test_collection_router_caps_the_routed_set() -> None:
    many = [ns(f"n{i:02d}") for i in range(MAX_ROUTED_NAMESPACES + 5)]
    choice = CollectionRouter(None).route(QUESTION, many)
    assert names(choice.namespaces) == names(many[:MAX_ROUTED_NAMESPACES])
    assert [n.code for n in choice.notices] == ["namespaces_capped"]


NAMES = [f"ns{i}" for i in range(8)]


@settings(max_examples=300, deadline=None)
@given(
    tenant=st.lists(
        st.tuples(st.sampled_from(NAMES), st.booleans(), st.booleans()),
        min_size=0,
        max_size=8,
        unique_by=lambda t: t[0],
    ),
    allowed=st.one_of(st.none(), st.sets(st.sampled_from(NAMES))),
    reply=st.one_of(
        st.lists(st.one_of(st.sampled_from([*NAMES, "ghost", "NS1", ""]), st.integers()), max_size=12).map(
            lambda picks: json.dumps({"namespaces": picks})
        ),
        st.text(max_size=40),
    ),
)
def test_routed_namespaces_stay_inside_the_allow_list(
    tenant: list[tuple[str, bool, bool]], allowed: set[str] | None, reply: str
) -> None:
    """Whatever the tenant holds, the key allows and the model says: the routed set is within the
    readable namespaces, holds each once, always holds the default and the undescribed ones, and holds
    every readable namespace the model validly named."""
    first_default = next((name for name, _, is_default in tenant if is_default), None)
    spaces = [
        ns(name, "described" if described else "", default=name == first_default)
        for name, described, _ in tenant
    ]
    readable = [s for s in spaces if allowed is None or s.namespace_id in allowed]
    choice = CollectionRouter(ScriptedChatModel([[reply]])).route(QUESTION, readable)
    routed = names(choice.namespaces)
    assert set(routed) <= set(names(readable))
    assert len(routed) == len(set(routed))
    assert {s.namespace_id for s in readable if always_searched(s)} <= set(routed)
    if readable:
        assert routed  # something is always searched when something may be read
    try:
        picked = json.loads(reply)["namespaces"]
    except (ValueError, TypeError, KeyError):
        picked = []
    valid = {p for p in picked if isinstance(p, str)} & set(names(readable))
    if len(readable) > 1:
        assert valid <= set(routed)


def test_a_routed_run_searches_at_most_20_namespaces_as_many_as_a_request_may_name() -> None:
    # Given 25 readable namespaces, none described (so every one is always searched)
    many = [ns(f"n{i:02d}") for i in range(25)]
    # When the collection router picks
    choice = CollectionRouter(None).route(QUESTION, many)
    # Then 20 are searched (the README's "at most 20"), the same bound a request naming them has
    assert len(choice.namespaces) == 20 and "5 namespace(s) were not searched" in choice.notices[0].message
    with pytest.raises(ValidationError):
        ChatRequest.model_validate(
            {"messages": [{"role": "user", "content": "hi"}], "namespaces": names(many[:21])}
        )


class CapRecorder(ScriptedChatModel):
    """Scripted replies, recording the output cap each call was given."""

    def __init__(self, turns: list[Any]) -> None:
        super().__init__(turns)
        self.caps: list[int] = []

    def stream(self, messages: Any, tools: Any, options: Any) -> Any:
        self.caps.append(options.max_output_tokens)
        return super().stream(messages, tools, options)


def test_router_replies_are_capped_16_tokens_for_an_agent_and_256_for_namespaces() -> None:
    agent_model, space_model = CapRecorder([["1"]]), CapRecorder([['{"namespaces": ["hr"]}']])
    AgentRouter(agent_model, INFOS, DEFAULT_AGENT).route(QUESTION)
    CollectionRouter(space_model).route(QUESTION, SPACES)
    assert (agent_model.caps, space_model.caps) == ([16], [256])
