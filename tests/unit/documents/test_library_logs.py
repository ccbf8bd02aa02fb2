"""What a parsing library logs about a file becomes that file's notes, never a raw line on stderr."""

from __future__ import annotations

import logging
import re
import threading
from pathlib import Path

import pytest

from ragline.documents.library_logs import MAX_NOTE_CHARS, MAX_NOTES, library_notes
from ragline.documents.parsers import parse_document

pytestmark = pytest.mark.unit

MANUAL = Path(__file__).resolve().parents[3] / "samples" / "northwind" / "volt-manual.pdf"


def shifted_startxref() -> bytes:
    """The sample manual with its last ``startxref`` pointing 5 bytes off: pypdf recovers, and logs."""
    data = MANUAL.read_bytes()
    last = list(re.finditer(rb"startxref\s+(\d+)", data))[-1]
    return data[: last.start()] + b"startxref\n" + str(int(last.group(1)) + 5).encode() + data[last.end() :]


def test_a_recovered_pdf_is_read_and_says_what_pypdf_recovered_from_without_printing_it(
    capfd: pytest.CaptureFixture[str],
) -> None:
    parsed = parse_document("manual.pdf", shifted_startxref())
    assert parsed.pages == 2 and parsed.sections
    assert any(note.startswith("pypdf: incorrect startxref pointer") for note in parsed.notes), parsed.notes
    out, err = capfd.readouterr()
    assert "startxref" not in out + err  # Python's last-resort handler printed nothing


def test_a_clean_file_has_no_notes() -> None:
    assert parse_document("manual.pdf", MANUAL.read_bytes()).notes == []


def test_notes_are_few_short_and_distinct_however_much_a_library_logs() -> None:
    with library_notes("spam.pdf") as notes:
        for n in range(1000):
            logging.getLogger("pypdf._reader").warning("object %d is broken %s", n % 50, "x" * 500)
        logging.getLogger("pypdf").warning("object 0 is broken %s", "x" * 500)  # a repeat
    assert len(notes) == MAX_NOTES
    assert all(len(note) <= MAX_NOTE_CHARS for note in notes)
    assert len(set(notes)) == len(notes)


def test_only_the_parsing_threads_records_are_its_notes() -> None:
    def other_file() -> None:
        logging.getLogger("pypdf").warning("about another file")

    with library_notes("mine.pdf") as notes:
        worker = threading.Thread(target=other_file)
        worker.start()
        worker.join()
        logging.getLogger("pypdf").warning("about mine")
    assert notes == ["pypdf: about mine"]
