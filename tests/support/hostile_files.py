"""A hostile-file corpus, generated on the fly (nothing large is committed), and its runner.

Each file is ingested through the real pipeline (``IngestService.ingest`` on the embedded SQLite
stores, the fast bag-of-words embedder) in its own process, under the ingestion function's limits
from ``template.yaml`` (``Timeout`` as wall clock and CPU time, ``MemorySize`` as address space);
the outcome is the document record's status and reason, the process's wall time and its peak RSS
(its own ``VmHWM``).

``tests/integration/test_hostile_files.py`` runs it scaled down; ``bench/hostile_files.py`` at full
size for the table in ``docs/benchmarks.md``. ``scale`` shrinks the cases whose cost grows with size;
cases that must exceed a limit to be hostile (zip bombs, JSON containers) keep that size.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import resource
import subprocess
import sys
import time
import zipfile
import zlib
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from tests.support.cfn_tables import REPO_ROOT, load_template
from tests.support.pdf import pdf_document, pdf_of_repeated_page, pdf_with_form

MiB = 1024 * 1024
Build = Callable[[Path, float], None]


@dataclass(frozen=True)
class FunctionLimits:
    seconds: float
    memory_mib: int


def ingestion_limits(logical_id: str = "IngestionFunction") -> FunctionLimits:
    """The function's ``Timeout`` and ``MemorySize`` (its own, else the template's Globals)."""
    template = load_template()
    own = template["Resources"][logical_id]["Properties"]
    default = template.get("Globals", {}).get("Function", {})
    return FunctionLimits(
        seconds=float(own.get("Timeout", default.get("Timeout", 3))),
        memory_mib=int(own.get("MemorySize", default.get("MemorySize", 128))),
    )


@dataclass(frozen=True)
class Case:
    name: str
    filename: str
    build: Build
    expect: Literal["ready", "failed"]
    code: str = ""
    """The error code a ``failed`` record must carry."""


# ------------------------------------------------------------------------------------------- writers


def _write(data: bytes) -> Build:
    return lambda path, scale: path.write_bytes(data)


def _repeat(unit: bytes, mib: float, *, head: bytes = b"", tail: bytes = b"", fixed: bool = False) -> Build:
    """``head`` + ``unit`` repeated to ``mib`` MiB (times ``scale`` unless ``fixed``) + ``tail``."""

    def build(path: Path, scale: float) -> None:
        count = int(mib * (1 if fixed else scale) * MiB) // len(unit)
        with path.open("wb") as out:
            out.write(head)
            block = unit * max(1, (1 << 20) // len(unit))
            for _ in range(count // (len(block) // len(unit))):
                out.write(block)
            out.write(unit * (count % (len(block) // len(unit))))
            out.write(tail)

    return build


def _text_lines(lines: Iterable[str], encoding: str) -> bytes:
    return "".join(f"{line}\n" for line in lines).encode(encoding)


def _random_bytes(mib: float, prefix: bytes = b"") -> Build:
    return lambda path, scale: path.write_bytes(prefix + random.Random(7).randbytes(int(mib * MiB)))


# ---------------------------------------------------------------------------------------------- docx

_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_RELS = "http://schemas.openxmlformats.org/package/2006/relationships"
_DOC_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument"
_STYLES_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles"
_CONTENT_TYPES = (
    '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/'
    'content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
    'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/></Types>'
)


def _docx(
    body: Callable[[float], Iterable[bytes]], *, extra: Sequence[tuple[str, int]] = (), level: int = 6
) -> Build:
    """A minimal DOCX whose ``word/document.xml`` body is streamed from ``body(scale)``; ``extra``
    adds members of that many zero bytes (streamed, so a 1 GiB member costs no memory here)."""

    def build(path: Path, scale: float) -> None:
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=level) as z:
            z.writestr("[Content_Types].xml", _CONTENT_TYPES)
            z.writestr(
                "_rels/.rels",
                f'<Relationships xmlns="{_RELS}"><Relationship Id="rId1" Type="{_DOC_REL}" '
                'Target="word/document.xml"/></Relationships>',
            )
            with z.open("word/document.xml", "w") as out:
                out.write(
                    f'<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="{_W}"><w:body>'.encode()
                )
                for piece in body(scale):
                    out.write(piece)
                out.write(b"</w:body></w:document>")
            for name, size in extra:
                with z.open(name, "w") as out:
                    for _ in range(size // MiB):
                        out.write(bytes(MiB))

    return build


def _paragraphs(texts: Iterable[str]) -> Iterable[bytes]:
    for text in texts:
        yield f"<w:p><w:r><w:t>{text}</w:t></w:r></w:p>".encode() if text else b"<w:p/>"


def _text_node(min_mib: int, full_mib: int) -> Callable[[float], Iterable[bytes]]:
    def body(scale: float) -> Iterable[bytes]:
        yield b"<w:p><w:r><w:t>"
        for _ in range(max(min_mib, int(full_mib * scale))):
            yield b"a" * MiB
        yield b"</w:t></w:r></w:p>"

    return body


def _lying_header(inner: Build, member: str, declared: int) -> Build:
    """``inner``'s zip with ``member``'s uncompressed size rewritten to ``declared`` bytes."""

    def build(path: Path, scale: float) -> None:
        inner(path, scale)
        data = bytearray(path.read_bytes())
        name = member.encode()
        for signature, size_at, name_at in ((b"PK\x01\x02", 24, 46), (b"PK\x03\x04", 22, 30)):
            at = data.find(signature)
            while at >= 0:
                if data[at + name_at : at + name_at + len(name)] == name:
                    data[at + size_at : at + size_at + 4] = declared.to_bytes(4, "little")
                at = data.find(signature, at + 4)
        path.write_bytes(bytes(data))

    return build


def _nested(depth: int) -> Callable[[float], Iterable[bytes]]:
    def body(scale: float) -> Iterable[bytes]:
        yield b"<w:customXml>" * depth
        yield from _paragraphs(["Deep inside a hundred thousand elements."])
        yield b"</w:customXml>" * depth

    return body


def _entity_bomb(path: Path, scale: float) -> None:
    entities = "".join(f'<!ENTITY e{i} "{f"&e{i - 1};" * 10}">' for i in range(1, 10))
    document = (
        f'<?xml version="1.0"?><!DOCTYPE w:document [<!ENTITY e0 "lol">{entities}]>'
        f'<w:document xmlns:w="{_W}"><w:body><w:p><w:r><w:t>&e9;</w:t></w:r></w:p></w:body></w:document>'
    )
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", _CONTENT_TYPES)
        z.writestr(
            "_rels/.rels",
            f'<Relationships xmlns="{_RELS}"><Relationship Id="rId1" Type="{_DOC_REL}" '
            'Target="word/document.xml"/></Relationships>',
        )
        z.writestr("word/document.xml", document)


# ----------------------------------------------------------------------------------------------- pdf


def _pdf(pages: Callable[[float], int], content: Callable[[int, float], tuple[bytes, bytes]]) -> Build:
    """A valid PDF (correct xref): one Helvetica page per ``content(page index, scale)``, a content
    stream and its ``/Filter`` entry."""

    def build(path: Path, scale: float) -> None:
        path.write_bytes(pdf_document([content(i, scale) for i in range(pages(scale))]))

    return build


def _page_text(i: int, scale: float) -> tuple[bytes, bytes]:
    return b"BT /F1 12 Tf 72 720 Td (Page %d says something worth indexing.) Tj ET" % (i + 1), b""


def _flate_spaces(mib: int) -> tuple[bytes, bytes]:
    """``mib`` MiB of spaces, deflated a MiB at a time (about 1,000:1)."""
    deflate = zlib.compressobj(6)
    stream = b"".join(deflate.compress(b" " * MiB) for _ in range(mib)) + deflate.flush()
    return stream, b" /Filter /FlateDecode"


# -------------------------------------------------------------------------------------- long headings

_WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet")


def _words(size: int, seed: int) -> str:
    rng = random.Random(seed)
    out = " ".join(rng.choice(_WORDS) for _ in range(size // 6 + 1))
    return out[:size].rstrip()


def long_headings(size: int, *, html: bool = False) -> bytes:
    """``size`` bytes: six nested headings of words (~14% of ``size`` each), then prose sentences
    under the deepest: every chunk of the prose sits under a heading path of ~85% of the file."""
    heading = size * 14 // 100
    body = " ".join(f"Sentence {i} of the body under the deepest heading." for i in range(size // 50))
    body = body[: size - 6 * heading]
    if html:
        heads = "".join(f"<h{n}>{_words(heading, n)}</h{n}>" for n in range(1, 7))
        return f"<html><body>{heads}<p>{body}</p></body></html>".encode()
    heads = "".join(f"{'#' * n} {_words(heading, n)}\n\n" for n in range(1, 7))
    return f"{heads}{body}\n".encode()


def long_headings_docx(size: int) -> bytes:
    """:func:`long_headings` as a DOCX (``heading 1``..``heading 6`` styles): ``size`` bytes of text
    that deflate to a few percent of it (the issue's 53 KB file held ~6 MB of headings)."""
    heading = size * 14 // 100
    styles = "".join(
        f'<w:style w:type="paragraph" w:styleId="H{n}"><w:name w:val="heading {n}"/></w:style>'
        for n in range(1, 7)
    )
    heads = "".join(
        f'<w:p><w:pPr><w:pStyle w:val="H{n}"/></w:pPr><w:r><w:t>{_words(heading, n)}</w:t></w:r></w:p>'
        for n in range(1, 7)
    )
    body = " ".join(f"Sentence {i} of the body under the deepest heading." for i in range(size // 50))
    body = body[: size - 6 * heading]
    paragraph = f"<w:p><w:r><w:t>{body}</w:t></w:r></w:p>"
    document = f'<w:document xmlns:w="{_W}"><w:body>{heads}{paragraph}</w:body></w:document>'
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", _CONTENT_TYPES)
        rel = '<Relationships xmlns="{}"><Relationship Id="rId1" Type="{}" Target="{}"/></Relationships>'
        z.writestr("_rels/.rels", rel.format(_RELS, _DOC_REL, "word/document.xml"))
        z.writestr("word/_rels/document.xml.rels", rel.format(_RELS, _STYLES_REL, "styles.xml"))
        z.writestr("word/styles.xml", f'<w:styles xmlns:w="{_W}">{styles}</w:styles>')
        z.writestr("word/document.xml", document)
    return out.getvalue()


def _long_headings(mib: float, *, html: bool = False) -> Build:
    return lambda path, scale: path.write_bytes(long_headings(int(mib * scale * MiB), html=html))


# --------------------------------------------------------------------------------------------- cases

_FRENCH = "Le café près de la gare sert un crème brûlée délicieux à 3,50 €, dit-on à l'hôtel."
_RUSSIAN = "Привет! Это тестовый текст на русском языке, записанный в кодировке Windows-1251."

_HI = _docx(lambda scale: _paragraphs(["Hi."]))


def _hi_with(members: Callable[[float], Sequence[tuple[str, int]]]) -> Build:
    """A one-paragraph DOCX plus ``members(scale)``: (name, MiB of zeros) each, deflated fast."""

    def build(path: Path, scale: float) -> None:
        _docx(lambda s: _paragraphs(["Hi."]), extra=members(scale), level=1)(path, scale)

    return build


def _attribute(scale: float) -> Iterable[bytes]:
    """An attribute of random letters (they barely compress: under the ratio check, one huge token)."""
    letters = bytes(ord("a") + i % 26 for i in range(256))
    size = max(12, int(60 * scale)) * MiB
    yield b'<w:p w:rsidR="' + random.Random(3).randbytes(size).translate(letters) + b'"/>'
    yield from _paragraphs(["Text after it."])


def _short_paragraphs(scale: float) -> Iterable[bytes]:
    return _paragraphs(f"Paragraph {i} of the handbook." for i in range(int(100_000 * scale)))


_JSON_KEY = b'{"' + b"k" * MiB + b'": ['
_CSV_HEADER = b",".join(b"c" * 100 + b"%d" % i for i in range(9000)) + b"\n"
_TEXT_NODE = _docx(_text_node(300, 1024), level=1)
_FAILED, _READY = "failed", "ready"
_TOO_LARGE, _UNREADABLE, _EMPTY = "document_too_large", "unreadable_document", "empty_document"

CASES: tuple[Case, ...] = (
    # issue 11, item 5: inputs that backtracked quadratically or looked styles up per paragraph
    Case("runs of !!! (100 KB)", "bangs.txt", _repeat(b"!" * 10_000 + b" ", 0.1, fixed=True), _READY),
    Case("heading of 160k spaces", "heading.md", _write(b"# T" + b" " * 160_000 + b"x\n\nBody.\n"), _READY),
    Case(
        "300k empty paragraphs", "blank.docx", _docx(lambda s: _paragraphs([""] * 300_000)), _FAILED, _EMPTY
    ),
    # item 6: what a zip expands to
    Case("1 GiB text node", "text-node.docx", _TEXT_NODE, _FAILED, _TOO_LARGE),
    Case(
        "1 GiB text node, header says 4 MiB",
        "lying-header.docx",
        _lying_header(_docx(_text_node(64, 1024), level=1), "word/document.xml", 4 * MiB),
        _FAILED,
        _UNREADABLE,
    ),
    Case(
        "zip bomb: 200 MiB member",
        "ratio-bomb.docx",
        _hi_with(lambda scale: [("word/media/a.bin", max(32, int(200 * scale)) * MiB)]),
        _FAILED,
        _TOO_LARGE,
    ),
    Case(
        "zip bomb: 20 x 14 MiB",
        "sum-bomb.docx",
        _hi_with(lambda scale: [(f"word/media/{i}.bin", 14 * MiB) for i in range(20)]),
        _FAILED,
        _TOO_LARGE,
    ),
    Case("100k nested XML elements", "nested.docx", _docx(_nested(100_000)), _READY),
    Case("60 MiB XML attribute", "attribute.docx", _docx(_attribute), _READY),
    Case("XML entity bomb", "entities.docx", _entity_bomb, _FAILED, _UNREADABLE),
    Case("100k short paragraphs", "paragraphs.docx", _docx(_short_paragraphs), _READY),
    Case("not a zip", "random.docx", _random_bytes(1, b"PK\x03\x04"), _FAILED, _UNREADABLE),
    # items 11 and 12: encodings
    Case("Windows-1252 text", "cp1252.txt", _write(_text_lines([_FRENCH] * 2000, "cp1252")), _READY),
    Case("Windows-1251 text", "cp1251.txt", _write(_text_lines([_RUSSIAN] * 2000, "cp1251")), _READY),
    Case(
        "UTF-16 without BOM",
        "utf16.txt",
        _write(_text_lines(["No byte-order mark."] * 20_000, "utf-16-le")),
        _READY,
    ),
    Case(
        "UTF-8 and Windows-1252 mixed",
        "mixed.txt",
        _write(_text_lines([_FRENCH] * 500, "utf-8") + _text_lines([_FRENCH] * 500, "cp1252")),
        _FAILED,
        _UNREADABLE,
    ),
    Case("a NUL every 10 bytes", "nul-heavy.txt", _repeat(b"some text\x00", 10), _FAILED, _UNREADABLE),
    Case("10 MiB of NUL", "nul.txt", _repeat(b"\x00", 10), _FAILED, _UNREADABLE),
    Case("random bytes", "random.txt", _random_bytes(5), _FAILED, _UNREADABLE),
    Case("empty file", "empty.txt", _write(b""), _FAILED, _EMPTY),
    # size and shape
    Case(
        "50 MiB of prose: the upload limit",
        "prose.txt",
        _repeat(b"The quick brown fox jumps. ", 49.9),
        _READY,
    ),
    Case("one 20 MiB line", "one-line.txt", _repeat(b"lorem ipsum dolor sit amet ", 20), _READY),
    Case("5M tiny sentences", "tiny.txt", _repeat(b"Go. ", 20), _READY),
    Case("100k-character words", "long-words.txt", _repeat(b"x" * 100_000 + b" ", 20), _READY),
    Case(
        "JSON: 1 MiB key, 1M values",
        "paths.json",
        _repeat(b"0,", 2, head=_JSON_KEY, tail=b"0]}", fixed=True),
        _FAILED,
        _TOO_LARGE,
    ),
    Case(
        "JSON: 16 MiB of []",
        "brackets.json",
        _repeat(b"[],", 16, head=b"[", tail=b"[]]", fixed=True),
        _FAILED,
        _TOO_LARGE,
    ),
    Case(
        "JSON nested 1M deep", "deep.json", _write(b"[" * 1_000_000 + b"]" * 1_000_000), _FAILED, _UNREADABLE
    ),
    Case("CSV: one 20 MiB line", "wide.csv", _repeat(b"ab,", 20), _FAILED, _UNREADABLE),
    Case(
        "CSV: 9k long column names",
        "columns.csv",
        _repeat(b"x," * 9000 + b"\n", 18, head=_CSV_HEADER, fixed=True),
        _FAILED,
        _TOO_LARGE,
    ),
    Case("HTML: 1M </", "end-tags.html", _repeat(b"</", 2, head=b"<p>Hello there.</p>"), _READY),
    Case("HTML: 500k nested div", "deep.html", _repeat(b"<div>", 2.5, tail=b"Deep text."), _READY),
    Case("HTML: 20 MiB of tags", "tags.html", _repeat(b"<b>x</b> ", 20), _READY),
    Case(
        "PDF: garbage after the header", "garbage.pdf", _random_bytes(5, b"%PDF-1.7\n"), _FAILED, _UNREADABLE
    ),
    Case("PDF: 3,000 pages", "pages.pdf", _pdf(lambda s: int(3000 * s), _page_text), _READY),
    Case(
        "PDF: 500 MiB flate stream",
        "flate-bomb.pdf",
        _pdf(lambda s: 1, lambda i, s: _flate_spaces(max(100, int(500 * s)))),
        _FAILED,
        _TOO_LARGE,
    ),
    # issue 24, item 3: every chunk carried the whole heading path (5.8 GB written for 7 MB)
    Case("Markdown: six 1 MiB headings", "headings.md", _long_headings(7), _READY),
    Case("HTML: six 1 MiB headings", "headings.html", _long_headings(7, html=True), _READY),
    Case(
        "DOCX: six 1 MiB headings",
        "headings.docx",
        lambda path, scale: path.write_bytes(long_headings_docx(int(7 * scale * MiB))),
        _READY,
    ),
    # item 9: refusals that say what was too large
    Case(
        "PDF: 100 MiB flate stream in a form XObject",
        "form-bomb.pdf",
        lambda path, scale: path.write_bytes(pdf_with_form(*_flate_spaces(100))),
        _FAILED,
        _TOO_LARGE,
    ),
    Case(
        "PDF: 200k pages",
        "200k-pages.pdf",
        lambda path, scale: path.write_bytes(pdf_of_repeated_page(200_000)),
        _FAILED,
        _TOO_LARGE,
    ),
    Case(
        "UTF-16 without BOM, mixed scripts",
        "utf16-mixed.txt",
        _write(_text_lines([f"{_FRENCH} {_RUSSIAN} 你好世界。"] * 5_000, "utf-16-le")),
        _READY,
    ),
)


# -------------------------------------------------------------------------------------------- runner


@dataclass(frozen=True)
class Outcome:
    case: Case
    size: int
    status: str
    """The record's status, or how the process ended: ``timeout``, ``killed (signal N)``, ``exit N``."""
    code: str
    reason: str
    seconds: float
    peak_rss_mib: float

    @property
    def finished(self) -> bool:
        return self.status in ("ready", "failed")


def run_case(case: Case, workdir: Path, limits: FunctionLimits, scale: float = 1.0) -> Outcome:
    """Build ``case`` into ``workdir`` and ingest it in a fresh process under ``limits``."""
    folder = workdir / case.filename.replace(".", "-")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / case.filename
    case.build(path, scale)
    size = path.stat().st_size
    command = [sys.executable, "-m", "tests.support.hostile_files", str(path), str(folder)]
    command += [str(limits.seconds), str(limits.memory_mib)]
    env = {
        **os.environ,
        "OPENBLAS_NUM_THREADS": "1",
        "PYTHONPATH": f"{REPO_ROOT / 'shared'}{os.pathsep}{REPO_ROOT}",
    }
    started = time.monotonic()
    with (folder / "stdout").open("wb") as out, (folder / "stderr").open("wb") as err:
        process = subprocess.Popen(command, cwd=REPO_ROOT, env=env, stdout=out, stderr=err)
        status = ""
        while not (reaped := os.wait4(process.pid, os.WNOHANG))[0]:
            if not status and time.monotonic() - started > limits.seconds:
                process.kill()
                status = "timeout"
            time.sleep(0.02)
    seconds = time.monotonic() - started
    process.returncode = code = os.waitstatus_to_exitcode(reaped[1])
    # wait4's ru_maxrss starts from the parent's peak (Linux carries it over fork and exec), so the
    # child reports its own high-water mark; a child that died reports nothing, and gets that bound.
    peak = reaped[2].ru_maxrss / 1024
    path.unlink()
    if not status and code:
        status = f"killed (signal {-code})" if code < 0 else f"exit {code}"
    if status:
        tail = (folder / "stderr").read_text(errors="replace")[-300:]
        return Outcome(case, size, status, "", tail, seconds, peak)
    record = json.loads((folder / "stdout").read_text().strip().splitlines()[-1])
    return Outcome(
        case, size, record["status"], record["code"], record["reason"], seconds, record["peak_mib"]
    )


def run_corpus(
    workdir: Path,
    limits: FunctionLimits,
    *,
    scale: float = 1.0,
    workers: int = 1,
    cases: Sequence[Case] = CASES,
) -> list[Outcome]:
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(lambda case: run_case(case, workdir, limits, scale), cases))


def markdown_table(outcomes: Sequence[Outcome]) -> str:
    rows = [
        "| case | file | size | outcome | reason | seconds | peak RSS MiB |",
        "|---|---|---:|---|---|---:|---:|",
    ]
    for o in outcomes:
        size = f"{o.size / MiB:,.1f} MiB" if o.size >= MiB // 10 else f"{o.size:,} B"
        outcome = f"{o.status} ({o.code})" if o.code else o.status
        reason = o.reason.replace("|", "\\|").replace("\n", " ")
        cells = [o.case.name, f"`{o.case.filename}`", size, outcome, reason[:160]]
        rows.append(f"| {' | '.join(cells)} | {o.seconds:.1f} | {o.peak_rss_mib:,.0f} |")
    return "\n".join(rows)


# --------------------------------------------------------------------------------- the child process


def _ingest_one(path: Path, home: Path) -> dict[str, str | float]:
    from ragline.adapters.embedded.documents import SqliteDocumentRegistry
    from ragline.adapters.embedded.store import SqliteVectorStoreProvider
    from ragline.adapters.embedded.tenants import SqliteTenantRegistry
    from ragline.domain.models import TenantScope
    from ragline.errors import RaglineError
    from ragline.services.ingest import IngestService, IngestSettings
    from ragline.services.namespaces import new_namespace
    from tests.support.fakes import BowEmbedder
    from tests.support.vectors import DIM

    tenants = SqliteTenantRegistry(home / "tenants.sqlite")
    tenants.create_namespace(new_namespace("hostile", "corpus"))
    documents = SqliteDocumentRegistry(home / "documents.sqlite")
    service = IngestService(
        registry=tenants,
        documents=documents,
        stores=SqliteVectorStoreProvider(home / "store.sqlite", dimension=DIM),
        embedder=BowEmbedder(),
        tokenizer=BowEmbedder(),
        settings=IngestSettings(),
    )
    scope = TenantScope(tenant_id="hostile", namespace_id="corpus")
    with contextlib.suppress(RaglineError):  # the record carries it
        service.ingest(scope, filename=path.name, data=path.read_bytes(), document_id="case")
    record = documents.get("hostile", "corpus", "case")
    assert record is not None
    status = Path("/proc/self/status").read_text()
    peak_kib = int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:")))
    return {
        "status": record.status,
        "code": record.error_code,
        "reason": record.error_message,
        "peak_mib": peak_kib / 1024,
    }


def _limit_self(seconds: float, memory_mib: int) -> None:
    """The function's limits on this process: address space (at least its RSS) and CPU time."""
    memory = memory_mib * MiB
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CPU, (int(seconds), int(seconds) + 5))


if __name__ == "__main__":
    _limit_self(float(sys.argv[3]), int(sys.argv[4]))
    print(json.dumps(_ingest_one(Path(sys.argv[1]), Path(sys.argv[2]))))
