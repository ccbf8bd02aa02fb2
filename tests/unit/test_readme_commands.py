"""The README's command table names every command and subcommand group of ``ragline``."""

from __future__ import annotations

import re
from pathlib import Path

import typer.main

from ragline.cli.app import app

README = Path(__file__).parents[2] / "README.md"


def test_the_command_table_names_every_command() -> None:
    text = README.read_text(encoding="utf-8")
    table = text[text.index("## The `ragline` command") : text.index("Every `ragline` process")]
    named = set(re.findall(r"^\| `ragline ([a-z-]+)", table, flags=re.MULTILINE))
    commands = set(typer.main.get_command(app).commands)  # type: ignore[attr-defined]
    assert commands - named == set(), "commands missing from the README's table"
    assert named - commands == set(), "the README's table names commands that do not exist"
    assert "`ragline namespaces reindex" in table
