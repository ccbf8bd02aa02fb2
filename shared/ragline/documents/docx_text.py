"""DOCX → sections, streamed: ``Heading N``/``Title`` paragraphs build the heading path, a table is a
section of its own (its caption and header row repeated by its chunks), a picture's alt text and OCR
text stand where the picture is.

The package is read through :class:`.ZipContainer` (sizes checked before reading, members streamed)
and its XML parts through expat event handlers: no tree is built, so time is linear and memory is
one paragraph, whatever the part holds (300k empty paragraphs, a 1 GB text node, 100k nested
elements). Styles are read once into a map (the old per-paragraph lookup scanned every style: 1.2
ms a paragraph). A DOCTYPE (entity expansion) is refused: Word never writes one.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from xml.parsers import expat

from ragline.documents.docx_body import IMAGE_MARK, W_NAMESPACES, BodyText
from ragline.documents.images import PICTURE_EXTENSIONS, ocr_picture
from ragline.documents.limits import ParseBudget
from ragline.documents.raw import Parsed, RawSection, short_error, unreadable
from ragline.documents.zipped import ZipContainer

_RELATIONSHIP = "http://schemas.openxmlformats.org/package/2006/relationships Relationship"
_OFFICE_DOCUMENT = re.compile(r"/officeDocument$")
_STYLES = re.compile(r"/styles$")


class _RefusedMarkup(Exception):
    """Raised from an expat handler to stop at markup a DOCX never holds."""


def parse_xml(budget: ParseBudget, chunks: Iterator[bytes], handlers: object) -> None:
    """Feed ``chunks`` to expat with ``handlers``' ``start``/``end``/``data`` methods (namespaced
    names: ``"<uri> <local>"``), checking the deadline between slices."""
    parser = expat.ParserCreate(namespace_separator=" ")
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    parser.buffer_text = True
    parser.StartElementHandler = getattr(handlers, "start", None)
    parser.EndElementHandler = getattr(handlers, "end", None)
    parser.CharacterDataHandler = getattr(handlers, "data", None)

    def refuse(*_: object) -> None:
        raise _RefusedMarkup("a DOCTYPE or entity declaration")

    parser.StartDoctypeDeclHandler = refuse
    parser.EntityDeclHandler = refuse
    try:
        for chunk in chunks:
            budget.tick()
            parser.Parse(chunk, False)
        parser.Parse(b"", True)
    except _RefusedMarkup as exc:
        reason = "its XML declares a DOCTYPE or entities (refused: Word never writes them, they can expand)"
        raise unreadable(budget.filename, reason) from exc
    except expat.ExpatError as exc:
        raise unreadable(budget.filename, f"its XML is corrupt ({short_error(exc)})") from exc
    except (LookupError, ValueError) as exc:  # UnicodeError is a ValueError
        # An XML declaration naming an encoding expat does not know goes to Python's codecs: one
        # that is no text codec (hex: LookupError), a multi-byte one (cp932: ValueError) or one that
        # fails on any input (idna, undefined: UnicodeError). Word writes UTF-8 or UTF-16.
        reason = f"its XML declares an encoding that cannot be read ({short_error(exc)})"
        raise unreadable(budget.filename, reason) from exc


class _Relationships:
    """Targets of a ``.rels`` part by relationship type, and by id."""

    def __init__(self) -> None:
        self.targets: list[tuple[str, str]] = []
        self.by_id: dict[str, str] = {}

    def start(self, name: str, attrs: dict[str, str]) -> None:
        if name == _RELATIONSHIP and attrs.get("TargetMode") != "External":
            self.targets.append((attrs.get("Type", ""), attrs.get("Target", "")))
            self.by_id[attrs.get("Id", "")] = attrs.get("Target", "")


def _relationships(budget: ParseBudget, package: ZipContainer, source: str) -> _Relationships:
    folder, name = posixpath.split(source)
    rels = posixpath.join(folder, "_rels", f"{name}.rels")
    found = _Relationships()
    if package.has(rels):
        parse_xml(budget, package.stream(rels), found)
    return found


def _target(budget: ParseBudget, package: ZipContainer, source: str, kind: re.Pattern[str]) -> str | None:
    """The part ``source`` relates to by a relationship type matching ``kind``, if any."""
    folder = posixpath.dirname(source)
    for rel_type, target in _relationships(budget, package, source).targets:
        if kind.search(rel_type):
            return posixpath.normpath(posixpath.join(folder, target)).lstrip("/") if target else None
    return None


class _Styles:
    """Paragraph style names by style id, and the default paragraph style's name."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}
        self.default = ""
        self._style: dict[str, str] | None = None

    def start(self, name: str, attrs: dict[str, str]) -> None:
        ns, _, local = name.rpartition(" ")
        if ns not in W_NAMESPACES:
            return
        if local == "style":
            self._style = {"type": attrs.get(f"{ns} type", ""), "id": attrs.get(f"{ns} styleId", "")}
            self._style["default"] = attrs.get(f"{ns} default", "")
        elif local == "name" and self._style is not None:
            self._style["name"] = attrs.get(f"{ns} val", "")

    def end(self, name: str) -> None:
        style = self._style
        if style is None or not name.endswith(" style"):
            return
        self._style = None
        if style["type"] == "paragraph":
            self.names[style["id"]] = style.get("name", "")
            if style["default"] in ("1", "true", "on"):
                self.default = style.get("name", "")


