"""Regenerate the sample PDF and DOCX (run once; the outputs are committed).

The PDF is written by hand (Helvetica text, one content stream per page) so no PDF library is needed.
"""

from __future__ import annotations

from pathlib import Path

from docx import Document

HERE = Path(__file__).parent / "northwind"

VOLT_PAGES = [
    [
        "Northwind Volt owner's manual",
        "Battery and charging",
        "The Volt carries a 500 watt-hour battery inside the down tube.",
        "Charge it only with the supplied 4 ampere charger; a full charge takes four and a half hours.",
        "Store the battery at about 60 percent charge if the bicycle is not used for a month.",
    ],
    [
        "Motor assistance levels",
        "Eco mode gives up to 110 kilometres of range and 50 percent assistance.",
        "Tour mode gives about 80 kilometres of range and 120 percent assistance.",
        "Boost mode gives about 60 kilometres of range and 250 percent assistance.",
        "Assistance stops at 25 kilometres per hour, as required in the United Kingdom.",
    ],
]


def write_pdf(pages: list[list[str]]) -> bytes:
    objects: list[bytes] = []
    font_id = 3 + 2 * len(pages)
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(len(pages)))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode())
    for i, lines in enumerate(pages):
        ops = ["BT", "/F1 12 Tf", "14 TL", "72 740 Td"]
        for line in lines:
            ops.append(f"({line.replace('(', '[').replace(')', ']')}) Tj T*")
        ops.append("ET")
        stream = "\n".join(ops).encode()
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {4 + 2 * i} 0 R"
            f" /Resources << /Font << /F1 {font_id} 0 R >> >> >>".encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for n, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % n + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def _docx(path: Path) -> None:
    doc = Document()
    doc.add_heading("Northwind workshop services", level=1)
    doc.add_heading("Service packages", level=2)
    doc.add_paragraph(
        "The Basic service costs 60 pounds and includes gear and brake adjustment and a safety check."
    )
    doc.add_paragraph(
        "The Full service costs 140 pounds and adds a drivetrain deep clean, wheel truing and new cables."
    )
    doc.add_heading("Booking", level=2)
    doc.add_paragraph(
        "Book a workshop slot online or by phone. Bicycles are usually ready within three working days; "
        "only the Leeds store has a workshop."
    )
    table = doc.add_table(rows=2, cols=2)
    table.cell(0, 0).text, table.cell(0, 1).text = "Package", "Price"
    table.cell(1, 0).text, table.cell(1, 1).text = "Suspension service", "90 pounds"
    doc.save(str(path))


if __name__ == "__main__":
    (HERE / "volt-manual.pdf").write_bytes(write_pdf(VOLT_PAGES))
    _docx(HERE / "workshop-services.docx")
