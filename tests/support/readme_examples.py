"""README.md's shell and Python examples, turned into the one script a newcomer would paste.

Every fenced block tagged ``bash``, ``sh`` or ``python`` is an example, run in the order the README
gives them, in one bash session at the repository's root (variables and background processes carry
from one block to the next, as they do in a reader's terminal). Python blocks run with the
project's interpreter. Nothing is skipped; the only rewrites are listed in :data:`REWRITES` and each
says why. ``curl`` is wrapped: each response's status and body are kept for the test to check, and an
HTTP error fails its example as it would a reader's.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

RUNNABLE = ("bash", "sh", "python")
"""Fence languages that are examples. ``json`` and ``ts`` blocks are shapes and code shown, not run
(the TypeScript client's own tests run its code); an untagged fence is a layout listing."""

SELF = "make test"
"""The README's second command runs this very test, so it cannot be run from inside it: `.ci/run`
runs it (tests/e2e/test_readme_examples.py checks that it does, and nothing else)."""

_FENCE = re.compile(r"^```(\w*)\s*$")


@dataclass(frozen=True)
class Example:
    index: int
    section: str
    language: str
    line: int
    """1-based line of the example's first code line in README.md."""
    code: str


def examples(readme: str) -> list[Example]:
    """Every runnable fenced block, in order, with the ``##`` section it sits in."""
    found: list[Example] = []
    section, language, start, body = "(top)", None, 0, list[str]()
    for number, line in enumerate(readme.splitlines(), 1):
        fence = _FENCE.match(line)
        if language is None and fence:
            language, start, body = fence.group(1), number + 1, []
        elif language is not None and line.startswith("```"):
            if language in RUNNABLE:
                found.append(Example(len(found), section, language, start, "\n".join(body)))
            language = None
        elif language is not None:
            body.append(line)
        elif line.startswith("## "):
            section = line[3:].strip()
    return found


@dataclass(frozen=True)
class Rewrite:
    pattern: str
    replacement: str
    why: str


def rewrites(port: int, home: Path, site_port: int = 8700) -> list[Rewrite]:
    """The README as run here differs from the README as read only by these."""
    return [
        Rewrite(
            r"(?<=localhost:)8000\b|(?<=127\.0\.0\.1:)8000\b|(?<=--port )8000\b",
            str(port),
            "a free port: 8000 may be taken on a shared machine",
        ),
        Rewrite(
            r"(?<=127\.0\.0\.1:)8700\b|(?<=http\.server )8700\b",
            str(site_port),
            "a free port for the local site the data-sources example crawls",
        ),
        Rewrite(r"\.ragline/demo\b", str(home), "a fresh home per run, not the checkout's own"),
    ]


def rewritten(code: str, port: int, home: Path, site_port: int) -> str:
    for rewrite in rewrites(port, home, site_port):
        code = re.sub(rewrite.pattern, rewrite.replacement, code)
    return "\n".join(
        f": {shlex.quote(line)} is what .ci/run runs" if line.split("#")[0].strip() == SELF else line
        for line in code.splitlines()
    )


CURL = r"""
# curl as the README uses it, plus a record: each response's body kept under $RAGLINE_README_LOG as
# <example>.<nanoseconds>.<status>, and an HTTP status >= 400 fails the example (curl -s alone would not).
curl() {
  local body status
  body=$(mktemp)
  status=$(command curl -sS -o "$body" -w '%{http_code}' "$@") || { cat "$body"; rm -f "$body"; return 7; }
  # named by the time it came (a curl in $(…) or a pipe runs in a subshell: no counter survives it)
  cp "$body" "$RAGLINE_README_LOG/$RAGLINE_README_EXAMPLE.$(date +%s%N).$status"
  cat "$body"; rm -f "$body"
  if (( status >= 400 )); then echo "HTTP $status from curl $*" >&2; return 22; fi
}
"""


def script(found: list[Example], *, port: int, site_port: int, home: Path) -> str:
    """One bash script: the examples in order, each announced on stderr before it runs."""
    parts = ["set -euo pipefail", 'export PATH="$PWD/.venv/bin:$PATH"', CURL]
    for example in found:
        code = rewritten(example.code, port, home, site_port)
        marker = f"::example {example.index} ({example.section}, line {example.line})::"
        # on a line of its own: the output before it may not end with one
        parts.append(f"printf '\\n%s\\n' {shlex.quote(marker)} >&2")
        parts.append(f"RAGLINE_README_EXAMPLE={example.index}")
        if example.language == "python":
            parts.append(f"python - <<'RAGLINE_README_PY'\n{code}\nRAGLINE_README_PY")
        else:
            parts.append(code)
    parts.append("printf '\\n::done::\\n' >&2")
    return "\n".join(parts) + "\n"
