"""What the parsing libraries log about a file, caught for that file and reported as its notes.

pypdf (and the image and Office libraries under it) log what they recover from — ``incorrect startxref
pointer(3)``, ``Ignoring wrong pointing object`` — through :mod:`logging`. Left alone, Python's
last-resort handler prints those lines raw on stderr, above a command's own output, naming no file.
Caught here, each becomes a note of the document being parsed (``pypdf: incorrect startxref
pointer(3)``): the ingest result shows it beside the file it is about, and the process logs it at
INFO under ``ragline.documents`` with the file's name.

Only the parsing thread's records are caught (ingestion parses files on several threads at once);
each file keeps at most :data:`MAX_NOTES` distinct notes of at most :data:`MAX_NOTE_CHARS`, so a
hostile file that makes a library log a line per object cannot grow a result without bound.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager

LIBRARIES = ("pypdf", "PIL", "docx", "openpyxl")
"""The loggers of the libraries that read documents."""

MAX_NOTES = 5
MAX_NOTE_CHARS = 200

_log = logging.getLogger("ragline.documents")


class _Notes(logging.Handler):
    """Keeps this thread's WARNING-and-above records from the libraries, as short distinct notes."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.thread = threading.get_ident()
        self.notes: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.thread != self.thread:
            return  # another file's parse, caught by its own handler
        try:
            message = " ".join(record.getMessage().split())
        except Exception:  # a library's malformed format arguments are not this file's failure
            message = str(record.msg)
        note = f"{record.name.split('.')[0]}: {message}"[:MAX_NOTE_CHARS]
        if note not in self.notes and len(self.notes) < MAX_NOTES:
            self.notes.append(note)


@contextmanager
def library_notes(filename: str) -> Iterator[list[str]]:
    """Yields the list the parse's library notes are collected into (filled when the block ends)."""
    handler = _Notes()
    loggers = [logging.getLogger(name) for name in LIBRARIES]
    for logger in loggers:
        logger.addHandler(handler)  # a handler on the logger: the last-resort printer stays quiet
    notes: list[str] = []
    try:
        yield notes
    finally:
        for logger in loggers:
            logger.removeHandler(handler)
        notes.extend(handler.notes)
        for note in notes:
            _log.info("%s: %s", filename, note)
