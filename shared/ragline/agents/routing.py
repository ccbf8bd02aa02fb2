"""DeepSearcher's two routers, made strict: which agent answers (``agent: "auto"``) and which
namespaces a run searches (no namespaces named, or ``namespaces: "auto"``).

The **agent router** shows the model the agents' self-descriptions, numbered, and reads back one
number: ``<think>`` blocks are dropped, a reply that is just an integer is taken as it is, else the
*last* number in the text; the number must be 1…n (DeepSearcher took "0" or "10" as the last agent). Any
other reply, or a failed call, falls back to the default agent and says so (``router_fallback``).

The **collection router** works over the namespaces the caller's key may read: none → nothing to
search; one → that one, with no model call; several → the model picks by name and description. The
default namespace and namespaces without a description (nothing to judge them by) are always searched;
names the model invents are dropped; duplicates go; the result never leaves the candidates. A reply
that names nothing valid, or a failed call, searches every candidate (``collection_router_fallback``).
Offline, both routers take the safe choice: the default agent, every readable namespace.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ragline import errors
from ragline.agents.asking import ask, render_conversation, without_think
from ragline.agents.prompts import AGENT_ROUTER_PROMPT, COLLECTION_ROUTER_PROMPT
from ragline.domain.chat import ChatMessage
from ragline.domain.models import RunUsage
from ragline.domain.retrieval import Notice
from ragline.domain.tenancy import Namespace
from ragline.ports import ChatModel

ROUTER_TOKENS = 16
"""Output tokens of the agent router's reply (a number; a little room for a sentence)."""
COLLECTION_TOKENS = 256
MAX_ROUTED_NAMESPACES = 20
"""As many as a request may name."""
DESCRIPTION_CHARS = 300
_PLAIN_INT = re.compile(r"\s*[+-]?\d+\s*")
_NUMBER = re.compile(r"[+-]?\d+")
_MAX_DIGITS = 6
"""Longer digit runs are out of range anyway (and ``int()`` of thousands of digits is refused)."""


def parse_choice(reply: str, count: int) -> int | None:
    """The agent number (1…``count``) in a router reply, or None."""
    text = without_think(reply)
    if _PLAIN_INT.fullmatch(text):
        token = text.strip()
    else:
        numbers = _NUMBER.findall(text)
        if not numbers:
            return None
        token = numbers[-1]
    if len(token.lstrip("+-")) > _MAX_DIGITS:
        return None
    value = int(token)
    return value if 1 <= value <= count else None


@dataclass(frozen=True)
class AgentInfo:
    name: str
    description: str


@dataclass
class AgentChoice:
    agent: str
    reason: str
    fallback: bool = False
    usage: RunUsage = field(default_factory=RunUsage)
    notices: list[Notice] = field(default_factory=list)


class AgentRouter:
    def __init__(self, model: ChatModel | None, agents: Sequence[AgentInfo], default: str) -> None:
        self._model = model
        self._agents = list(agents)
        self._default = default

    def prompt(self) -> str:
        listing = "\n".join(f"{i}. {a.name}: {a.description}" for i, a in enumerate(self._agents, start=1))
        return AGENT_ROUTER_PROMPT.format(agents=listing, count=len(self._agents))

    def route(self, conversation: Sequence[ChatMessage]) -> AgentChoice:
        if self._model is None:
            return AgentChoice(self._default, "offline (no model endpoint): the default agent")
        try:
            reply = ask(
                self._model,
                self.prompt(),
                f"Conversation:\n{render_conversation(conversation)}",
                max_output_tokens=ROUTER_TOKENS,
            )
        except errors.RaglineError as exc:
            return self._fallback(RunUsage(), f"the router's model call failed ({exc.code})")
        number = parse_choice(reply.text, len(self._agents))
        if number is None:
            shown = json.dumps(without_think(reply.text).strip()[:40])
            return self._fallback(
                reply.usage, f"the router's reply named no agent 1-{len(self._agents)}: {shown}"
            )
        chosen = self._agents[number - 1]
        return AgentChoice(
            chosen.name, f"the model chose agent {number} of {len(self._agents)}", usage=reply.usage
        )

    def _fallback(self, usage: RunUsage, why: str) -> AgentChoice:
        message = f"{why}; the default agent {self._default!r} answers"
        return AgentChoice(
            self._default, message, fallback=True, usage=usage, notices=[Notice("router_fallback", message)]
        )


