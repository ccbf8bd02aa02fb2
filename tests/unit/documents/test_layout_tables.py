"""Tables found in laid-out page text (a PDF's layout text, an OCR'd page's): what is a table, what is
not, and what becomes of the text around one."""

from __future__ import annotations

import io

import pytest
from fpdf import FPDF

from ragline.documents import parse_document
from ragline.documents.layout_tables import split_tables
from ragline.documents.page_text import TextLine, page_text

pytestmark = pytest.mark.unit

PRICES = """Price list

All prices   include VAT.

Table 1: E-bikes

Model              Price      Weight
Volt 1         2,350 EUR     21.4 kg

Volt 2         2,700 EUR     21.8 kg
City Lite      1,899 EUR     18.2 kg

Delivery is free above 500 euros."""


def test_a_laid_out_table_becomes_rows_under_its_caption_and_header_and_the_prose_stays() -> None:
    sections, found = split_tables(PRICES, 3)
    assert found == 1
    prose_before, table, prose_after = sections
    assert prose_before.text == "Price list\n\nAll prices include VAT."  # runs of spaces closed up
    assert table.header == "Table 1: E-bikes\n| Model | Price | Weight |\n| --- | --- | --- |"
    assert table.text.split("\n") == [
        "| Volt 1 | 2,350 EUR | 21.4 kg |",
        "| Volt 2 | 2,700 EUR | 21.8 kg |",
        "| City Lite | 1,899 EUR | 18.2 kg |",
    ]
    assert prose_after.text == "Delivery is free above 500 euros."
    assert {s.page for s in sections} == {3}


def test_key_value_rows_with_numbers_in_the_first_row_have_no_header() -> None:
    text = "Weight        23.2 kg\nRange         95 km\nMotor         250 W"
    (table,), found = split_tables(text, None)
    assert found == 1 and table.header == ""
    assert table.text.split("\n")[0] == "| Weight | 23.2 kg |"


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(
            "1.   Remove the cover.\n2.   Drain the tank.\n3.   Rinse the filter.", id="numbered-list"
        ),
        pytest.param("•   Brakes\n•   Gears\n•   Lights\n•   Battery", id="bullets"),
        pytest.param("Model   Price\nVolt 1   2,350 EUR", id="two-rows-only"),
        pytest.param(
            "\n".join(
                "The left column of this page runs on   while the right column says something else entirely"
                for _ in range(6)
            ),
            id="two-columns-of-prose",
        ),
    ],
)
def test_what_is_not_a_table_stays_prose(text: str) -> None:
    sections, found = split_tables(text, None)
    assert found == 0 and all(not s.header and "|" not in s.text for s in sections)


def box(text: str, left: float, top: float) -> TextLine:
    return TextLine(text=text, left=left, top=top, right=left + 14 * len(text), bottom=top + 20)


def test_an_ocr_page_laid_out_puts_each_column_at_its_place() -> None:
    # Given OCR boxes of a table whose first column's texts differ in length
    rows = [
        ("Accessory", "Price"),
        ("Helmet Aero", "215 EUR"),
        ("Bell", "72 EUR"),
        ("Basket Wicker", "235 EUR"),
    ]
    lines = [
        box(text, x, 30 * i) for i, row in enumerate(rows) for text, x in zip(row, (0, 400), strict=True)
    ]
    # When the page is laid out
    laid = page_text(lines, layout=True).split("\n")
    # Then every second column starts at one character column, and the table is found
    assert len({line.index(row[1]) for line, row in zip(laid, rows, strict=True)}) == 1
    (table,), _ = split_tables("\n".join(laid), 1)
    assert table.header.startswith("| Accessory | Price |") and "| Bell | 72 EUR |" in table.text
    # while without layout the row reads as one line of words
    assert page_text(lines).split("\n")[2] == "Bell 72 EUR"


def pdf_of(write: object) -> bytes:
    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    write(pdf)  # type: ignore[operator]
    out = io.BytesIO()
    pdf.output(out)
    return out.getvalue()


PROSE = (
    "Every bike is assembled in the workshop and test-ridden before delivery. The frame carries a ten "
    "year warranty, the motor and battery two years, and wear parts such as tyres and brake pads none. "
)


def test_a_text_layer_pdf_table_is_found_and_justified_and_two_column_prose_are_not() -> None:
    def table(pdf: FPDF) -> None:
        pdf.multi_cell(0, 6, PROSE * 2, align="J")
        with pdf.table(col_widths=(50, 40, 40), text_align=("LEFT", "RIGHT", "RIGHT")) as t:
            for cells in [
                ("Part", "Price", "Stock"),
                ("Chain", "29.90 EUR", "12"),
                ("Tyre", "39.50 EUR", "4"),
            ]:
                row = t.row()
                for cell in cells:
                    row.cell(cell)

    def columns(pdf: FPDF) -> None:
        y = pdf.get_y()
        pdf.multi_cell(90, 6, PROSE * 3, align="J")
        pdf.set_xy(110, y)
        pdf.multi_cell(90, 6, PROSE * 3, align="J")

    parsed = parse_document("parts.pdf", pdf_of(table))
    tables = [s for s in parsed.sections if s.header]
    assert [t.header.split("\n")[0] for t in tables] == ["| Part | Price | Stock |"]
    assert tables[0].text == "| Chain | 29.90 EUR | 12 |\n| Tyre | 39.50 EUR | 4 |"
    assert "ten year warranty" in " ".join(s.text for s in parsed.sections if not s.header)
    prose = parse_document("columns.pdf", pdf_of(columns))
    assert all(not s.header and "|" not in s.text for s in prose.sections)


