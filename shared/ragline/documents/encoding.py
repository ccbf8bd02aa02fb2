"""Bytes → text, never corrupted silently: decode exactly, or fail with the reason.

In order: a byte-order mark (UTF-8/16/32) decides; NUL bytes mean UTF-16/32 without a mark (told by
where the NULs sit) or binary data; then strict UTF-8; then, if the bytes mix UTF-8 with something
else, a failure; otherwise the legacy encoding charset-normalizer finds least garbled, Windows-1252
first among equals (``é`` is the same byte in most Latin code pages, and 1252 is by far the most
common). A wrong guess between Latin code pages that garble nothing (1252 vs 1254) stays possible.
"""

from __future__ import annotations

import codecs
import re
from collections import Counter

from ragline.documents.raw import unreadable

_SAMPLE = 65536
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f]")
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le", "UTF-32"),
    (codecs.BOM_UTF32_BE, "utf-32-be", "UTF-32"),
    (codecs.BOM_UTF8, "utf-8", "UTF-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le", "UTF-16"),
    (codecs.BOM_UTF16_BE, "utf-16-be", "UTF-16"),
)
# A well-formed UTF-8 multi-byte sequence (fixed-length alternatives: no backtracking).
_UTF8_SEQUENCE = re.compile(rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}")
_NON_ASCII = bytes(range(0x80, 0x100))
# Legacy encodings worth guessing, most likely first (ties go to the earlier one). No Mac or ISO
# Latin variants: on ordinary text they tie with 1252 while garbling its punctuation.
_CANDIDATES = (
    "cp1252", "cp1250", "cp1251", "cp1253", "cp1254", "cp1257", "cp1255", "cp1256", "cp1258",
    "koi8_r", "cp874", "cp932", "euc_jp", "gb18030", "big5", "cp949",
)  # fmt: skip
_MAX_CHAOS = 0.25
"""charset-normalizer's mess ratio above which a decoding is garbage (its own default is 0.2; real
Polish prose in cp1250 scores 0.22)."""
_DETECT_SAMPLE = 1024 * 1024
_NOT_CHARSETS = frozenset({"utf-7", "unicode-escape", "raw-unicode-escape", "punycode", "idna", "undefined"})
"""Python codecs a ``<meta charset>`` may name that are no web charset (the WHATWG Encoding standard
forbids UTF-7): they decode ``\\ud800`` or ``+2AA-`` to lone surrogates, which no later stage can
encode (lxml raised ``UnicodeEncodeError``), or they fail on any input."""


def decode_text(filename: str, data: bytes, *, declared: str = "") -> str:
    """The text of ``data`` with ``\\n`` line ends; ``declared`` is a charset the file names itself
    (an HTML ``<meta charset>``), tried right after a byte-order mark."""
    text = _decode(filename, data, declared)
    sample = text[:_SAMPLE]
    if len(_CONTROL.findall(sample)) > len(sample) // 20:
        raise unreadable(filename, "it contains binary data (control characters), not text")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def _decode(filename: str, data: bytes, declared: str) -> str:
    for bom, encoding, name in _BOMS:
        if data.startswith(bom):
            try:
                return data[len(bom) :].decode(encoding)
            except UnicodeDecodeError as exc:
                if name == "UTF-32":  # FF FE 00 00 may also be a UTF-16 mark and a NUL character
                    continue
                reason = f"it starts with a {name} byte-order mark but is not {name} (at byte {exc.start})"
                raise unreadable(filename, reason) from exc
    if declared and (text := _try_declared(data, declared)) is not None:
        return text
    if b"\x00" in data:
        return _decode_wide(filename, data)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        first_bad = exc.start
    stripped, sequences = _UTF8_SEQUENCE.subn(b"", data)
    invalid = len(stripped) - len(stripped.translate(None, _NON_ASCII))
    if sequences and sequences * 4 >= invalid:
        reason = (
            f"it mixes UTF-8 with another encoding (byte 0x{data[first_bad]:02x} at offset {first_bad}"
            " is not UTF-8)"
        )
        raise unreadable(filename, reason)
    return _decode_legacy(filename, data)