def parse_docx(budget: ParseBudget, data: bytes) -> Parsed:
    """``Heading N`` (and ``Title``) paragraphs build the heading path; tables become sections of their
    own; pictures are read by the deployment's OCR engine, if any (:func:`_picture_texts`)."""
    package = ZipContainer(budget, data, what=".docx (a legacy .doc or an encrypted file?)")
    main = _target(budget, package, "", _OFFICE_DOCUMENT) or "word/document.xml"
    if not package.has(main):
        raise unreadable(budget.filename, "it is not a valid .docx (it has no main document part)")
    styles = _Styles()
    styles_part = _target(budget, package, main, _STYLES)
    if styles_part and package.has(styles_part):
        parse_xml(budget, package.stream(styles_part), styles)
    body = BodyText(budget, styles.names, styles.default)
    parse_xml(budget, package.stream(main), body)
    sections = body.finish()
    if body.images:
        read = _picture_texts(budget, package, main, body.images)
        sections = [_placed(section, read) for section in sections]
    return sections, 1


_MARK = re.compile(f"{IMAGE_MARK}(\\d+){IMAGE_MARK}")


def _picture_texts(budget: ParseBudget, package: ZipContainer, main: str, ids: list[str]) -> list[str]:
    """What OCR reads off each picture, as ``[Image text: …]`` (``""`` without an engine, for a picture
    of another format or one it cannot read); a picture used twice is read once."""
    if budget.recognizer is None:
        return [""] * len(ids)
    targets = _relationships(budget, package, main).by_id
    folder = posixpath.dirname(main)
    read: dict[str, str] = {}
    for rid in dict.fromkeys(ids):
        target = targets.get(rid, "")
        part = posixpath.normpath(posixpath.join(folder, target)).lstrip("/") if target else ""
        if not part or not package.has(part) or posixpath.splitext(part)[1].lower() not in PICTURE_EXTENSIONS:
            continue
        text = ocr_picture(budget, b"".join(package.stream(part)))
        read[rid] = f" [Image text: {' '.join(text.split())}] " if text.strip() else ""
    return [read.get(rid, "") for rid in ids]


def _placed(section: RawSection, read: list[str]) -> RawSection:
    def put(text: str) -> str:
        return _MARK.sub(lambda m: read[int(m.group(1))], text) if IMAGE_MARK in text else text

    return RawSection(
        put(section.text), tuple(put(h) for h in section.heading_path), section.page, put(section.header)
    )
