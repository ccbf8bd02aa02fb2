"""An embedded container for the end-user tests, and a record of whom the services were called for."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragline.config import Settings
from ragline.domain.access import UserContext
from ragline.services.namespaces import new_namespace
from ragline.wiring import Container
from tests.support.fakes import BowEmbedder


def embedded_container(
    home: Path, step_queue: Any = None, *, embedder: BowEmbedder | None = None, **settings: Any
) -> Container:
    parts = {"step_queue": step_queue} if step_queue is not None else {}
    return Container(
        Settings(home=home, **settings), embedder=embedder or BowEmbedder(), tokenizer=BowEmbedder(), **parts
    )


def acme_docs(home: Path, *, embedder: BowEmbedder | None = None, **settings: Any) -> Container:
    """An embedded container with the tenant ``acme`` and its namespace ``docs``."""
    container = embedded_container(home, embedder=embedder, **settings)
    container.tenancy.create_tenant("acme")
    container.registry.create_namespace(new_namespace("acme", "docs"))
    return container


class Seen:
    """Wraps a container's search and chat services (real ones, called through) and records the end
    user of each call's principal."""

    def __init__(self) -> None:
        self.users: list[UserContext | None] = []

    @classmethod
    def install(cls, container: Container) -> Seen:
        seen = cls()
        search, chat = container.search, container.chat
        container.__dict__["search"] = _Through(search, "search", seen)
        container.__dict__["chat"] = _Through(chat, "answer_chat", seen)
        return seen


class _Through:
    def __init__(self, inner: Any, method: str, seen: Seen) -> None:
        self._inner, self._method, self._seen = inner, method, seen

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._inner, name)
        if name != self._method:
            return attribute

        def call(principal: Any, *args: Any, **kwargs: Any) -> Any:
            self._seen.users.append(principal.user)
            return attribute(principal, *args, **kwargs)

        return call
