"""Decoding uploaded bytes: exact, or a failure with the true reason; never a silent ``�``."""

from __future__ import annotations

import codecs

import pytest

from ragline.documents import parse_document
from ragline.errors import UnreadableDocument

pytestmark = pytest.mark.unit

FRENCH = "Le café près de la gare sert une crème brûlée à 3,50 € — « délicieuse », dit-on."
GERMAN = "Größere Übungen für Käse: „Zitat“ kostet 5 € – naïve Grüße."
RUSSIAN = "Привет! Это тестовый текст на русском языке, и он достаточно длинный."
POLISH = "Zażółć gęślą jaźń. Łódź jest dużym miastem w środkowej Polsce, ale nie stolicą."


def text_of(filename: str, data: bytes) -> str:
    return "\n".join(section.text for section in parse_document(filename, data).sections)


@pytest.mark.parametrize(
    ("text", "encoding"),
    [
        ("Café au lait costs 3.50 in the café near the station.", "latin-1"),
        (FRENCH, "cp1252"),
        (GERMAN, "cp1252"),
        ("El niño comió piñata en España, señor.", "latin-1"),
        (RUSSIAN, "cp1251"),
        (POLISH * 3, "cp1250"),
    ],
)
def test_given_legacy_single_byte_text_when_parsed_then_every_character_survives(
    text: str, encoding: str
) -> None:
    assert text_of("legacy.txt", text.encode(encoding)) == text


def test_given_shift_jis_text_when_parsed_then_decoded() -> None:
    text = "これは日本語のテキストです。東京は日本の首都です。" * 5

    assert text_of("japanese.txt", text.encode("shift_jis")).replace("\n", "") == text


@pytest.mark.parametrize(
    ("bom", "encoding"),
    [
        (codecs.BOM_UTF8, "utf-8"),
        (codecs.BOM_UTF16_LE, "utf-16-le"),
        (codecs.BOM_UTF16_BE, "utf-16-be"),
        (codecs.BOM_UTF32_LE, "utf-32-le"),
        (codecs.BOM_UTF32_BE, "utf-32-be"),
    ],
)
def test_given_a_byte_order_mark_when_parsed_then_it_decides_the_encoding(bom: bytes, encoding: str) -> None:
    assert text_of("marked.txt", bom + FRENCH.encode(encoding)) == FRENCH


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"])
@pytest.mark.parametrize("text", [FRENCH, RUSSIAN])
def test_given_utf16_or_32_without_a_bom_when_parsed_then_told_by_its_nul_bytes_and_decoded(
    text: str, encoding: str
) -> None:
    assert text_of("wide.txt", text.encode(encoding)) == text


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_given_utf16_without_a_bom_mixing_scripts_when_parsed_then_decoded_not_called_binary(
    encoding: str,
) -> None:
    # Given text in Latin, Cyrillic, Greek and CJK: its high bytes spread over many Unicode blocks
    lines = [f"{FRENCH} {RUSSIAN}", "Γειά σου Κόσμε, 你好世界，这是一个测试。", "Plain English too."]
    text = "\n".join(lines * 40)

    # When it is parsed without a byte-order mark, then it decodes exactly
    assert text_of("mixed-scripts.txt", text.encode(encoding)) == text


def test_given_utf8_with_one_stray_latin1_byte_when_parsed_then_unreadable_naming_the_offset() -> None:
    data = ("Ünïcödé text, " * 20).encode() + b"caf\xe9" + b" and more."

    with pytest.raises(
        UnreadableDocument, match=r"mixes UTF-8 with another encoding \(byte 0xe9 at offset 363"
    ):
        parse_document("mostly-utf8.txt", data)


def test_given_half_utf8_half_cp1252_when_parsed_then_unreadable_not_mojibake() -> None:
    data = (FRENCH + "\n").encode() * 20 + (FRENCH + "\n").encode("cp1252") * 20

    with pytest.raises(UnreadableDocument, match="mixes UTF-8"):
        parse_document("mixed.txt", data)


def test_given_ascii_with_a_nul_every_ten_bytes_when_parsed_then_binary_not_utf16_garbage() -> None:
    with pytest.raises(UnreadableDocument, match=r"binary data \(NUL bytes\)"):
        parse_document("nul.txt", b"some text\x00" * 1000)


def test_given_a_utf16_bom_on_bytes_that_are_not_utf16_when_parsed_then_the_reason_says_so() -> None:
    with pytest.raises(UnreadableDocument, match="UTF-16 byte-order mark but is not UTF-16"):
        parse_document("odd.txt", codecs.BOM_UTF16_LE + "abc".encode("utf-16-le") + b"\x00\xdc")


def test_given_html_declaring_windows_1252_when_parsed_then_the_declaration_is_used() -> None:
    html = (
        '<html><head><meta charset="windows-1252"></head><body><p>“Smart” quotes cost 5 €.</p></body></html>'
    )

    assert text_of("page.html", html.encode("cp1252")) == "“Smart” quotes cost 5 €."


def test_given_html_declaring_utf8_but_in_cp1252_when_parsed_then_the_bytes_win() -> None:
    html = f'<html><head><meta charset="utf-8"></head><body><p>{FRENCH}</p></body></html>'

    assert text_of("liar.html", html.encode("cp1252")) == FRENCH
