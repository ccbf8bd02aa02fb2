"""Every ``curl`` example in the README that sends a JSON body says so (``content-type:
application/json``): curl's ``-d`` alone sends a form type, which the API refuses with 415."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).parents[2] / "README.md"


def curl_commands(text: str) -> list[tuple[int, str]]:
    """Each ``curl`` command with its continuation lines (a trailing backslash, or an open quote)."""
    lines, found, i = text.split("\n"), [], 0
    while i < len(lines):
        if not lines[i].lstrip().startswith("curl "):
            i += 1
            continue
        start, command = i, [lines[i]]
        while command[-1].rstrip().endswith("\\") or "\n".join(command).count("'") % 2:
            i += 1
            command.append(lines[i])
        found.append((start + 1, "\n".join(command)))
        i += 1
    return found


def test_every_curl_example_with_a_json_body_sends_its_content_type() -> None:
    commands = curl_commands(README.read_text(encoding="utf-8"))
    with_body = [(line, c) for line, c in commands if re.search(r"\s(-d|--data(-raw)?)\s", c)]
    assert len(with_body) >= 8
    missing = [line for line, c in with_body if "content-type: application/json" not in c.lower()]
    assert missing == [], f"README lines {missing}: a JSON body without its content-type is a 415"
