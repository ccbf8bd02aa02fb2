"""Amazon Textract as the OCR engine, against the local Textract wire server with real botocore.

The stand-in reads the page with the offline engine and answers Textract's ``LINE`` blocks with their
boxes as fractions of the page; scripted faults exercise botocore's retries and the error mapping.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ragline import errors
from ragline.adapters.aws.textract import SYNC_BYTES, TextractRecognizer
from ragline.documents import images, parse_document
from tests.support.textract_server import TextractServer

pytestmark = pytest.mark.unit
SCANS = Path(__file__).parents[2] / "fixtures" / "scans"


def engine(server: TextractServer, attempts: int = 3) -> TextractRecognizer:
    return TextractRecognizer(client=server.client(max_attempts=attempts))


@pytest.fixture
def nothing_decoded_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """Textract reads files: the parser must not decode an image or render a page (the Lambda layer
    has neither Pillow nor PDFium)."""

    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("decoded or rendered here")

    for name in ("_open", "_render", "_png"):
        monkeypatch.setattr(images, name, refuse)


@pytest.mark.usefixtures("nothing_decoded_here")
def test_a_screenshot_is_read_through_detect_document_text(textract_server: TextractServer) -> None:
    parsed = parse_document(
        "dialog.png", (SCANS / "error-dialog.png").read_bytes(), recognizer=engine(textract_server)
    )
    text = parsed.sections[0].text
    assert "Error code: NW-4021" in text and text.splitlines()[0] == "Sync failed"
    assert [r["target"] for r in textract_server.requests] == ["Textract.DetectDocumentText"]


@pytest.mark.usefixtures("nothing_decoded_here")
def test_a_scanned_pdf_is_sent_page_by_page_and_laid_out_in_reading_order(
    textract_server: TextractServer,
) -> None:
    parsed = parse_document(
        "handbook.pdf", (SCANS / "handbook-150dpi.pdf").read_bytes(), recognizer=engine(textract_server)
    )
    assert [s.page for s in parsed.sections] == [1, 2] and len(textract_server.requests) == 2
    first = parsed.sections[0].text.split("\n")
    assert (
        first[0] == "Northwind Cycles Employee Handbook"
        and "27 days of paid holiday" in parsed.sections[0].text
    )


def test_throttling_is_retried_by_botocore_then_succeeds(textract_server: TextractServer) -> None:
    textract_server.fail("ProvisionedThroughputExceededException", times=2)
    lines = engine(textract_server, attempts=3).recognize((SCANS / "error-dialog.png").read_bytes())
    assert any("NW-4021" in line.text for line in lines) and len(textract_server.requests) == 3


@pytest.mark.parametrize(
    "code,error",
    [
        ("ThrottlingException", errors.Throttled),
        ("InternalServerError", errors.DependencyUnavailable),
        ("AccessDeniedException", errors.ConfigurationError),
    ],
)
def test_what_retries_do_not_cure_is_a_ragline_error(
    textract_server: TextractServer, code: str, error: type[errors.RaglineError]
) -> None:
    textract_server.fail(code, times=5)
    with pytest.raises(error) as caught:
        engine(textract_server, attempts=2).recognize((SCANS / "error-dialog.png").read_bytes())
    assert caught.value.details["service"] == "Textract" and caught.value.details["aws_code"] == code


@pytest.mark.parametrize(
    "code,error,reason",
    [
        ("BadDocumentException", errors.UnreadableDocument, "Textract cannot read the page"),
        ("UnsupportedDocumentException", errors.UnreadableDocument, "Textract cannot read the page"),
        ("DocumentTooLargeException", errors.DocumentTooLarge, "Textract refused the page as too large"),
    ],
)
def test_a_page_textract_refuses_fails_the_file_by_name(
    textract_server: TextractServer, code: str, error: type[errors.RaglineError], reason: str
) -> None:
    textract_server.fail(code)
    with pytest.raises(error, match=reason) as caught:
        parse_document(
            "dialog.png", (SCANS / "error-dialog.png").read_bytes(), recognizer=engine(textract_server)
        )
    assert caught.value.details["filename"] == "dialog.png" and len(textract_server.requests) == 1


@pytest.mark.usefixtures("nothing_decoded_here")
def test_a_webp_or_a_picture_textract_cannot_take_is_refused_by_name(textract_server: TextractServer) -> None:
    webp = b"RIFF\x10\x00\x00\x00WEBPVP8 " + bytes(16)
    with pytest.raises(errors.UnsupportedDocument, match=r"\(textract\) reads PNG, JPEG and TIFF images"):
        parse_document("photo.webp", webp, recognizer=engine(textract_server))
    assert textract_server.requests == []


def test_the_stand_in_checks_the_document_as_textract_does(textract_server: TextractServer) -> None:
    with pytest.raises(errors.UnreadableDocument, match="UnsupportedDocumentException"):
        engine(textract_server).recognize(b"GIF89a not an image Textract reads")
    with pytest.raises(errors.UnreadableDocument, match="BadDocumentException"):
        engine(textract_server).recognize(b"\x89PNG\r\n\x1a\n but nothing after")


def test_a_page_over_the_synchronous_limit_is_refused_before_it_is_sent(
    textract_server: TextractServer,
) -> None:
    with pytest.raises(errors.DocumentTooLarge, match="over Textract's"):
        engine(textract_server).recognize(b"\x89PNG\r\n\x1a\n" + bytes(SYNC_BYTES))
    assert textract_server.requests == []


def test_no_credentials_is_a_configuration_error(
    monkeypatch: pytest.MonkeyPatch, textract_server: TextractServer
) -> None:
    import boto3
    import botocore.session

    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    fresh = boto3.session.Session(botocore_session=botocore.session.Session())  # no cached credentials
    client = fresh.client("textract", region_name="us-east-1", endpoint_url=textract_server.url)
    with pytest.raises(errors.ConfigurationError, match="no credentials or region"):
        TextractRecognizer(client=client).recognize((SCANS / "error-dialog.png").read_bytes())
    assert textract_server.requests == []
