"""Images and scanned PDF pages → text, through the deployment's OCR engine (a :class:`TextRecognizer`).

Every image is bounded before it is decoded: its pixels from the header (:attr:`ParseLimits.max_image_pixels`;
a PNG of a few kilobytes can declare gigapixels), the pages read by OCR per document
(:attr:`ParseLimits.max_ocr_pages`), and the deadline between pages. A scanned PDF page is rendered at
:data:`OCR_DPI` (fewer dots when that would pass the pixel bound). Pillow and pypdfium2 are the ``ocr``
extra's: imported only when an image is read. An engine that reads files itself (Amazon Textract) is
sent the upload's own bytes, a scanned PDF page cut into a one-page PDF by pypdf: nothing is decoded
here, so it runs where Pillow and PDFium are not installed (the Lambda layer), and the engine bounds
the pixels.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from ragline.documents.layout_tables import split_tables
from ragline.documents.limits import ParseBudget
from ragline.documents.page_text import TextLine, page_text
from ragline.documents.raw import Parsed, RawSection, short_error, unreadable
from ragline.errors import (
    DocumentDeadlineExceeded,
    DocumentTooLarge,
    RaglineError,
    UnreadableDocument,
    UnsupportedDocument,
)

IMAGE_EXTENSIONS: tuple[str, ...] = (".png", ".jpg", ".jpeg", ".tif", ".tiff", ".webp")
_log = logging.getLogger(__name__)
T = TypeVar("T")
_FORMATS = {"PNG", "JPEG", "TIFF", "WEBP"}
_FILE_MAGIC = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"II*\x00", b"MM\x00*")
"""What an engine that reads files is sent as uploaded (Textract's synchronous formats, bar PDF)."""
OCR_DPI = 200
"""Scanned PDF pages are rendered at this resolution for OCR: of 150, 200 and 300 it read the fewest
characters wrong of a page scanned at 150 dpi and of one scanned at 300 (0.21 % and 0.00 %), at the
same time per page (docs/benchmarks.md, "Offline OCR")."""


def parse_image(budget: ParseBudget, data: bytes) -> Parsed:
    """One section per frame with text (a TIFF may hold several pages), ``page`` 1-based. An engine that
    reads files is sent the image as uploaded (one page; it bounds the pixels itself)."""
    _check_engine(budget)
    assert budget.recognizer is not None
    if budget.recognizer.reads_files:
        if not data.startswith(_FILE_MAGIC):
            reason = (
                f"the OCR engine ({budget.recognizer.name}) reads PNG, JPEG and TIFF images, not this one"
            )
            raise UnsupportedDocument(
                f"Cannot parse {budget.filename!r}: {reason}.", filename=budget.filename, reason=reason
            )
        _count_pages(budget, 1)
        text = page_text(_read(budget, data), layout=True)
        budget.add_text(len(text))
        return split_tables(text, None)[0], 1
    image = _open(budget.filename, data)
    frames = _frame(budget.filename, lambda: int(getattr(image, "n_frames", 1) or 1))
    _count_pages(budget, frames)
    sections: list[RawSection] = []
    for number in range(1, frames + 1):
        budget.tick()
        try:
            _frame(budget.filename, lambda: image.seek(number - 1))  # noqa: B023 (called at once)
        except EOFError:
            break
        _check_pixels(budget, _frame(budget.filename, lambda: image.size), f"page {number}")
        text = page_text(_read(budget, _png(budget.filename, image)), layout=True)
        budget.add_text(len(text))
        sections += split_tables(text, number if frames > 1 else None)[0]
    return sections, frames


PICTURE_EXTENSIONS = frozenset({".png", ".jpg", ".jpeg", ".tif", ".tiff", ".webp"})
MIN_PICTURE_SIDE = 48
"""A picture smaller than this on both sides (an icon, a bullet) is not read."""


def ocr_picture(budget: ParseBudget, data: bytes) -> str:
    """The text OCR reads off a picture inside a document (its first frame), ``""`` when there is no
    engine, or when the picture is tiny, unreadable or too large: a bad picture costs the document
    its text, not the document. Pictures count against :attr:`ParseLimits.max_ocr_pages`; past it,
    the rest are not read. A transient engine error is raised (the document is retried)."""
    if budget.recognizer is None or budget.ocr_pages >= budget.limits.max_ocr_pages:
        return ""
    try:
        if budget.recognizer.reads_files:  # sent as it is: no decoding here (icons included)
            if not data.startswith(_FILE_MAGIC):
                return ""
            page = data
        else:
            image = _open(budget.filename, data)
            size = _frame(budget.filename, lambda: image.size)
            if max(size) < MIN_PICTURE_SIDE:
                return ""
            _check_pixels(budget, size, "a picture")
            page = _png(budget.filename, image)
        _count_pages(budget, 1)
        budget.tick()
        text = page_text(_read(budget, page))
    except DocumentDeadlineExceeded:
        raise
    except (UnreadableDocument, DocumentTooLarge) as exc:
        _log.warning("%r: a picture was not read (%s)", budget.filename, exc.message)
        return ""
    budget.add_text(len(text))
    return text


def ocr_pdf_pages(budget: ParseBudget, data: bytes, numbers: list[int], pages: list[Any]) -> dict[int, str]:
    """The text of the PDF's pages ``numbers`` (1-based; ``pages`` are pypdf's page objects) read by
    OCR and laid out in columns (:func:`~ragline.documents.page_text.page_text`): rendered to images,
    or, for an engine that reads files, cut into one-page PDFs; ``{}`` when the deployment has no OCR
    engine. A page that cannot be drawn or cut is skipped, like a bad page."""
    if budget.recognizer is None or not numbers:
        return {}
    _count_pages(budget, len(numbers))
    texts: dict[int, str] = {}
    failed: list[int] = []
    with _page_images(budget, data, pages) as draw:
        for number in numbers:
            budget.tick()
            try:
                page = draw(number)
            except RaglineError:
                raise
            except Exception:  # PDFium cannot draw this page, or pypdf cannot copy it (it read it)
                failed.append(number)
                continue
            text = page_text(_read(budget, page), layout=True)
            budget.add_text(len(text))
            texts[number] = text
    if failed:
        _log.warning(
            "pdf %r: %d page(s) could not be read by OCR: %s", budget.filename, len(failed), failed[:20]
        )
    return texts


@contextmanager
def _page_images(budget: ParseBudget, data: bytes, pages: list[Any]) -> Iterator[Callable[[int], bytes]]:
    """What the engine is sent for page ``n``: a one-page PDF (an engine that reads files: no
    rendering here, so neither PDFium nor Pillow is needed), else a PNG rendered by PDFium."""
    assert budget.recognizer is not None
    if budget.recognizer.reads_files:
        yield lambda number: _one_page(pages[number - 1])
        return
    import pypdfium2

    try:
        pdf = pypdfium2.PdfDocument(data)
    except Exception as exc:  # pypdf opened it; PDFium may still refuse it
        raise unreadable(budget.filename, f"its pages cannot be rendered ({short_error(exc)})") from exc
    try:
        yield lambda number: _render(budget, pdf, number)
    finally:
        pdf.close()


def _one_page(page: Any) -> bytes:
    from pypdf import PdfWriter

    writer = PdfWriter()
    writer.add_page(page)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _render(budget: ParseBudget, pdf: Any, number: int) -> bytes:
    """Page ``number`` as a greyscale PNG at :data:`OCR_DPI`, or fewer dots when that would pass the
    pixel bound."""
    page = pdf[number - 1]
    width, height = page.get_size()  # points
    scale = min(OCR_DPI / 72, (budget.limits.max_image_pixels / max(1.0, width * height)) ** 0.5)
    return _png(budget.filename, page.render(scale=scale, grayscale=True).to_pil())


def _read(budget: ParseBudget, image: bytes) -> list[TextLine]:
    """The engine's lines of one page image; its verdict on the page (unreadable, too large) names
    the file, as every parse error does."""
    assert budget.recognizer is not None
    try:
        return budget.recognizer.recognize(image)
    except (UnreadableDocument, DocumentTooLarge) as exc:
        if "filename" in exc.details:
            raise
        reason = str(exc.details.get("reason") or exc.message)
        raise type(exc)(
            f"Cannot read {budget.filename!r}: {reason}.", **{**exc.details, "filename": budget.filename}
        ) from exc


def _check_engine(budget: ParseBudget) -> None:
    if budget.recognizer is None:
        reason = "images are read by OCR, which this deployment has turned off (RAGLINE_OCR)"
        raise UnsupportedDocument(
            f"Cannot parse {budget.filename!r}: {reason}.", filename=budget.filename, reason=reason
        )


def _open(filename: str, data: bytes) -> Any:
    """The image, header read and nothing decoded yet (Pillow decodes on first pixel access)."""
    from PIL import Image

    try:
        image = Image.open(io.BytesIO(data), formats=sorted(_FORMATS))
    except Image.DecompressionBombError as exc:
        raise _too_large(filename, f"the image declares too many pixels ({short_error(exc)})") from exc
    except Exception as exc:
        raise unreadable(filename, f"it is not a PNG, JPEG, TIFF or WebP image ({short_error(exc)})") from exc
    return image


def _frame(filename: str, read: Callable[[], T]) -> T:
    """``read()`` of a lazily parsed image (frame count, seek, size), a corrupt header's error mapped."""
    try:
        return read()
    except (EOFError, RaglineError):
        raise
    except Exception as exc:
        raise unreadable(filename, f"its image data is corrupt ({short_error(exc)})") from exc


def _count_pages(budget: ParseBudget, pages: int) -> None:
    budget.ocr_pages += pages
    limit = budget.limits.max_ocr_pages
    if budget.ocr_pages > limit:
        raise _too_large(
            budget.filename, f"it has {budget.ocr_pages:,} pages to read by OCR, over the limit of {limit:,}"
        )


def _check_pixels(budget: ParseBudget, size: tuple[int, int], where: str) -> None:
    limit = budget.limits.max_image_pixels
    if size[0] * size[1] > limit:
        raise _too_large(
            budget.filename,
            f"{where} is {size[0]:,} × {size[1]:,} pixels, over the limit of {limit:,} pixels",
        )


def _png(filename: str, image: Any) -> bytes:
    """One frame as a PNG the recogniser reads (grey or colour, no alpha, no palette)."""
    try:
        frame = image.convert("L" if image.mode in ("1", "L", "I;16", "I", "F") else "RGB")
        out = io.BytesIO()
        frame.save(out, format="PNG", compress_level=1)
    except RaglineError:
        raise
    except Exception as exc:  # a truncated or corrupt image fails when its pixels are decoded
        raise unreadable(filename, f"its image data is corrupt ({short_error(exc)})") from exc
    return out.getvalue()


def _too_large(filename: str, reason: str) -> DocumentTooLarge:
    return DocumentTooLarge(f"Cannot index {filename!r}: {reason}.", filename=filename, reason=reason)
