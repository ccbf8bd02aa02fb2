"""``ragline ingest`` of a scanned PDF and a screenshot on the offline path, then questions about each.

The scans (``tests/fixtures/scans``) have no text layer: everything found here was read by the
offline OCR, or by Amazon Textract's wire protocol (the local stand-in) with ``RAGLINE_OCR=textract``.
``RAGLINE_OCR=off`` fails the same files with the reason, and stores nothing.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ragline.config import Settings
from ragline.domain.models import TenantScope
from ragline.wiring import Container
from tests.e2e.test_cli import _answer_and_sources, cli, first_hit, ingested
from tests.support.textract_server import TextractServer

pytestmark = pytest.mark.e2e
SCANS = Path(__file__).parents[2] / "tests" / "fixtures" / "scans"
FILES = ("handbook-150dpi.pdf", "error-dialog.png")


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return ingested(tmp_path_factory, [SCANS / name for name in FILES], "scans")  # not their source texts


def test_both_scans_are_indexed(home: Path) -> None:
    scope = TenantScope(tenant_id="local", namespace_id="scans")
    store = Container(Settings(home=home)).stores.scoped(scope)
    assert all(store.count(name) >= 1 for name in FILES)


QUESTIONS = [
    ("How many days of paid holiday does a full-time employee get?", "handbook-150dpi.pdf", "27 days"),
    ("What is the notice period after the probation period?", "handbook-150dpi.pdf", "one month"),
    ("error NW-4021 invoice export", "error-dialog.png", "timed out after 30 seconds"),
]


@pytest.mark.parametrize("question,document,fact", QUESTIONS)
def test_a_question_about_a_scan_finds_the_passage_that_answers_it(
    home: Path, question: str, document: str, fact: str
) -> None:
    code, out = cli("search", question, "-n", "scans", "-k", "3", "--home", str(home))
    assert code == 0, out
    assert first_hit(out)[0].startswith(f"{document}#"), out
    code, out = cli("chat", question, "-n", "scans", "--home", str(home))
    assert code == 0, out
    answer, sources = _answer_and_sources(out)
    assert fact in " ".join(answer.split()) and any(s.startswith(document) for s in sources.values()), out


def test_with_ocr_off_the_scans_fail_with_the_reason_and_nothing_is_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGLINE_OCR", "off")
    monkeypatch.setenv("COLUMNS", "400")  # the summary table's reasons unwrapped
    for name in FILES:
        shutil.copy(SCANS / name, tmp_path / name)
    h = tmp_path / "home"
    code, out = cli("ingest", str(tmp_path), "-n", "scans", "--create", "--home", str(h))
    rows = {line.split("│")[1].strip(): line for line in out.splitlines() if line.startswith("│")}
    assert code != 0
    assert "unsupported_document" in rows["error-dialog.png"], out
    assert "images are read by OCR, which this deployment has turned off" in rows["error-dialog.png"], out
    assert "empty_document" in rows["handbook-150dpi.pdf"], out
    assert "scanned pages need OCR, which this deployment has turned off" in rows["handbook-150dpi.pdf"], out
    store = Container(Settings(home=h)).stores.scoped(TenantScope(tenant_id="local", namespace_id="scans"))
    assert store.count() == 0


def test_through_textract_the_same_scans_answer_the_same_questions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, textract_server: TextractServer
) -> None:
    monkeypatch.setenv("RAGLINE_OCR", "textract")
    monkeypatch.setenv("AWS_ENDPOINT_URL_TEXTRACT", textract_server.url)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    for name in FILES:
        shutil.copy(SCANS / name, tmp_path / name)
    h = tmp_path / "home"
    code, out = cli("ingest", str(tmp_path), "-n", "scans", "--create", "--home", str(h))
    assert code == 0, out
    assert len(textract_server.requests) == 3  # two scanned pages and the screenshot, nothing read offline
    for question, document, fact in QUESTIONS:
        code, out = cli("chat", question, "-n", "scans", "--home", str(h))
        answer, sources = _answer_and_sources(out)
        assert code == 0 and fact in " ".join(answer.split()), out
        assert any(s.startswith(document) for s in sources.values()), out
