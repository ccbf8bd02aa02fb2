"""Every shell and Python example in README.md runs, in order, against a real `ragline serve`.

Given a fresh home and a free port, when README.md's examples run as one pasted session (see
:mod:`tests.support.readme_examples`: `make demo`, then the first ten minutes — a served API, keys,
an end user, a filter — then every later section's examples), then the session ends with status 0,
every example was reached, every HTTP response was a success whose body is JSON (or a stream of JSON
events), and each response the README shows (a ``json`` block marked as the response of the example
above it) has at least the fields the README shows.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.readme_examples import RUNNABLE, SELF, examples, rewrites, script

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
SHOWN = "<!-- readme-test: the response of the example above -->"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The README pasted into one bash session; its output, its curl record and its exit status."""
    tmp = tmp_path_factory.mktemp("readme")
    home, log, app = tmp / "home", tmp / "responses", tmp / "your-app"
    log.mkdir()
    app.mkdir()
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "RAGLINE_", "AWS_"))}
    env |= {"RAGLINE_README_LOG": str(log), "DEMO_HOME": str(home), "YOUR_APP": str(app)}
    output = tmp / "output.txt"
    with output.open("wb") as out:
        # its own process group: the README starts `ragline serve` in the background
        proc = subprocess.Popen(
            ["bash", "-c", script(examples(README), port=port, site_port=_free_port(), home=home)],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            status = proc.wait(timeout=1200)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
    return {"status": status, "output": output.read_text(errors="replace"), "log": log, "home": home}


def test_the_readme_session_runs_every_example_to_the_end(session: dict[str, Any]) -> None:
    tail = session["output"][-6000:]
    assert session["status"] == 0, tail
    reached = {int(n) for n in re.findall(r"^::example (\d+) ", session["output"], re.M)}
    assert reached == set(range(len(examples(README)))), tail
    assert "::done::" in session["output"]


def test_make_demo_ran_into_the_sessions_home(session: dict[str, Any]) -> None:
    # the first example's `make demo`, with the Makefile's DEMO_HOME taken from the environment
    assert any(session["home"].iterdir()), "make demo did not write to DEMO_HOME"
    assert "make demo" in examples(README)[0].code


def _json_documents(body: bytes) -> list[Any]:
    text = body.decode()
    if text.lstrip().startswith("{") or text.lstrip().startswith("["):
        return [json.loads(text)]
    events = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
    assert events, f"neither JSON nor an event stream: {text[:300]!r}"
    return [json.loads(e) for e in events]


def test_every_response_was_a_success_with_a_json_body(session: dict[str, Any]) -> None:
    responses = sorted(session["log"].iterdir())
    assert len(responses) >= 20, [r.name for r in responses]
    for response in responses:
        status = int(response.name.rsplit(".", 1)[1])
        assert 200 <= status < 300, response.name
        if response.read_bytes().strip():
            _json_documents(response.read_bytes())


def _shown_responses() -> list[tuple[int, dict[str, Any]]]:
    """(example index, the JSON the README shows as that example's last response)."""
    shown = []
    for match in re.finditer(re.escape(SHOWN) + r"\s*```json\n(.*?)```", README, re.S):
        before = README[: match.start()].count("\n") + 1
        index = max(e.index for e in examples(README) if e.line < before)
        shown.append((index, json.loads(match.group(1))))
    return shown


def _missing(shown: Any, real: Any, path: str = "") -> list[str]:
    """The fields ``shown`` has that ``real`` lacks (a field present as null is there)."""
    if real is None:
        return []
    if isinstance(shown, dict):
        if not isinstance(real, dict):
            return [f"{path or '.'} is not an object"]
        gaps = []
        for key, value in shown.items():
            if key == "…":
                continue
            if key not in real:
                gaps.append(f"{path}.{key}")
            else:
                gaps += _missing(value, real[key], f"{path}.{key}")
        return gaps
    if isinstance(shown, list) and shown and isinstance(real, list):
        return _missing(shown[0], real[0], f"{path}[0]") if real else []
    return []


def test_each_response_the_readme_shows_has_the_fields_it_shows(session: dict[str, Any]) -> None:
    shown = _shown_responses()
    assert shown, "the README marks no response"
    for index, document in shown:
        last = max(session["log"].glob(f"{index}.*"), key=lambda p: int(p.name.split(".")[1]))
        (real,) = _json_documents(last.read_bytes())[-1:]
        assert _missing(document, real) == [], f"example {index}: {last.name}"


def test_every_runnable_fence_is_an_example_and_nothing_else_is_rewritten() -> None:
    fences = re.findall(r"^```(\w+)\s*$", README, re.M)
    assert len(examples(README)) == sum(1 for f in fences if f in RUNNABLE)
    assert [r.why for r in rewrites(8001, Path("/tmp/h"))] == [
        "a free port: 8000 may be taken on a shared machine",
        "a free port for the local site the data-sources example crawls",
        "a fresh home per run, not the checkout's own",
    ]
    assert (ROOT / ".ci" / "run").read_text().strip().splitlines()[-1] == SELF


def test_the_first_ten_minutes_shows_an_end_users_reach_and_a_filter(session: dict[str, Any]) -> None:
    # The second example of "The first ten minutes": a document only `sales` may read, the same search
    # for a `sales` and a `support` end user, then a filter on its metadata.
    first = [e for e in examples(README) if e.section == "The first ten minutes"]
    responses = sorted(session["log"].glob(f"{first[1].index}.*"), key=lambda p: int(p.name.split(".")[1]))
    bodies = [d for r in responses for d in _json_documents(r.read_bytes())]
    searches = [d for d in bodies if isinstance(d, dict) and isinstance(d.get("hits"), list)]
    sales, support, filtered = ([hit["documentId"] for hit in s["hits"]] for s in searches)
    assert "dealer-terms.md" in sales
    assert "dealer-terms.md" not in support and support
    assert filtered == ["dealer-terms.md"]
