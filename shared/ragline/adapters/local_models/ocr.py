"""The offline :class:`~ragline.ports.TextRecognizer`: PaddleOCR's PP-OCRv4 models, run by rapidocr.

``rapidocr-onnxruntime`` carries the detection, direction and recognition models (ONNX, ~16 MB) inside
its wheel and runs them on onnxruntime (the ``ocr`` extra; installed without its declared full OpenCV).
Nothing loads at import or construction: the engine is built on first use, once, under a lock, and
calls are serialised (the engine keeps per-call settings on itself).

Two things are done around the engine, both measured on rendered scans (docs/benchmarks.md, "Offline OCR"):

- an image whose longer side is under :data:`UPSCALE_BELOW` pixels is enlarged twice before reading:
  the detector misses lines, and the recogniser drops spaces, on glyphs under ~30 pixels tall;
- the recogniser (trained mostly on Chinese) drops most word spaces in English print. They are put
  back from the image: within a line, the runs of blank pixel columns are the gaps between letters and
  the (wider) gaps between words; the widest jump between consecutive widths inside
  :data:`SPACE_GAPS` of the line's ink height separates the two, and each run past it becomes a space
  between the two characters whose centres (the recogniser's per-character positions) it falls
  between. A fixed share does not fit both: word spaces in a serif book face start at ~0.2 of the ink
  height and letter gaps in a screen sans-serif reach ~0.28.
"""

from __future__ import annotations

import io
import itertools
import threading
import unicodedata
from typing import Any

import numpy as np

from ragline.documents.page_text import TextLine
from ragline.errors import ConfigurationError, UnreadableDocument

UPSCALE_BELOW = 2000
MAX_SIDE = 4000
"""The engine's own cap on an image's longer side (it shrinks larger ones): room for an upscaled
screenshot and an A4 page at 300 dpi (3,508 pixels)."""
SPACE_GAPS = (0.18, 0.4)
"""Where the cut between letter gaps and word gaps may fall, as shares of the line's ink height;
without a clear jump (a width at least :data:`SPACE_JUMP` times the one before) in that range, the
upper bound is the cut."""
SPACE_JUMP = 1.5
MIN_CONFIDENCE = 0.5


class RapidOcrRecognizer:
    name = "rapidocr-ppocrv4"
    reads_files = False

    def __init__(self) -> None:
        self._engine: Any = None
        self._lock = threading.Lock()

    def recognize(self, image: bytes) -> list[TextLine]:
        pixels = _decode(image)
        scale = 2 if max(pixels.shape[:2]) < UPSCALE_BELOW else 1
        if scale > 1:
            import cv2

            pixels = cv2.resize(pixels, None, fx=scale, fy=scale, interpolation=cv2.INTER_CUBIC)
        with self._lock:  # no direction classifier: it turned whole upright lines of print upside down
            found, _ = self._load()(pixels, use_cls=False, return_word_box=True, text_score=MIN_CONFIDENCE)
        grey = pixels.mean(axis=2) if pixels.ndim == 3 else pixels
        return [_line(item, scale, grey) for item in found or [] if str(item[1]).strip()]

    def _load(self) -> Any:
        if self._engine is None:
            try:
                from rapidocr_onnxruntime import RapidOCR
            except ImportError as exc:
                raise ConfigurationError(
                    "Offline OCR needs the `ocr` extra (pip install 'ragline[ocr]', then "
                    "pip install --no-deps rapidocr-onnxruntime==1.4.4), or RAGLINE_OCR=off.",
                    missing=exc.name or "rapidocr_onnxruntime",
                ) from exc
            self._engine = RapidOCR(params={"Global.max_side_len": MAX_SIDE})
        return self._engine


def _decode(image: bytes) -> Any:
    from PIL import Image

    try:
        with Image.open(io.BytesIO(image)) as opened:
            return np.asarray(opened.convert("RGB"))
    except Exception as exc:
        raise UnreadableDocument(
            "The OCR engine cannot decode this image.", reason=f"undecodable image ({type(exc).__name__})"
        ) from exc


def _line(item: list[Any], scale: int, grey: Any) -> TextLine:
    """One engine result — ``[box, text, score, char boxes, chars]`` — as a line in the input's pixels."""
    raw, text, score = np.asarray(item[0], dtype=float), str(item[1]), float(item[2])
    if len(item) >= 5 and len(item[3]) == len(text):  # character boxes, in the engine's pixels
        centres = [float(np.asarray(b, dtype=float)[:, 0].mean()) for b in item[3]]
        text = _spaced(text, centres, _blank_runs(grey, raw))
    text = unicodedata.normalize("NFKC", text)  # the recogniser's full-width "（" and the like
    box = raw / scale
    return TextLine(
        text=text,
        left=float(box[:, 0].min()),
        top=float(box[:, 1].min()),
        right=float(box[:, 0].max()),
        bottom=float(box[:, 1].max()),
        confidence=score,
    )


def _blank_runs(grey: Any, box: Any) -> list[float]:
    """The middles (image x) of the word-sized runs of blank columns inside the line's box."""
    h, w = grey.shape
    top, bottom = max(0, int(box[:, 1].min())), min(h, int(np.ceil(box[:, 1].max())))
    left, right = max(0, int(box[:, 0].min())), min(w, int(np.ceil(box[:, 0].max())))
    crop = grey[top:bottom, left:right]
    if crop.size == 0:
        return []
    ink = crop < (float(crop.min()) + float(crop.max())) / 2
    rows = np.flatnonzero(ink.any(axis=1))
    if rows.size == 0:
        return []
    inked = np.flatnonzero(ink.any(axis=0))
    gaps = np.diff(inked) - 1  # blank columns between consecutive inked ones
    cut = _word_gap(gaps[gaps > 0].tolist(), rows[-1] - rows[0] + 1)
    return [left + (inked[i] + inked[i + 1]) / 2 for i in np.flatnonzero(gaps >= cut)]


def _word_gap(widths: list[int], height: int) -> float:
    """The narrowest blank run that is a word space in this line (see :data:`SPACE_GAPS`)."""
    low, high = SPACE_GAPS[0] * height, SPACE_GAPS[1] * height
    distinct = sorted(set(widths))
    cut, jump = high, SPACE_JUMP
    for narrower, wider in itertools.pairwise(distinct):
        if wider >= low and narrower <= high and wider / narrower >= jump:
            cut, jump = wider, wider / narrower
    return cut


def _spaced(text: str, centres: list[float], blanks: list[float]) -> str:
    """``text`` with a space between two characters wherever a blank run lies between their centres
    and the recogniser put none."""
    out = list(text[:1])
    gaps = iter(sorted(blanks))
    gap = next(gaps, None)
    for i in range(1, len(text)):
        found = False
        while gap is not None and gap < centres[i]:
            found = found or gap > centres[i - 1]
            gap = next(gaps, None)
        if found and not text[i].isspace() and not text[i - 1].isspace():
            out.append(" ")
        out.append(text[i])
    return "".join(out)
