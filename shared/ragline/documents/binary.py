"""PDF (pypdf): one section per page with text.

pypdf bounds what a file may make it do (decompressed stream sizes, page-tree entries, operators
per content stream: :class:`pypdf.Configuration`); on top of that the deadline is checked between
pages and, through an operator visitor, every few thousand operators inside one (a page can invoke
a form XObject thousands of times). Library exceptions never escape: they become
:class:`UnreadableDocument` chained with ``from``.
"""

from __future__ import annotations

import io
import logging
from typing import Any

from ragline.documents.formats import unwrap_lines
from ragline.documents.limits import ParseBudget
from ragline.documents.raw import Parsed, RawSection, short_error, unreadable
from ragline.errors import RaglineError

_log = logging.getLogger(__name__)
_OPERATORS_PER_CHECK = 4096


def parse_pdf(budget: ParseBudget, data: bytes) -> Parsed:
    """One section per page with text, ``page`` 1-based; owner-only encryption is opened."""
    from pypdf import PasswordType, PdfReader

    filename = budget.filename
    try:
        reader = PdfReader(io.BytesIO(data))
        encrypted = reader.is_encrypted
    except Exception as exc:
        raise unreadable(filename, f"it is not a valid PDF ({short_error(exc)})") from exc
    if encrypted:
        try:
            opened = reader.decrypt("")
        except Exception as exc:
            raise unreadable(
                filename, f"the PDF is encrypted and cannot be decrypted ({short_error(exc)})"
            ) from exc
        if opened == PasswordType.NOT_DECRYPTED:
            raise unreadable(filename, "the PDF is password-protected")
    budget.tick()
    try:
        pages = list(reader.pages)
    except Exception as exc:
        raise unreadable(filename, f"its page tree is corrupt ({short_error(exc)})") from exc
    if not pages:
        raise unreadable(filename, "the PDF has no pages")

    operators = 0

    def check_now_and_then(*_: Any) -> None:
        nonlocal operators
        operators += 1
        if not operators % _OPERATORS_PER_CHECK:
            budget.tick()

    sections: list[RawSection] = []
    failed: list[int] = []
    last_error: Exception | None = None
    for number, page in enumerate(pages, start=1):
        budget.tick()
        try:
            text = page.extract_text(visitor_operand_before=check_now_and_then)
        except RaglineError:
            raise
        except Exception as exc:
            failed.append(number)
            last_error = exc
            continue
        budget.add_text(len(text))
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        if text.strip():
            sections.append(RawSection(unwrap_lines(text), (), number))
    if len(failed) == len(pages):
        reason = f"no page could be read ({short_error(last_error)})"
        raise unreadable(filename, reason) from last_error
    if failed:
        _log.warning("pdf %r: skipped %d unreadable page(s): %s", filename, len(failed), failed[:20])
    return sections, len(pages)
