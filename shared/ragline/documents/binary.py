"""PDF (pypdf): one section per page with text.

pypdf bounds what a file may make it do (decompressed stream sizes, page-tree entries, operators
per content stream: :class:`pypdf.Configuration`); on top of that the deadline is checked between
pages and, through an operator visitor, every few thousand operators inside one (a page can invoke
a form XObject thousands of times). Library exceptions never escape: they become
:class:`UnreadableDocument` chained with ``from`` — except pypdf's own limits, which say what was
too large: too many pages, or a stream that decompresses past pypdf's output limit (a flate bomb,
also one inside a form XObject, which pypdf only logs) → :class:`DocumentTooLarge` with the limit.
"""

from __future__ import annotations

import io
import logging
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from ragline.documents.formats import unwrap_lines
from ragline.documents.images import MIN_PICTURE_SIDE, ocr_pdf_pages, ocr_picture
from ragline.documents.layout_tables import continued, split_tables
from ragline.documents.limits import ParseBudget
from ragline.documents.raw import Parsed, RawSection, short_error, unreadable
from ragline.errors import DocumentTooLarge, RaglineError

_log = logging.getLogger(__name__)
_OPERATORS_PER_CHECK = 4096
MAX_PICTURES_PER_PAGE = 8
"""Pictures read by OCR on one page with a text layer (a page of a hundred icons reads eight)."""
LAYOUT_OPERATORS = 200_000
"""A page whose plain extraction took more content-stream operators than this is not laid out again
to look for tables (the layout pass has no operator hook for the deadline)."""


SCANNED_PAGE_CHARS = 16
"""A page whose text layer has fewer visible characters than this is read by OCR (when the deployment
has an engine): a scanned page has no text layer, or only a stamp or a page number."""


def parse_pdf(budget: ParseBudget, data: bytes) -> Parsed:
    """One section per page with text, ``page`` 1-based; owner-only encryption is opened. Pages
    without a text layer (:data:`SCANNED_PAGE_CHARS`) are rendered and read by OCR; on pages with one,
    the pictures' text follows the page's (:func:`_picture_text`)."""
    pages = _pages(budget, _open(budget.filename, data))
    with _limits_logged() as limited:
        sections, bombed = _texts(budget, pages, limited)
    scanned = [n for n in range(1, len(pages) + 1) if n not in bombed and n not in _with_text(sections)]
    if budget.recognizer is not None:
        for number in sorted(n for n in _with_text(sections) if n is not None and n not in bombed):
            pictured = _picture_text(budget, pages[number - 1])
            if pictured:
                sections.append(RawSection(pictured, (), number))
        sections.sort(key=lambda s: s.page or 0)
    read = ocr_pdf_pages(budget, data, scanned, pages)
    if read:
        sections = sorted(
            [s for s in sections if s.page not in read]
            + [s for number, text in read.items() for s in split_tables(text, number)[0]],
            key=lambda s: s.page or 0,
        )
    sections = continued(sections)
    if bombed and not sections:
        raise _too_large(
            budget.filename,
            f"a compressed stream on page {bombed[0]} expands past the decompression limit of "
            f"{_decompression_limit():,} bytes",
        )
    return sections, len(pages)


def _open(filename: str, data: bytes) -> Any:
    from pypdf import PasswordType, PdfReader

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
    return reader


def _pages(budget: ParseBudget, reader: Any) -> list[Any]:
    """The page objects, refused past ``max_pdf_pages`` by the tree's own count before it is walked."""
    from pypdf.errors import LimitReachedError

    filename, limit = budget.filename, budget.limits.max_pdf_pages
    budget.tick()
    try:
        declared = _declared_pages(reader)
        if declared > limit:
            raise _too_large(filename, f"it has {declared:,} pages, over the limit of {limit:,} pages")
        pages = list(reader.pages)
    except LimitReachedError as exc:  # a node lists more kids than pypdf reads (100,000)
        reason = (
            f"it has more pages than the limit of {limit:,} pages (a page-tree node is too large to read)"
        )
        raise _too_large(filename, reason) from exc
    except RaglineError:
        raise
    except Exception as exc:
        raise unreadable(filename, f"its page tree is corrupt ({short_error(exc)})") from exc
    if not pages:
        raise unreadable(filename, "the PDF has no pages")
    if len(pages) > limit:  # the /Count understated them
        raise _too_large(filename, f"it has {len(pages):,} pages, over the limit of {limit:,} pages")
    return pages


