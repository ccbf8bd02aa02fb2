"""The ``ragline`` CLI end to end on the embedded backend (real parsers, embedder, SQLite store)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragline.cli.app import app
from ragline.config import Settings
from ragline.domain.billing import current_period
from ragline.domain.models import TenantScope
from ragline.wiring import Container
from tests.support.openai_replay import SERVED_MODEL, OpenAIReplay, error

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).parents[2]
SAMPLES = ROOT / "samples" / "northwind"
runner = CliRunner()


def cli(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args), catch_exceptions=False)
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    h = tmp_path_factory.mktemp("home")
    code, out = cli("ingest", str(SAMPLES), "-n", "northwind", "--create", "--home", str(h))
    assert code == 0, out
    return h


def ingested(factory: pytest.TempPathFactory, files: list[Path], namespace: str) -> Path:
    """A fresh home with ``files`` (and nothing beside them) ingested into a new ``namespace``."""
    folder = factory.mktemp(namespace)
    for f in files:
        shutil.copy(f, folder / f.name)
    h = factory.mktemp("home")
    code, out = cli("ingest", str(folder), "-n", namespace, "--create", "--home", str(h))
    assert code == 0, out
    return h


def stored(home: Path, document_id: str, namespace: str = "northwind") -> int:
    c = Container(Settings(home=home))
    return c.stores.scoped(TenantScope(tenant_id="local", namespace_id=namespace)).count(document_id)


def test_ingest_indexes_every_sample_format_and_prints_a_summary(home: Path) -> None:
    for name in (
        "faq.txt",
        "returns-policy.md",
        "maintenance-guide.html",
        "volt-manual.pdf",
        "workshop-services.docx",
        "stores.json",
        "service-intervals.csv",
    ):
        assert stored(home, name) >= 1, name
    code, out = cli("ingest", str(SAMPLES), "-n", "northwind", "--home", str(home))
    assert code == 0 and out.count("unchanged") == 7


def _answer_and_sources(out: str) -> tuple[str, dict[int, str]]:
    """The streamed answer (after the tool lines) and the numbered sources listed after it."""
    answer, listing = out.split("\nSources\n", 1)
    sources = {int(n): cid for n, cid in re.findall(r"^  \[(\d+)\] (\S+#\d+) — ", listing, re.M)}
    return answer, sources


def test_chat_streams_an_answer_that_cites_real_chunks(home: Path) -> None:
    code, out = cli("chat", "How often should I lubricate the chain?", "-n", "northwind", "--home", str(home))
    assert code == 0, out
    assert "200 kilometres" in out or "200 km" in out
    answer, sources = _answer_and_sources(out)
    cited = {int(n) for n in re.findall(r"\[(\d+)\]", answer)}
    assert cited and cited == set(sources)  # every number in the text is a listed source, and back
    for cid in sources.values():
        doc, seq = cid.rsplit("#", 1)
        assert stored(home, doc) > int(seq), cid
    assert "extractive" in out


@pytest.mark.parametrize("agent", ["auto", "deep_search", "chain_of_rag"])
def test_chat_with_each_agent_offline_routes_and_cites(home: Path, agent: str) -> None:
    question = "How often should I lubricate the chain, and can I return a used bike?"
    code, out = cli("chat", question, "--agent", agent, "--home", str(home))
    assert code == 0, out
    assert "namespaces: northwind" in out  # no -n: the collection router took the only namespace
    if agent == "auto":
        assert "agent: agentic" in out and "offline" in out
    answer, sources = _answer_and_sources(out)
    assert "<citation" not in out and "[1]" in answer and 1 in sources and "exit answered" in out


def test_chat_in_a_tenant_with_no_namespace_is_not_charged(tmp_path: Path) -> None:
    # Given a home whose tenant has no namespace yet
    # When the user asks anyway
    code, out = cli("chat", "How often should I lubricate the chain?", "--home", str(tmp_path))
    # Then the run ends with nothing to search, and no run is counted
    assert code == 0, out
    assert "no_namespaces" in out
    assert Container(Settings(home=tmp_path)).ledger.period_runs("local", current_period()) == 0


def test_chat_refuses_an_unknown_agent(home: Path) -> None:
    code, out = cli("chat", "chain?", "--agent", "magic", "-n", "northwind", "--home", str(home))
    assert code == 2 and "invalid_request" in out and "agent" in out


def test_search_prints_hits_with_breakdown(home: Path) -> None:
    code, out = cli(
        "search", "battery charging time", "-n", "northwind", "--mode", "keyword", "--home", str(home)
    )
    assert code == 0 and "volt-manual.pdf#0" in out


@pytest.mark.parametrize("mode", ["semantic", "hybrid"])
def test_search_modes_find_the_pdf(home: Path, mode: str) -> None:
    code, out = cli(
        "search", "electric bike range", "-n", "northwind", "-m", mode, "-k", "3", "--home", str(home)
    )
    assert code == 0 and "volt-manual.pdf" in out


def test_bad_files_fail_clearly_and_store_nothing(home: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "broken.pdf").write_bytes(b"%PDF-1.4 this is not really a pdf")
    (bad / "empty.txt").write_bytes(b"")
    (bad / "notes.xyz").write_text("some text")
    shutil.copy(SAMPLES / "faq.txt", bad / "good.txt")
    code, out = cli("ingest", str(bad), "-n", "northwind", "--home", str(home))
    assert code == 1
    assert "unreadable_document" in out and "empty_document" in out and "unsupported_document" in out
    assert (
        stored(home, "broken.pdf") == 0 and stored(home, "empty.txt") == 0 and stored(home, "notes.xyz") == 0
    )
    assert stored(home, "good.txt") == 1


def test_unknown_namespace_is_a_clear_error(home: Path) -> None:
    for args in (("search", "chain"), ("chat", "chain?"), ("ingest", str(SAMPLES / "faq.txt"))):
        code, out = cli(*args, "-n", "nope", "--home", str(home))
        assert code == 2 and "namespace_not_found" in out and "'nope'" in out, args


def test_bad_mode_is_rejected(home: Path) -> None:
    code, out = cli("search", "chain", "-n", "northwind", "-m", "fuzzy", "--home", str(home))
    assert code == 2 and "unknown mode" in out


def test_eval_prints_metrics_per_mode(tmp_path: Path) -> None:
    code, out = cli(
        "eval", str(ROOT / "tests" / "fixtures" / "beir-mini"), "--split", "test", "--home", str(tmp_path)
    )
    assert code == 0, out
    rows = {
        line.split()[1]: line
        for line in out.splitlines()
        if re.match(r"^│ (keyword|semantic|hybrid|accurate)", line)
    }
    assert set(rows) == {"keyword", "semantic", "hybrid:rrf", "hybrid:convex", "hybrid:adaptive", "accurate"}
    assert "accurate: rerank none (fused order)" in out  # chat's default pipeline, its reranker named
    assert "3 queries" in out
    # three easy queries: every mode ranks the right document first
    for line in rows.values():
        assert "1.0000" in line


def first_hit(out: str) -> tuple[str, float]:
    """The first row of ``ragline search``'s table: (chunk id, score)."""
    rows = [line.split("│") for line in out.splitlines() if line.startswith("│")]
    starts = [i for i, r in enumerate(rows) if r[1].strip() == "1"]
    assert starts, out
    first = rows[starts[0]]
    chunk = first[2].strip() + "".join(r[2].strip() for r in rows[starts[0] + 1 :] if not r[1].strip())
    return chunk.split()[0] if chunk else chunk, float(first[3])