def _try_declared(data: bytes, declared: str) -> str | None:
    try:
        name = codecs.lookup(declared).name
    except LookupError:
        return None
    # An ASCII-readable meta tag cannot be UTF-16 (HTML spec), and some codecs are no charset at all.
    if name.startswith(("utf-16", "utf-32")) or name in _NOT_CHARSETS:
        return None
    try:
        return data.decode(name)
    except (UnicodeError, LookupError):
        # The declaration is wrong (UnicodeDecodeError), or names a codec that is no charset: a
        # bytes-to-bytes one (hex, base64, zlib: LookupError) or one that fails whatever the bytes
        # (undefined, punycode: a bare UnicodeError). Detect instead.
        return None


def _nul_share(lane: bytes) -> float:
    return lane.count(0) / len(lane) if lane else 0.0


def _one_script(high: bytes) -> bool:
    """High bytes of UTF-16 text in one alphabet take one or two values (``00`` for ASCII, ``04`` for
    Cyrillic, …); ASCII read as UTF-16 by mistake spreads over dozens."""
    top = sorted(Counter(high).values(), reverse=True)[:2]
    return sum(top) >= 0.9 * len(high)


def _spaced(sample: bytes, high_at: int) -> bool:
    """UTF-16 text in several scripts (Latin, Cyrillic and CJK: its high bytes spread): its ASCII
    code units (high byte ``00``) are words *and the blanks between them*, so at least one in
    twenty is a space or a line end; ASCII with a NUL every few bytes read as UTF-16 has none."""
    units = zip(sample[high_at::2], sample[1 - high_at :: 2], strict=False)
    lows = bytes(low for high, low in units if not high)
    blanks = sum(map(lows.count, b" \n\r\t"))
    return len(lows) > 0 and blanks * 20 >= len(lows)


def _wide_encoding(data: bytes) -> str | None:
    """UTF-16/32 without a byte-order mark: NULs in only one byte lane, and (UTF-16) a lane of high
    bytes from one or two Unicode blocks, or, for text mixing scripts, ASCII units spaced like words."""
    sample = data[: _SAMPLE - _SAMPLE % 4]
    lanes = [_nul_share(sample[i::4]) for i in range(4)]
    if lanes[2] > 0.9 and lanes[3] > 0.9 and lanes[0] < 0.5:
        return "utf-32-le"
    if lanes[0] > 0.9 and lanes[1] > 0.9 and lanes[3] < 0.5:
        return "utf-32-be"
    even, odd = sample[0::2], sample[1::2]
    for high, low, encoding, high_at in ((odd, even, "utf-16-le", 1), (even, odd, "utf-16-be", 0)):
        one_lane = _nul_share(high) >= 0.02 and _nul_share(low) <= _nul_share(high) / 10
        if one_lane and (_one_script(high) or _spaced(sample, high_at)):
            return encoding
    return None


def _decode_wide(filename: str, data: bytes) -> str:
    encoding = _wide_encoding(data)
    if encoding is None:
        raise unreadable(filename, "it contains binary data (NUL bytes), not text")
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        name = encoding[:6].upper()
        reason = f"it looks like {name} without a byte-order mark but is not {name} (at byte {exc.start})"
        raise unreadable(filename, reason) from exc


def _decode_legacy(filename: str, data: bytes) -> str:
    from charset_normalizer import from_bytes  # deferred: only non-UTF-8 text pays its import

    sample = data
    if len(data) > _DETECT_SAMPLE:  # cut at a line end: never inside a multi-byte character
        cut = data.rfind(b"\n", 0, _DETECT_SAMPLE)
        sample = data[: cut + 1] if cut > 0 else data
    chaos: dict[str, float] = {}
    for match in from_bytes(sample, cp_isolation=list(_CANDIDATES), threshold=_MAX_CHAOS):
        for name in match.could_be_from_charset:
            if name in _CANDIDATES:
                chaos[name] = min(match.chaos, chaos.get(name, 1.0))
    if not chaos:
        raise unreadable(filename, "it is not UTF-8 text, and no other encoding decodes it cleanly")
    least = min(chaos.values())
    encoding = next(name for name in _CANDIDATES if chaos.get(name, 1.0) <= least + 1e-9)
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        reason = f"it reads as {encoding} at first but not throughout (at byte {exc.start}): mixed encodings?"
        raise unreadable(filename, reason) from exc