def _texts(budget: ParseBudget, pages: list[Any], limited: list[int]) -> tuple[list[RawSection], list[int]]:
    """Each page's text, and the pages whose streams hit the decompression limit (skipped, like
    pages that fail to read, unless no page could be read)."""
    from pypdf.errors import LimitReachedError

    operators = 0

    def check_now_and_then(*_: Any) -> None:
        nonlocal operators
        operators += 1
        if not operators % _OPERATORS_PER_CHECK:
            budget.tick()

    reach = [0.0]  # how far from the origin text is placed on the page being read

    def placed(text: str, cm: Any, tm: Any, *_: Any) -> None:
        if text.strip():
            x = tm[4] * cm[0] + tm[5] * cm[2] + cm[4]
            y = tm[4] * cm[1] + tm[5] * cm[3] + cm[5]
            reach[0] = max(reach[0], abs(x), abs(y))

    sections: list[RawSection] = []
    failed: list[int] = []
    bombed: list[int] = []
    last_error: Exception | None = None
    for number, page in enumerate(pages, start=1):
        budget.tick()
        limited.clear()
        before, reach[0] = operators, 0.0
        try:
            text = page.extract_text(visitor_operand_before=check_now_and_then, visitor_text=placed)
        except RaglineError:
            raise
        except LimitReachedError:
            bombed.append(number)
            continue
        except Exception as exc:
            failed.append(number)
            last_error = exc
            continue
        if limited:  # a form XObject hit the limit: pypdf logged it and went on without its text
            bombed.append(number)
        budget.add_text(len(text))
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        laid_out = (
            _with_tables(budget, page, number) if _layable(page, operators - before, reach[0]) else None
        )
        if laid_out is not None:
            sections += laid_out
        elif text.strip():
            sections.append(RawSection(unwrap_lines(text), (), number))
    if len(failed) == len(pages):
        reason = f"no page could be read ({short_error(last_error)})"
        raise unreadable(budget.filename, reason) from last_error
    if failed or bombed:
        skipped = sorted(failed + bombed)
        _log.warning("pdf %r: skipped %d unreadable page(s): %s", budget.filename, len(skipped), skipped[:20])
    return sections, bombed


def _layable(page: Any, operators: int, reach: float) -> bool:
    """Whether a page may be laid out to look for tables: its plain extraction took at most
    :data:`LAYOUT_OPERATORS` operators, and no text sits farther from the origin than twice the
    page's larger side (layout text is as wide as the text's reach: a glyph placed a million points
    away would make megabytes of spaces per line)."""
    try:
        box = page.mediabox
        side = max(float(box.width), float(box.height), 1.0)
    except Exception:
        return False
    return operators <= LAYOUT_OPERATORS and reach <= 2 * side


def _with_tables(budget: ParseBudget, page: Any, number: int) -> list[RawSection] | None:
    """The page's sections with its tables (:mod:`ragline.documents.layout_tables`) when its layout
    shows one, else ``None`` (its plain text stands; also when layout mode fails). Only for pages
    :func:`_layable` admits."""
    budget.tick()
    try:
        laid_out = page.extract_text(extraction_mode="layout")
    except Exception as exc:  # the plain text was read: it stands
        _log.info("pdf %r page %d: no layout (%s)", budget.filename, number, short_error(exc))
        return None
    sections, found = split_tables(laid_out.replace("\r\n", "\n").replace("\r", "\n"), number)
    return sections if found else None


def _picture_text(budget: ParseBudget, page: Any) -> str:
    """``[Image text: …]`` for each picture on a page with a text layer that OCR reads text off (at
    most :data:`MAX_PICTURES_PER_PAGE`, those under
    :data:`~ragline.documents.images.MIN_PICTURE_SIDE` pixels a side skipped by their declared size,
    before anything is decoded); ``""`` when there is none. A picture pypdf cannot extract (a format
    it needs Pillow for, where Pillow is absent; a corrupt stream) is skipped."""
    try:
        xobjects = page["/Resources"]["/XObject"].get_object()
        names = [
            name
            for name, ref in xobjects.items()
            if (obj := ref.get_object()).get("/Subtype") == "/Image"
            and min(int(obj.get("/Width", 0)), int(obj.get("/Height", 0))) >= MIN_PICTURE_SIDE
        ][:MAX_PICTURES_PER_PAGE]
    except Exception:  # no resources, no pictures, or a malformed dictionary: the text stands
        return ""
    read = []
    for name in names:
        budget.tick()
        try:
            picture = page.images[name].data
        except RaglineError:
            raise
        except Exception as exc:
            _log.info("pdf %r: a picture was not extracted (%s)", budget.filename, short_error(exc))
            continue
        text = " ".join(ocr_picture(budget, picture).split())
        if text:
            read.append(f"[Image text: {text}]")
    return "\n".join(read)


def _with_text(sections: list[RawSection]) -> set[int | None]:
    return {s.page for s in sections if sum(not c.isspace() for c in s.text) >= SCANNED_PAGE_CHARS}


def _declared_pages(reader: Any) -> int:
    """The root page node's ``/Count`` (0 if missing or not a number: the flattened tree decides)."""
    count = reader.root_object["/Pages"].get_object().get("/Count")
    return count if isinstance(count, int) else 0


def _too_large(filename: str, reason: str) -> DocumentTooLarge:
    return DocumentTooLarge(f"Cannot index {filename!r}: {reason}.", filename=filename, reason=reason)


def _decompression_limit() -> int:
    from pypdf import get_configuration

    return int(get_configuration().zlib_maximum_output_length)


@contextmanager
def _limits_logged() -> Iterator[list[int]]:
    """Collects (into the yielded list) the limits pypdf reaches and only logs: a form XObject that
    fails to decode is a warning whose arguments carry the exception. This thread's records only."""
    from pypdf.errors import LimitReachedError

    hits: list[int] = []
    me = threading.get_ident()

    class Catch(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            args = record.args
            mine = record.thread == me and isinstance(args, Mapping)
            if mine and isinstance(args.get("exception"), LimitReachedError):  # type: ignore[union-attr]
                hits.append(1)

    handler = Catch(logging.WARNING)
    pypdf_log = logging.getLogger("pypdf")
    level = pypdf_log.level
    if pypdf_log.getEffectiveLevel() > logging.WARNING:  # quietened: its warnings must still be made
        pypdf_log.setLevel(logging.WARNING)
    pypdf_log.addHandler(handler)
    try:
        yield hits
    finally:
        pypdf_log.removeHandler(handler)
        pypdf_log.setLevel(level)