@dataclass
class CollectionChoice:
    namespaces: list[Namespace]
    reason: str
    usage: RunUsage = field(default_factory=RunUsage)
    notices: list[Notice] = field(default_factory=list)


def always_searched(ns: Namespace) -> bool:
    """The default namespace, and one with no description (the model could only guess about it)."""
    return ns.default or not ns.description.strip()


def pick(candidates: Sequence[Namespace], named: Sequence[Any]) -> list[Namespace]:
    """The routed set: the default namespace first, then the model's valid picks in its order, then the
    namespaces without a description; each once, nothing outside ``candidates``."""
    by_id = {ns.namespace_id: ns for ns in candidates}
    chosen = [ns for ns in candidates if ns.default]
    chosen += [by_id[n] for n in named if isinstance(n, str) and n in by_id]
    chosen += [ns for ns in candidates if always_searched(ns)]
    return list({ns.namespace_id: ns for ns in chosen}.values())


def _names(reply: str) -> list[Any] | None:
    """The namespace list in a reply: ``{"namespaces": [...]}`` or a bare JSON list, the first found."""
    text = without_think(reply)
    decoder = json.JSONDecoder()
    for match in list(re.finditer(r"[\[{]", text))[:50]:
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict) and isinstance(value.get("namespaces"), list):
            return list(value["namespaces"])
        if isinstance(value, list):
            return value
    return None


class CollectionRouter:
    def __init__(self, model: ChatModel | None) -> None:
        self._model = model

    def route(self, conversation: Sequence[ChatMessage], candidates: Sequence[Namespace]) -> CollectionChoice:
        candidates = list({ns.namespace_id: ns for ns in candidates}.values())
        if not candidates:
            return CollectionChoice(
                [],
                "this key may read no namespace",
                notices=[Notice("no_namespaces", "no namespace to search")],
            )
        if len(candidates) == 1:
            return CollectionChoice(candidates, "the only namespace this key may read")
        offered = [ns for ns in candidates if not always_searched(ns)]
        if not offered:
            return self._capped(CollectionChoice(candidates, "no namespace has a description to route by"))
        if self._model is None:
            return self._capped(
                CollectionChoice(candidates, "offline (no model endpoint): every readable namespace")
            )
        listing = "\n".join(
            f"- {ns.namespace_id}: {' '.join(ns.description.split())[:DESCRIPTION_CHARS]}" for ns in offered
        )
        try:
            reply = ask(
                self._model,
                COLLECTION_ROUTER_PROMPT.format(collections=listing),
                f"Conversation:\n{render_conversation(conversation)}",
                max_output_tokens=COLLECTION_TOKENS,
            )
        except errors.RaglineError as exc:
            return self._fallback(
                candidates, RunUsage(), f"the collection router's model call failed ({exc.code})"
            )
        named = _names(reply.text)
        valid = [n for n in named or [] if isinstance(n, str) and n in {ns.namespace_id for ns in offered}]
        if named is None:
            return self._fallback(
                candidates, reply.usage, "the collection router's reply held no namespace list"
            )
        chosen = pick(candidates, valid)
        if not chosen:  # the model named nothing usable and nothing is always searched
            return self._fallback(candidates, reply.usage, "the collection router chose no namespace")
        dropped = len([n for n in named if n not in valid])
        reason = f"the model chose {len(valid)} of {len(offered)} described namespaces"
        choice = CollectionChoice(chosen, reason, usage=reply.usage)
        if dropped:
            choice.notices.append(
                Notice(
                    "collection_router_unknown",
                    f"{dropped} namespace name(s) the model gave do not exist or are not readable; ignored",
                )
            )
        return self._capped(choice)

    def _fallback(self, candidates: list[Namespace], usage: RunUsage, why: str) -> CollectionChoice:
        message = f"{why}; every readable namespace is searched"
        return self._capped(
            CollectionChoice(
                candidates, message, usage=usage, notices=[Notice("collection_router_fallback", message)]
            )
        )

    @staticmethod
    def _capped(choice: CollectionChoice) -> CollectionChoice:
        if len(choice.namespaces) > MAX_ROUTED_NAMESPACES:
            # The default namespace and the model's picks come first, so they are the ones kept.
            cut = len(choice.namespaces) - MAX_ROUTED_NAMESPACES
            choice.namespaces = choice.namespaces[:MAX_ROUTED_NAMESPACES]
            choice.notices.append(
                Notice(
                    "namespaces_capped",
                    f"{cut} namespace(s) were not searched: at most {MAX_ROUTED_NAMESPACES} per run",
                )
            )
        return choice
