"""Every ``ragline`` command that prints a result takes ``--json`` (a new command too: this lists them
from the command tree, so one added without it fails here), and the output helpers print the API's
serialisation: one indented document, JSON lines as an SSE ``data:`` carries them, the error body."""

from __future__ import annotations

import json

import pytest
import typer

from ragline.agents.events import AnswerDelta, RunFinished
from ragline.cli import output
from ragline.cli.app import app
from ragline.domain.api import Usage
from ragline.errors import NamespaceNotFound

NO_RESULT = {"serve", "mcp", "openapi"}
"""Commands that print no result: a server (HTTP, MCP over stdio), and a document that is JSON already."""


def commands(group: typer.Typer, prefix: str = "") -> dict[str, list[str]]:
    """Each command's full name and its options."""
    click_group = typer.main.get_group(group)
    found: dict[str, list[str]] = {}

    def walk(command: object, name: str) -> None:
        subcommands = getattr(command, "commands", None)
        if subcommands is not None:
            for sub_name, sub in subcommands.items():
                walk(sub, f"{name} {sub_name}".strip())
            return
        found[name] = [opt for p in command.params for opt in getattr(p, "opts", [])]  # type: ignore[attr-defined]

    walk(click_group, prefix)
    return found


def test_every_command_that_prints_a_result_takes_json() -> None:
    every = commands(app)
    assert {"search", "chat", "keys create", "tenants identity-provider show", "sources sync"} <= set(every)
    missing = sorted(name for name, opts in every.items() if name not in NO_RESULT and "--json" not in opts)
    assert missing == []


def test_the_helpers_print_the_apis_serialisation(capsys: pytest.CaptureFixture[str]) -> None:
    final = RunFinished(run_id="r1", exit_reason="answered", answer="Yes.", usage=Usage())
    output.print_json(final)
    printed = capsys.readouterr().out
    assert json.loads(printed) == final.model_dump(mode="json", by_alias=True) and "runId" in printed

    output.print_json_lines([AnswerDelta(text="Yes."), final])
    lines = capsys.readouterr().out.splitlines()
    assert lines == [AnswerDelta(text="Yes.").model_dump_json(), final.model_dump_json()]

    output.print_error(NamespaceNotFound("namespace 'nope' does not exist", namespace="nope"))
    error = json.loads(capsys.readouterr().out)
    assert error == {
        "error": {
            "code": "namespace_not_found",
            "message": "namespace 'nope' does not exist",
            "details": {"namespace": "nope"},
        }
    }