def test_a_page_of_hundreds_of_narrow_columns_is_not_a_table() -> None:
    # Given lines of 300 short cells each, none lining up into fewer than 256 columns
    lines = ["  ".join(f"c{i:03d}" for i in range(300)) for _ in range(50)]
    sections, found = split_tables("\n".join(lines), None)
    assert found == 0 and len(sections) == 1 and "|" not in sections[0].text


def far_apart_pdf(rows: int, far: float) -> bytes:
    """A page whose rows each hold a word at the left edge and one ``far`` points to the right."""
    from pypdf import PdfWriter
    from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

    writer = PdfWriter()
    page = writer.add_blank_page(612, 792)
    font = DictionaryObject(
        {NameObject("/Type"): NameObject("/Font"), NameObject("/Subtype"): NameObject("/Type1"),
         NameObject("/BaseFont"): NameObject("/Helvetica")}
    )  # fmt: skip
    fonts = DictionaryObject({NameObject("/F1"): writer._add_object(font)})
    page[NameObject("/Resources")] = DictionaryObject({NameObject("/Font"): fonts})
    content = DecodedStreamObject()
    content.set_data(
        "\n".join(
            f"BT /F1 12 Tf 10 {y} Td (row{i}) Tj ET BT /F1 12 Tf {far} {y} Td (x{i}) Tj ET"
            for i, y in enumerate(range(760, 760 - 14 * rows, -14))
        ).encode()
    )
    page[NameObject("/Contents")] = writer._add_object(content)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def test_text_placed_far_off_the_page_is_never_laid_out(caplog: pytest.LogCaptureFixture) -> None:
    # Given rows whose second word sits ten million points to the right (megabytes of spaces a line,
    # if it were laid out)
    parsed = parse_document("far.pdf", far_apart_pdf(50, 10_000_000))
    # Then the page is read as plain text: no table, no layout pass (pypdf would warn of whitespace)
    assert all(not s.header for s in parsed.sections) and "row49" in parsed.sections[-1].text
    assert not [r for r in caplog.records if "whitespace" in r.getMessage()]
    # while the same rows within the page are a table
    (near,) = parse_document("near.pdf", far_apart_pdf(20, 300)).sections
    assert near.text.split("\n")[:2] == ["| row0 | x0 |", "| row1 | x1 |"]  # digits in row 0: no header


def test_a_laid_out_ocr_row_is_padded_to_at_most_a_thousand_columns() -> None:
    # Given boxes one pixel a character, the second 5 million pixels to the right
    lines = [TextLine("ab", 0, 0, 2, 20), TextLine("cd", 5_000_000, 0, 5_000_002, 20)]
    assert page_text(lines, layout=True) == "ab" + " " * 998 + "cd"


def long_table_pdf(repeat_header: bool) -> bytes:
    """A price table of 70 rows under a caption: it runs onto a second page."""

    def write(pdf: FPDF) -> None:
        pdf.cell(0, 8, "Table 3: Spokes", new_x="LMARGIN", new_y="NEXT")
        with pdf.table(
            col_widths=(60, 40), text_align=("LEFT", "RIGHT"), repeat_headings=int(repeat_header)
        ) as t:
            for cells in [
                ("Spoke", "Price"),
                *((f"Spoke type {chr(65 + i % 26)}{i}", f"{i}.50 EUR") for i in range(70)),
            ]:
                row = t.row()
                for cell in cells:
                    row.cell(cell)

    return pdf_of(write)


@pytest.mark.parametrize("repeat_header", [False, True], ids=["header-once", "header-repeated"])
def test_a_table_running_onto_the_next_page_keeps_its_caption_and_header_there(repeat_header: bool) -> None:
    parsed = parse_document("spokes.pdf", long_table_pdf(repeat_header))
    tables = [s for s in parsed.sections if s.header]
    assert len(tables) >= 2 and [t.page for t in tables] == list(range(1, len(tables) + 1))
    assert {t.header for t in tables} == {"Table 3: Spokes\n| Spoke | Price |\n| --- | --- |"}
    rows = [line for t in tables for line in t.text.split("\n")]
    assert rows == [f"| Spoke type {chr(65 + i % 26)}{i} | {i}.50 EUR |" for i in range(70)]


def test_a_captioned_table_at_the_top_of_the_next_page_is_another_table() -> None:
    def write(pdf: FPDF) -> None:
        for caption, name in (("Table 3: Spokes", "Spoke"), ("Table 4: Hubs", "Hub")):
            pdf.cell(0, 8, caption, new_x="LMARGIN", new_y="NEXT")
            with pdf.table(col_widths=(60, 40), text_align=("LEFT", "RIGHT")) as t:
                for cells in [(name, "Price"), *((f"{name} {i}", f"{i}.50 EUR") for i in range(5))]:
                    row = t.row()
                    for cell in cells:
                        row.cell(cell)
            if name == "Spoke":
                pdf.add_page()

    tables = [s for s in parse_document("parts.pdf", pdf_of(write)).sections if s.header]
    assert [(t.page, t.header.split("\n")[0]) for t in tables] == [
        (1, "Table 3: Spokes"),
        (2, "Table 4: Hubs"),
    ]