def test_search_ranks_the_only_exact_match_first(home: Path) -> None:
    # "LS11 5PS" is in one chunk only; min-max fusion scored that keyword hit 0 and ranked it second
    for fusion in ("convex", "rrf"):
        code, out = cli("search", "LS11 5PS", "-n", "northwind", "--fusion", fusion, "--home", str(home))
        assert code == 0, out
        assert first_hit(out)[0].startswith("stores.json#0"), (fusion, out)


PAID_LEAVE = "How many days of paid leave do staff get?"


@pytest.fixture(scope="module")
def hr(home: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    """An "hr" namespace beside northwind, holding one chunk: the paid-leave answer."""
    folder = tmp_path_factory.mktemp("hr")
    (folder / "holidays.txt").write_text("Staff holidays: twenty five days of paid leave each year.")
    code, out = cli("ingest", str(folder), "-n", "hr", "--create", "--home", str(home))
    assert code == 0, out
    return "hr"


def test_search_ranks_the_paid_leave_answer_first_at_full_weight(home: Path, hr: str) -> None:
    code, out = cli("search", PAID_LEAVE, "-n", hr, "--home", str(home))
    assert code == 0 and first_hit(out) == ("holidays.txt#0", 1.0), out


@pytest.mark.parametrize(
    ("question", "answer"), [(PAID_LEAVE, "holidays.txt#0"), ("LS11 5PS", "stores.json#0")]
)
def test_chat_over_two_namespaces_cites_the_answer_from_either(
    home: Path, hr: str, question: str, answer: str
) -> None:
    # min-max fusion merged per-namespace scores: the one-chunk namespace's answer scored 0.0 and the
    # offline model answered from northwind's test-ride and returns chunks instead
    code, out = cli("chat", question, "-n", "northwind", "-n", hr, "--home", str(home))
    assert code == 0, out
    assert answer in _answer_and_sources(out)[1].values(), out


def test_search_accepts_convex_fusion_and_rejects_unknown_ones(home: Path) -> None:
    code, out = cli("search", "chain wear", "-n", "northwind", "--fusion", "convex", "--home", str(home))
    assert code == 0 and "maintenance" in out
    code, out = cli("search", "chain wear", "-n", "northwind", "--fusion", "magic", "--home", str(home))
    assert code == 2 and "unknown fusion" in out


def test_search_takes_a_filter_applied_in_the_store(home: Path) -> None:
    args = ("search", "chain wear", "-n", "northwind", "--home", str(home))
    assert "maintenance" in cli(*args)[1]
    code, out = cli(*args, "--filter", '{"exists": {"key": "nowhere"}}')
    assert code == 0 and "maintenance" not in out  # no document has the key: nothing matches
    code, out = cli(*args, "--filter", '{"notEquals": {"key": "nowhere", "value": "x"}}')
    assert code == 0 and "maintenance" in out  # a missing key is not equal to anything
    code, out = cli(*args, "--filter", '{"bogus": {"key": "a", "value": 1}}')
    assert code == 2 and "unknown filter operator" in out
    assert cli(*args, "--filter", "{not json")[0] == 2


def test_eval_on_a_folder_that_is_not_beir_fails_clearly(tmp_path: Path) -> None:
    code, out = cli("eval", str(tmp_path), "--home", str(tmp_path))
    assert code == 2 and "not a BEIR dataset" in out


def test_tenants_delete_purges_the_tenant_and_status_deleted_does_the_same(tmp_path: Path) -> None:
    h = str(tmp_path / "home")
    for tenant in ("acme", "globex"):
        assert cli("tenants", "create", tenant, "--home", h)[0] == 0
        code, out = cli(
            "ingest", str(SAMPLES / "faq.txt"), "-n", "docs", "--create", "--tenant", tenant, "--home", h
        )
        assert code == 0, out
    code, out = cli("tenants", "delete", "acme", "--home", h)
    assert code == 0 and "tenant acme is deleted" in out, out
    c = Container(Settings(home=Path(h)))
    assert c.stores.scoped(TenantScope(tenant_id="acme", namespace_id="docs")).count() == 0
    assert c.registry.list_namespaces("acme") == [] and c.documents.list("acme", "docs") == []
    assert c.stores.scoped(TenantScope(tenant_id="globex", namespace_id="docs")).count() > 0
    code, out = cli("tenants", "status", "globex", "deleted", "--home", h)
    assert code == 0 and "tenant globex is deleted" in out, out
    assert c.stores.scoped(TenantScope(tenant_id="globex", namespace_id="docs")).count() == 0
    code, out = cli("tenants", "status", "acme", "active", "--home", h)
    assert code != 0 and "deleted" in out


def test_chat_prints_an_upstream_error_with_its_reason(home: Path, openai_replay: OpenAIReplay) -> None:
    openai_replay.script([error(500, times=None)])
    env = {
        "OPENAI_BASE_URL": openai_replay.base_url,
        "OPENAI_API_KEY": "test-key",
        "RAGLINE_LLM_MAX_RETRIES": "0",
        "RAGLINE_RERANKER": "none",
    }
    result = runner.invoke(app, ["chat", "chain?", "-n", "northwind", "--home", str(home)], env=env)
    assert result.exit_code == 0, result.output
    assert "error [dependency_unavailable]" in result.output and "exit error" in result.output
    assert f"model: {SERVED_MODEL}" in result.output  # the served model's name, not a made-up default


def test_chat_shows_the_answer_once_with_numbered_citations(home: Path) -> None:
    # Issue 30 #5: the answer streams once, markers shown as [n], never as raw markup
    _, out = cli("chat", "How often should I lubricate the chain?", "-n", "northwind", "--home", str(home))
    answer, sources = _answer_and_sources(out)
    assert "<citation" not in out and "citation ids" not in out
    sentence = "Clean and lubricate the chain every 200 kilometres"
    assert out.count(sentence) == 1 and sentence in answer
    assert "[1]" in answer and sources[1].endswith("#0")


def test_a_new_default_namespace_from_the_cli_takes_over_the_default(tmp_path: Path) -> None:
    # Given a tenant whose default is "main" (issue 25 #4: no path leaves a tenant two defaults)
    for name in ("main", "later"):
        code, out = cli("namespaces", "create", name, "--default", "--home", str(tmp_path))
        assert code == 0, out
    # Then only the last one created as default is the default
    spaces = Container(Settings(home=tmp_path)).registry.list_namespaces("local")
    assert [n.namespace_id for n in spaces if n.default] == ["later"]


def test_a_folders_metadata_sidecars_label_their_files_and_a_bad_one_fails_its_file(tmp_path: Path) -> None:
    """Issue 29 #1: ``<file>.metadata.json`` beside a file is its metadata (Bedrock's shape, plus the
    ACL), never a document; a bad sidecar fails its file with the reason, the others are indexed."""
    folder = tmp_path / "docs"
    folder.mkdir()
    shutil.copy(SAMPLES / "faq.txt", folder / "faq.txt")
    shutil.copy(SAMPLES / "returns-policy.md", folder / "returns.md")
    (folder / "faq.txt.metadata.json").write_text(
        '{"metadataAttributes": {"year": {"value": {"type": "NUMBER", "numberValue": 2024}},'
        ' "team": "support"}, "access": {"groups": ["staff"]}}'
    )
    (folder / "returns.md.metadata.json").write_text('{"metadataAttributes": {"year": "last"}}')
    home = tmp_path / "home"
    code, out = cli("ingest", str(folder), "-n", "labelled", "--create", "--home", str(home))
    assert code == 1 and "metadata_type_clash" in out
    c = Container(Settings(home=home))
    faq = c.documents.get("local", "labelled", "faq.txt")
    assert faq is not None and (faq.attributes, faq.readers) == (
        {"year": 2024.0, "team": "support"},
        ("g:staff",),
    )
    chunks = c.stores.scoped(TenantScope(tenant_id="local", namespace_id="labelled")).neighbors("faq.txt", 0)
    assert chunks and all(ch.metadata.attributes == faq.attributes for ch in chunks)
    assert c.documents.get("local", "labelled", "faq.txt.metadata.json") is None
    assert stored(home, "returns.md", "labelled") == 0


def test_the_operator_creates_user_keys_and_sets_a_tenants_identity_provider(tmp_path: Path) -> None:
    from tests.support.identity_tokens import SigningKey

    home = str(tmp_path)
    assert cli("tenants", "create", "acme", "--home", home)[0] == 0
    code, out = cli(
        "keys", "create", "--tenant", "acme", "--scopes", "search", "--require-user", "--home", home
    )
    assert code == 0 and "user context: required" in out, out
    [key] = Container(Settings(home=tmp_path)).tenancy.list_keys("acme")
    assert (key.may_assert_user, key.requires_user) == (True, True)

    provider = tmp_path / "idp.json"
    jwk = SigningKey("k1").jwk
    provider.write_text(json.dumps({"issuer": "https://idp.acme.test/", "audiences": ["app"], "jwks": [jwk]}))
    code, out = cli("tenants", "identity-provider", "set", str(provider), "--tenant", "acme", "--home", home)
    assert code == 0 and json.loads(out)["issuer"] == "https://idp.acme.test/", out
    code, out = cli("tenants", "identity-provider", "show", "--tenant", "acme", "--home", home)
    assert code == 0 and json.loads(out)["jwks"] == [jwk]
    provider.write_text(json.dumps({"issuer": "https://idp.acme.test/", "audiences": ["app"], "jwks": [jwk],
                                    "algorithms": ["HS256"]}))  # fmt: skip
    refused = runner.invoke(app, ["tenants", "identity-provider", "set", str(provider), "--tenant", "acme",
                                  "--home", home])  # fmt: skip
    assert refused.exit_code == 2 and "algorithms" in refused.output, refused.output
    assert cli("tenants", "identity-provider", "delete", "--tenant", "acme", "--home", home)[0] == 0
    assert Container(Settings(home=tmp_path)).registry.get_identity_provider("acme") is None


def test_chat_prints_the_grounding_of_each_cited_sentence_under_the_sources(home: Path) -> None:
    # Issue 30 #1: each cited sentence checked against its chunks, numbered as in the streamed answer
    _, out = cli("chat", "Can I return a used bike?", "-n", "northwind", "--home", str(home))
    _, after_sources = out.split("\nSources\n", 1)
    summary = re.search(r"^Grounding \(verifier\): score (\d\.\d\d) · (\d+) supported", after_sources, re.M)
    assert summary is not None, out
    assert 0.0 < float(summary[1]) <= 1.0 and int(summary[2]) >= 1
    assert re.search(r"^  ✔ supported \d\.\d\d \[1\]: ", after_sources, re.M), out


def test_the_grounding_names_sentences_by_their_first_words_and_never_repeats_the_answer(home: Path) -> None:
    _, out = cli("chat", "How often should I lubricate the chain?", "-n", "northwind", "--home", str(home))
    _, after_sources = out.split("\nSources\n", 1)
    grounding = after_sources[after_sources.index("Grounding (verifier)") :]
    assert "Clean and lubricate the chain…" in grounding
    assert "200 kilometres" not in grounding


def test_the_operator_adds_lists_and_removes_a_tenants_webhook(tmp_path: Path) -> None:
    home = str(tmp_path)
    assert cli("tenants", "create", "acme", "--home", home)[0] == 0
    url = "https://hooks.example.com/ragline"
    code, out = cli("webhooks", "add", url, "--tenant", "acme", "--events", "document.failed", "--home", home)
    assert code == 0, out
    made = json.loads(out)
    assert made["secret"].startswith("whsec_") and made["eventTypes"] == ["document.failed"]
    code, out = cli("webhooks", "list", "--tenant", "acme", "--home", home)
    assert code == 0 and [w["webhookId"] for w in json.loads(out)["webhooks"]] == [made["webhookId"]]
    assert "whsec_" not in out
    refused = runner.invoke(app, ["webhooks", "add", "http://10.0.0.1/x", "--tenant", "acme", "--home", home])
    assert refused.exit_code == 2 and "https" in refused.output, refused.output
    assert cli("webhooks", "remove", made["webhookId"], "--tenant", "acme", "--home", home)[0] == 0
    assert Container(Settings(home=tmp_path)).webhook_store.list("acme") == []
