"""Parsing uploaded bytes into sections: every format, and every way input can be bad."""

from __future__ import annotations

import hashlib
import io
import json

import pytest

from ragline.documents import SUPPORTED_EXTENSIONS, ParsedDocument, parse_document
from ragline.documents.formats import MAX_JSON_DEPTH
from ragline.errors import (
    DocumentTooLarge,
    EmptyDocument,
    RaglineError,
    UnreadableDocument,
    UnsupportedDocument,
)
from tests.support.pdf import pdf_document

pytestmark = pytest.mark.unit


# ------------------------------------------------------------------------------------------ builders


def _pdf_string(text: str) -> str:
    return "(" + text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") + ")"


def make_pdf(pages: list[list[str]]) -> bytes:
    """A minimal valid PDF (correct xref) with one Helvetica text line per string, page by page."""
    streams = []
    for lines in pages:
        ops = ["BT", "/F1 12 Tf", "14 TL", "72 720 Td"]
        ops += [f"{_pdf_string(line)} Tj T*" for line in lines]
        ops.append("ET")
        streams.append(("\n".join(ops).encode("latin-1"), b""))
    return pdf_document(streams)


def encrypt_pdf(data: bytes, *, user_password: str) -> bytes:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    writer.encrypt(user_password=user_password, owner_password="owner-secret", algorithm="AES-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def blank_pdf() -> bytes:
    from pypdf import PdfWriter

    writer = PdfWriter()
    writer.add_blank_page(width=612, height=792)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def make_docx() -> bytes:
    import docx

    document = docx.Document()
    document.add_heading("Handbook", level=0)
    document.add_paragraph("Welcome to the handbook.")
    document.add_heading("Leave", level=1)
    document.add_paragraph("Employees get 25 days of leave.")
    document.add_heading("Sick leave", level=2)
    document.add_paragraph("Report sickness before 9am.")
    table = document.add_table(rows=2, cols=2)
    table.cell(0, 0).text = "Grade"
    table.cell(0, 1).text = "Days"
    table.cell(1, 0).text = "Senior"
    table.cell(1, 1).text = "30"
    document.add_heading("Expenses", level=1)
    document.add_paragraph("Submit receipts monthly.")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def texts(doc: ParsedDocument) -> list[str]:
    return [section.text for section in doc.sections]


def paths(doc: ParsedDocument) -> list[tuple[str, ...]]:
    return [section.heading_path for section in doc.sections]


# ------------------------------------------------------------------------------------------- formats


def test_given_plain_text_when_parsed_then_one_section_with_hash_and_no_pages() -> None:
    data = b"Hello world. This is Ragline.\n\nSecond paragraph.\n"

    doc = parse_document("notes.txt", data)

    assert texts(doc) == ["Hello world. This is Ragline.\n\nSecond paragraph."]
    assert doc.sections[0].heading_path == ()
    assert doc.sections[0].page is None
    assert doc.pages == 1
    assert doc.content_hash == hashlib.sha256(data).hexdigest()


def test_given_soft_wrapped_text_when_parsed_then_wrapped_lines_are_joined_but_real_lines_kept() -> None:
    data = b"The quick brown fox\njumps over the dog.\nShopping list:\n- eggs\n- milk\r\n"

    doc = parse_document("wrapped.TXT", data)

    assert texts(doc) == ["The quick brown fox jumps over the dog.\nShopping list:\n- eggs\n- milk"]


def test_given_latin1_text_named_txt_when_parsed_then_decoded_exactly() -> None:
    data = "Café au lait costs 3.50 in the café near the station.".encode("latin-1")

    doc = parse_document("menu.txt", data)

    assert doc.sections[0].text == "Café au lait costs 3.50 in the café near the station."


def test_given_utf16_text_with_bom_when_parsed_then_decoded() -> None:
    doc = parse_document("wide.txt", "Hello wide world.".encode("utf-16"))

    assert texts(doc) == ["Hello wide world."]


def test_given_markdown_when_parsed_then_atx_headings_build_paths_and_code_fences_are_not_headings() -> None:
    md = (
        "Intro before any heading.\n"
        "# Guide\n"
        "Top level text.\n"
        "## Install ##\n"
        "Run the installer.\n"
        "```bash\n"
        "# not a heading\n"
        "pip install ragline\n"
        "```\n"
        "### Linux\n"
        "Use apt.\n"
        "## Usage\n"
        "Call the API.\n"
        "#hashtag is not a heading either\n"
        "# Appendix\n"
        "The end.\n"
    )

    doc = parse_document("guide.md", md.encode())

    assert paths(doc) == [
        (),
        ("Guide",),
        ("Guide", "Install"),
        ("Guide", "Install", "Linux"),
        ("Guide", "Usage"),
        ("Appendix",),
    ]
    install = doc.sections[2].text
    assert "# not a heading\npip install ragline\n```" in install
    assert "#hashtag is not a heading either" in doc.sections[4].text
    assert all("Guide" not in text for text in texts(doc)[1:])  # heading lines are not body text


def test_given_markdown_extension_variants_when_parsed_then_markdown_rules_apply() -> None:
    doc = parse_document("README.Markdown", b"# Title\nBody text.\n")

    assert paths(doc) == [("Title",)]
    assert texts(doc) == ["Body text."]


def test_given_html_when_parsed_then_headings_build_paths_and_scripts_styles_nav_are_dropped() -> None:
    html = """<!doctype html><html><head><title>T</title><style>p{color:red}</style></head>
    <body><nav><a href="/">Home</a> <a href="/x">Menu link</a></nav>
    <h1>Policies</h1><p>All   staff must
       read this.</p><!-- a comment -->
    <script>var secret = 1;</script>
    <h2>Travel</h2><ul><li>Book early.</li><li>Keep receipts.</li></ul>
    <table><tr><th>Class</th><th>Limit</th></tr><tr><td>Economy</td><td>500</td></tr></table>
    <h2>Security</h2><div>Lock your <b>screen</b>.<br>Always.</div>
    </body></html>"""

    doc = parse_document("policies.HTM", html.encode())

    assert paths(doc) == [
        ("Policies",),
        ("Policies", "Travel"),
        ("Policies", "Travel"),
        ("Policies", "Security"),
    ]
    assert texts(doc) == [
        "All staff must read this.",
        "Book early.\nKeep receipts.",
        "| Economy | 500 |",  # the table, a section of its own, its header row repeated by each chunk
        "Lock your screen.\nAlways.",
    ]
    assert doc.sections[2].header == "| Class | Limit |\n| --- | --- |"
    joined = " ".join(texts(doc))
    for dropped in ("Menu link", "secret", "color:red", "a comment"):
        assert dropped not in joined


def test_given_two_page_pdf_when_parsed_then_one_section_per_page_with_page_numbers() -> None:
    data = make_pdf([["First page text.", "More on page one."], ["Second page (two) text."]])

    doc = parse_document("report.PDF", data)

    assert doc.pages == 2
    assert [section.page for section in doc.sections] == [1, 2]
    assert "First page text." in doc.sections[0].text
    assert "More on page one." in doc.sections[0].text
    assert "Second page (two) text." in doc.sections[1].text


def test_given_pdf_with_an_empty_user_password_when_parsed_then_it_is_opened() -> None:
    data = encrypt_pdf(make_pdf([["Owner-protected but readable."]]), user_password="")

    doc = parse_document("locked-owner.pdf", data)

    assert "Owner-protected but readable." in doc.sections[0].text


def test_given_docx_when_parsed_then_heading_styles_build_paths_and_tables_are_included() -> None:
    doc = parse_document("handbook.docx", make_docx())

    assert paths(doc) == [
        ("Handbook",),
        ("Handbook", "Leave"),
        ("Handbook", "Leave", "Sick leave"),
        ("Handbook", "Leave", "Sick leave"),  # the table, a section of its own
        ("Handbook", "Expenses"),
    ]
    assert texts(doc)[2] == "Report sickness before 9am."
    assert (doc.sections[3].header, texts(doc)[3]) == ("| Grade | Days |\n| --- | --- |", "| Senior | 30 |")
    assert doc.pages == 1


def test_given_json_when_parsed_then_flattened_to_key_path_lines() -> None:
    data = json.dumps(
        {
            "name": "Ragline",
            "version": 2,
            "tags": ["rag", "search"],
            "owner": {"team": "core", "oncall": None},
        }
    ).encode()

    doc = parse_document("meta.json", data)

    assert texts(doc) == [
        "name: Ragline\nversion: 2\ntags[0]: rag\ntags[1]: search\nowner.team: core\nowner.oncall: null"
    ]


def test_given_json_lines_when_parsed_then_one_record_per_line() -> None:
    data = b'{"id": 1, "q": "What is RAG?"}\n\n{"id": 2, "q": "Why chunk?", "ok": true}\n'

    doc = parse_document("faq.jsonl", data)

    assert texts(doc) == ["id: 1\nq: What is RAG?\n\nid: 2\nq: Why chunk?\nok: true"]


def test_given_csv_when_parsed_then_each_row_renders_header_value_pairs() -> None:
    data = b'name,age,city\nAlice,30,"Paris, France"\nBob,,Berlin\n\nCarol,41,Rome,extra\n'

    doc = parse_document("people.csv", data)

    assert texts(doc) == [
        "name: Alice; age: 30; city: Paris, France\n"
        "name: Bob; city: Berlin\n"
        "name: Carol; age: 41; city: Rome; column_4: extra"
    ]


# ----------------------------------------------------------------------------------------- bad input


def test_given_corrupt_pdf_bytes_when_parsed_then_unreadable_with_reason_and_chained_cause() -> None:
    with pytest.raises(UnreadableDocument) as caught:
        parse_document("broken.pdf", b"%PDF-1.4\nthis is not really a pdf at all")

    error = caught.value
    assert "broken.pdf" in error.message
    assert "not a valid PDF" in error.message
    assert error.details["filename"] == "broken.pdf"
    assert error.details["reason"]
    assert error.__cause__ is not None


def test_given_password_protected_pdf_when_parsed_then_unreadable_saying_so() -> None:
    data = encrypt_pdf(make_pdf([["Top secret."]]), user_password="hunter2")

    with pytest.raises(UnreadableDocument, match="password-protected"):
        parse_document("secret.pdf", data)


def test_given_pdf_without_text_when_parsed_then_empty_document_mentioning_ocr() -> None:
    with pytest.raises(EmptyDocument, match="OCR"):
        parse_document("scan.pdf", blank_pdf())


def test_given_corrupt_docx_when_parsed_then_unreadable_and_no_zip_error_leaks() -> None:
    with pytest.raises(UnreadableDocument, match=r"not a valid \.docx") as caught:
        parse_document("letter.docx", b"PK\x03\x04 definitely not a zip archive")

    assert isinstance(caught.value.__cause__, Exception)


@pytest.mark.parametrize("filename", ["a.txt", "a.md", "a.pdf", "a.docx", "a.json", "a.csv", "a.html"])
def test_given_an_empty_file_when_parsed_then_empty_document(filename: str) -> None:
    with pytest.raises(EmptyDocument, match="empty") as caught:
        parse_document(filename, b"")

    assert caught.value.details == {"filename": filename, "reason": "the file is empty"}


@pytest.mark.parametrize("filename", ["a.txt", "a.md", "a.pdf", "a.csv"])
def test_given_whitespace_only_when_parsed_then_empty_document(filename: str) -> None:
    with pytest.raises(EmptyDocument, match="whitespace"):
        parse_document(filename, b" \n\t\r\n  ")


@pytest.mark.parametrize(
    ("filename", "data"),
    [("a.md", b"# Only\n## Headings\n"), ("a.html", b"<script>x()</script>"), ("a.json", b"[]")],
)
def test_given_markup_without_body_text_when_parsed_then_empty_document(filename: str, data: bytes) -> None:
    with pytest.raises(EmptyDocument):
        parse_document(filename, data)


@pytest.mark.parametrize("filename", ["slides.pptx", "archive.tar.gz", "Makefile"])
def test_given_an_unknown_extension_when_parsed_then_unsupported_naming_it_and_the_supported_ones(
    filename: str,
) -> None:
    with pytest.raises(UnsupportedDocument) as caught:
        parse_document(filename, b"whatever")

    error = caught.value
    assert filename in error.message
    assert ".pdf" in error.message
    assert ".docx" in error.message
    assert error.details["supported"] == list(SUPPORTED_EXTENSIONS)


def test_given_binary_data_named_txt_when_parsed_then_unreadable() -> None:
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4

    with pytest.raises(UnreadableDocument, match="binary"):
        parse_document("photo.txt", png)


def test_given_undecodable_bytes_without_nul_named_txt_when_parsed_then_unreadable() -> None:
    noise = bytes(range(0x80, 0x100)) * 64

    with pytest.raises(UnreadableDocument, match="not UTF-8"):
        parse_document("noise.txt", noise)


def test_given_a_document_over_the_limit_when_parsed_then_too_large_before_any_parsing() -> None:
    with pytest.raises(DocumentTooLarge) as caught:
        parse_document("big.pdf", b"not even a pdf" * 100, max_bytes=1000)

    assert caught.value.details["max_bytes"] == 1000
    assert caught.value.details["size_bytes"] == 1400
    assert "1000" in caught.value.message


def test_given_a_document_at_the_limit_when_parsed_then_accepted() -> None:
    assert parse_document("ok.txt", b"x" * 10, max_bytes=10).sections[0].text == "x" * 10


@pytest.mark.parametrize(
    ("filename", "data", "fragment"),
    [
        ("bad.json", b'{"a": 1,,}', "line 1"),
        ("bad.jsonl", b'{"a": 1}\n{"b": \n', "line 2"),
        ("bad.csv", b'a,b\n"unterminated,1\n' + b"x" * 200_000, "CSV"),
    ],
)
def test_given_malformed_structured_data_when_parsed_then_unreadable_with_location(
    filename: str, data: bytes, fragment: str
) -> None:
    with pytest.raises(UnreadableDocument, match=fragment) as caught:
        parse_document(filename, data)

    assert isinstance(caught.value, RaglineError)
    assert caught.value.__cause__ is not None


@pytest.mark.parametrize(
    ("filename", "depth"), [("deep.json", 100_000), ("deep.jsonl", 100_000), ("deep.json", 600)]
)
def test_given_deeply_nested_json_when_parsed_then_the_reason_names_the_depth_limit(
    filename: str, depth: int
) -> None:
    # Given JSON nested past the limit: deep enough to exhaust the decoder's stack, or merely deep
    data = b"[" * depth + b"1" + b"]" * depth

    # When parsed, then refused with the nesting limit, never the decoder's recursion message
    with pytest.raises(UnreadableDocument, match=f"more than {MAX_JSON_DEPTH} levels deep") as caught:
        parse_document(filename, data)
    assert "recursion" not in caught.value.message


def test_given_json_nested_to_the_limit_when_parsed_then_indexed() -> None:
    depth = MAX_JSON_DEPTH
    doc = parse_document("nested.json", b"[" * depth + b'"bottom"' + b"]" * depth)

    assert doc.sections[0].text.endswith("[0]: bottom")
