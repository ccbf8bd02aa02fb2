"""``ragline chat``: ask a question as the tenant's operator; the answer streams with its citations
(:func:`ragline.cli.output.stream_chat`), and each answer is a turn of a conversation the server keeps.
With ``--json``, the run's events as JSON lines: each the ``data:`` of the SSE event ``POST /v1/chat``
streams, the ``final`` event last."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Annotated

import typer

from ragline.cli.context import as_ragline, build_container, fail, refuse
from ragline.cli.options import Home, Json, Tenant

if TYPE_CHECKING:
    from ragline.agents.events import RunEvent


def chat(
    question: str,
    namespace: Annotated[
        list[str] | None,
        typer.Option("--namespace", "-n", help="Namespace(s); none: the collection router picks."),
    ] = None,
    mode: Annotated[str, typer.Option("--mode", "-m", help="accurate | fast")] = "accurate",
    agent: Annotated[
        str,
        typer.Option("--agent", "-a", help="agentic | deep_search | chain_of_rag | auto (the RAG router)"),
    ] = "agentic",
    resume: Annotated[
        bool, typer.Option("--continue", "-c", help="Continue the most recent conversation.")
    ] = False,
    conversation: Annotated[
        str | None, typer.Option("--conversation", help="Continue this conversation (its id).")
    ] = None,
    home: Home = None,
    tenant: Tenant = "local",
    as_json: Json = False,
) -> None:
    """Ask a question: streams the answer and prints the cited sources. Each answer is a turn of a
    conversation the server keeps: ``--continue`` asks a follow-up in the most recent one. ``--json``:
    the events as JSON lines, as the API streams them."""
    from ragline.cli.output import stream_chat
    from ragline.domain.api import ChatRequest
    from ragline.errors import RaglineError
    from ragline.services.authentication import Principal

    c = build_container(home)
    caller = Principal.operator(tenant)
    try:
        if resume and conversation is None:
            recent = c.conversations.list(caller).conversations
            if not recent:
                raise refuse("no conversation to continue yet", "--continue")
            conversation = recent[0].conversation_id
        request = ChatRequest.model_validate(
            {
                "messages": [{"role": "user", "content": question}],
                "namespaces": namespace or [],
                "mode": mode,
                "agent": agent,
                **({"conversationId": conversation} if conversation else {}),
            }
        )
        events = c.chat.answer_chat(caller, request)
        if as_json:
            _json_lines(events)
            return
        final = stream_chat(events, c.chat_model.name)
        if final is not None and final.conversation_id:
            typer.echo(f'conversation {final.conversation_id} (ragline chat --continue "…" to follow up)')
    except RaglineError as exc:
        raise fail(exc) from exc
    except ValueError as exc:
        raise fail(as_ragline(exc)) from exc


def _json_lines(events: Iterable[RunEvent]) -> None:
    """The events as JSON lines. A failure once they started ends them as the API's stream ends: with
    its ``error`` event (exit 2), not an error body after the events."""
    from ragline.agents.events import RunError
    from ragline.cli.output import print_json_lines
    from ragline.errors import RaglineError

    try:
        print_json_lines(events)
    except RaglineError as exc:
        print_json_lines([RunError(code=exc.code, message=exc.message)])
        raise typer.Exit(2) from exc
