"""``--json``: every ``ragline`` command that prints a result prints it as one JSON document on stdout
and nothing else — the API's own body where it has a route (validated by the API's model, field for
field), a documented camelCase body where it has none — ``chat`` its SSE events as JSON lines, and a
failure the API's error body, with the exit code it has without ``--json``. Retrieval, chat, eval and
namespaces here; the administration commands in ``test_cli_json_admin``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, TypeVar

import pytest
from pydantic import BaseModel, TypeAdapter

from ragline.agents.events import AnswerDelta, RunEvent, RunFinished, Sources
from ragline.cli.app import app
from ragline.cli.views import IngestReport, RetrievalEval
from ragline.domain.api import (
    ErrorBody,
    HostingSearchResponse,
    NamespaceList,
    NamespaceView,
    NewKeyView,
    SearchResponse,
)
from tests.e2e.test_cli import ROOT, SAMPLES, home, runner  # noqa: F401  (the fixture)

pytestmark = pytest.mark.e2e
EVENTS: TypeAdapter[RunEvent] = TypeAdapter(RunEvent)
M = TypeVar("M", bound=BaseModel)


def run(*args: str) -> tuple[int, str]:
    """``ragline ARGS --json``: its exit code and its stdout alone (its stderr is the progress's)."""
    result = runner.invoke(app, [*args, "--json"], catch_exceptions=False)
    return result.exit_code, result.stdout


def document(out: str) -> Any:
    """stdout as one JSON document: anything else on it (a table, a progress bar, a warning, a second
    document) fails to parse."""
    assert out.strip(), "nothing on stdout"
    return json.loads(out)


def body(model: type[M], out: str) -> M:
    """stdout as the API's ``model``, exactly: parsed by it and serialised back as the API does,
    it is the same JSON (no field missing, none added, none renamed)."""
    value = document(out)
    parsed = model.model_validate(value)
    assert parsed.model_dump(mode="json", by_alias=True) == value
    return parsed


def refused(args: tuple[str, ...], code: str) -> ErrorBody:
    """The command fails with the API's error body on stdout, and the exit code it has without --json."""
    plain = runner.invoke(app, list(args), catch_exceptions=False).exit_code
    exit_code, out = run(*args)
    assert exit_code == plain != 0, (exit_code, plain, out)
    error = body(ErrorBody, out)
    assert error.error.code == code and set(document(out)["error"]) == {"code", "message", "details"}
    return error


def test_ingest_prints_each_file_and_the_totals(home: Path, tmp_path: Path) -> None:  # noqa: F811
    folder = tmp_path / "docs"
    folder.mkdir()
    shutil.copy(SAMPLES / "faq.txt", folder / "faq.txt")
    (folder / "empty.txt").write_bytes(b"")
    fresh = str(tmp_path / "home")
    code, out = run("ingest", str(folder), "-n", "docs", "--create", "--home", fresh)
    assert code == 1, out  # a file failed: exit 1, as without --json
    report = body(IngestReport, out)
    files = {f.file: f for f in report.files}
    assert files["faq.txt"].status == "indexed" and files["faq.txt"].chunks >= 1
    assert files["faq.txt"].document_id == "faq.txt" and files["faq.txt"].error is None
    assert files["empty.txt"].status == "failed" and files["empty.txt"].error is not None
    assert files["empty.txt"].error.code == "empty_document"
    totals = report.totals
    assert (totals.files, totals.indexed, totals.failed, totals.chunks) == (2, 1, 1, files["faq.txt"].chunks)
    # the sample corpus again: every file unchanged, exit 0
    code, out = run("ingest", str(SAMPLES), "-n", "northwind", "--home", str(home))
    assert code == 0, out
    again = body(IngestReport, out)
    assert (again.namespace, again.totals.unchanged, again.totals.failed) == ("northwind", 7, 0)
    refused(("ingest", str(folder), "-n", "nope", "--home", fresh), "namespace_not_found")


def test_search_prints_the_apis_search_body(home: Path) -> None:  # noqa: F811
    code, out = run("search", "battery charging time", "-n", "northwind", "-k", "3", "--home", str(home))
    assert code == 0, out
    response = body(SearchResponse, out)
    assert response.mode == "hybrid" and 1 <= len(response.hits) <= 3
    assert response.hits[0].scores is not None and response.hits[0].namespace == "northwind"
    assert "documentId" in document(out)["hits"][0]  # camelCase, as the API answers
    refused(("search", "chain", "-n", "nope", "--home", str(home)), "namespace_not_found")
    refused(("search", "chain", "-n", "northwind", "-m", "fuzzy", "--home", str(home)), "invalid_request")
    refused(("search", "chain", "--filter", "{nope", "--home", str(home)), "invalid_request")


def test_hosting_search_prints_the_apis_hosting_search_body(home: Path) -> None:  # noqa: F811
    code, out = run("hosting-search", "How often should I lubricate the chain?", "-n", "northwind",
                    "--home", str(home))  # fmt: skip
    assert code == 0, out
    response = body(HostingSearchResponse, out)
    assert response.chunks and response.rounds and response.total_queries >= 1
    assert {c.namespace for c in response.chunks} == {"northwind"}
    refused(("hosting-search", "chain?", "-n", "nope", "--home", str(home)), "namespace_not_found")


def events(out: str) -> list[RunEvent]:
    """stdout as JSON lines, each exactly the ``data:`` of one of the API's SSE events."""
    lines = out.splitlines()
    assert lines, "no event"
    parsed = [EVENTS.validate_json(line) for line in lines]
    for line, event in zip(lines, parsed, strict=True):
        assert event.model_dump_json() == line  # as streaming.sse serialises it, byte for byte
    return parsed


def test_chat_prints_the_runs_events_as_json_lines_ending_with_the_final_one(home: Path) -> None:  # noqa: F811
    code, out = run("chat", "How often should I lubricate the chain?", "-n", "northwind", "--home", str(home))
    assert code == 0, out
    run_ = events(out)
    assert isinstance(run_[-1], RunFinished) and sum(isinstance(e, RunFinished) for e in run_) == 1
    final = run_[-1]
    assert final.exit_reason == "answered" and final.conversation_id
    assert "".join(e.text for e in run_ if isinstance(e, AnswerDelta)) == final.answer
    assert any(isinstance(e, Sources) and e.chunks for e in run_)
    assert "200 kilometres" in final.answer or "200 km" in final.answer
    # --continue and --conversation: the same conversation, still JSON lines
    code, out = run("chat", "--continue", "And the brakes?", "--home", str(home))
    assert code == 0, out
    follow_up = events(out)[-1]
    assert isinstance(follow_up, RunFinished) and follow_up.conversation_id == final.conversation_id
    code, out = run("chat", "And the tyres?", "--conversation", final.conversation_id, "--home", str(home))
    assert code == 0, out
    third = events(out)[-1]
    assert isinstance(third, RunFinished) and third.conversation_id == final.conversation_id


def test_chat_failures_are_the_apis_error_body(home: Path, tmp_path: Path) -> None:  # noqa: F811
    refused(("chat", "chain?", "-n", "nope", "--home", str(home)), "namespace_not_found")
    refused(("chat", "chain?", "--agent", "magic", "--home", str(home)), "invalid_request")
    error = refused(("chat", "--continue", "And?", "--home", str(tmp_path)), "invalid_request")
    assert "no conversation to continue" in error.error.message


def test_eval_prints_the_scores_of_each_mode(tmp_path: Path) -> None:
    dataset = ROOT / "tests" / "fixtures" / "beir-mini"
    code, out = run("eval", str(dataset), "--modes", "keyword,hybrid:rrf,accurate", "--home", str(tmp_path))
    assert code == 0, out
    scores = body(RetrievalEval, out)
    assert (scores.dataset, scores.split, scores.queries) == ("beir-mini", "test", 3)
    assert [m.mode for m in scores.modes] == ["keyword", "hybrid:rrf", "accurate"]
    assert all(m.ndcg_at_10 == 1.0 and m.queries == 3 and m.ms_per_query > 0 for m in scores.modes)
    assert scores.reranker == "none (fused order)" and "ndcgAt10" in document(out)["modes"][0]
    refused(("eval", str(tmp_path), "--home", str(tmp_path)), "invalid_request")


def test_namespaces_create_list_and_reindex_print_the_apis_namespace_views(tmp_path: Path) -> None:
    home_ = str(tmp_path / "home")
    code, out = run("namespaces", "create", "handbook", "--description", "the staff handbook",
                    "--home", home_)  # fmt: skip
    assert code == 0, out
    created = body(NamespaceView, out)
    assert (created.namespace_id, created.generation) == ("handbook", 1)
    assert created.description == "the staff handbook"
    refused(("namespaces", "create", "handbook", "--home", home_), "conflict")
    code, out = run("namespaces", "list", "--home", home_)
    assert code == 0 and [n.namespace_id for n in body(NamespaceList, out).namespaces] == ["handbook"]

    assert run("ingest", str(SAMPLES / "faq.txt"), "-n", "handbook", "--home", home_)[0] == 0
    code, out = run("namespaces", "reindex", "handbook", "--chunk-tokens", "64", "--keep-old-for", "0",
                    "--home", home_)  # fmt: skip
    assert code == 0, out  # its progress went to stderr
    rebuilt = body(NamespaceView, out)
    assert (rebuilt.generation, rebuilt.chunk_tokens) == (2, 64)
    assert rebuilt.rebuild is not None and rebuilt.rebuild.state == "ready"
    refused(("namespaces", "reindex", "nope", "--home", home_), "namespace_not_found")
    refused(("namespaces", "reindex", "handbook", "--chunking", "paragraphs", "--home", home_),
            "invalid_request")  # fmt: skip


def test_the_real_process_prints_the_key_alone_for_jq(tmp_path: Path) -> None:
    """As a shell runs it (``… --json | jq -r .apiKey``): a subprocess's stdout, not the test runner's."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "shared"), str(ROOT)])}

    def ragline(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "ragline.cli.app", *args, "--home", str(tmp_path), "--json"]
        return subprocess.run(command, capture_output=True, text=True, env=env, check=False, timeout=300)

    assert ragline("tenants", "create", "local").returncode == 0
    created = ragline("keys", "create", "--tenant", "local", "--scopes", "admin")
    assert created.returncode == 0, created.stderr
    key = NewKeyView.model_validate(json.loads(created.stdout))
    assert key.api_key.startswith("rl_") and key.scopes == ["admin"]
    assert ragline("ingest", str(SAMPLES / "faq.txt"), "-n", "docs", "--create").returncode == 0
    found = ragline("search", "test rides", "-n", "docs")
    assert found.returncode == 0 and SearchResponse.model_validate(json.loads(found.stdout)).hits
    missing = ragline("search", "test rides", "-n", "nope")
    assert missing.returncode == 2 and json.loads(missing.stdout)["error"]["code"] == "namespace_not_found"
