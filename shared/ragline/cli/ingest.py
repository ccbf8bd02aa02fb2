"""``ragline ingest``: files and folders → one namespace, with a progress bar (on stderr) and a summary
table, or with ``--json`` its files and totals (:class:`ragline.cli.views.IngestReport`)."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ragline import errors
from ragline.cli.context import fail
from ragline.cli.output import print_json
from ragline.cli.views import IngestedFile, IngestError, IngestReport
from ragline.domain.document_metadata import MAX_SIDECAR_BYTES, is_sidecar, sidecar_of
from ragline.domain.models import TenantScope
from ragline.services.ingest_batch import BatchOutcome
from ragline.services.namespaces import new_namespace
from ragline.wiring import Container


def _files(paths: list[Path]) -> list[tuple[Path, str]]:
    """Every file under the given paths, with the name it gets as a document (relative to its root);
    metadata sidecars (``<file>.metadata.json``) are not documents: they travel with their file."""
    out: list[tuple[Path, str]] = []
    for root in paths:
        if root.is_dir():
            out += [
                (p, p.relative_to(root).as_posix())
                for p in sorted(root.rglob("*"))
                if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts)
            ]
        elif root.is_file():
            out.append((root, root.name))
        else:
            raise errors.InvalidRequest(f"no such file or folder: {root}", path=str(root))
    return [(p, name) for p, name in out if not is_sidecar(p.name)]


def _sidecar(path: Path) -> bytes | None:
    """The file's metadata sidecar, read up to one byte past its limit (the parse refuses more)."""
    sidecar = path.with_name(sidecar_of(path.name))
    if not sidecar.is_file():
        return None
    with sidecar.open("rb") as f:
        return f.read(MAX_SIDECAR_BYTES + 1)


def run_ingest(
    c: Container, tenant: str, namespace: str, paths: list[Path], *, create: bool, as_json: bool = False
) -> int:
    """0 when every file is indexed or unchanged, 1 when one failed; the summary table, or with
    ``as_json`` the :class:`IngestReport`, on stdout (the progress on stderr). An error before any file
    ends the command (exit 2)."""
    try:
        files = _files(paths)
        scope = TenantScope(tenant_id=tenant, namespace_id=namespace)
        try:
            c.registry.get_namespace(tenant, namespace)
        except errors.NamespaceNotFound:
            if not create:
                raise errors.NamespaceNotFound(
                    f"namespace {namespace!r} does not exist (create it with `ragline namespaces create"
                    f" {namespace}` or pass --create)",
                    namespace=namespace,
                ) from None
            c.registry.create_namespace(new_namespace(tenant, namespace))
    except (errors.RaglineError, ValueError) as exc:
        err = (
            exc if isinstance(exc, errors.RaglineError) else errors.InvalidRequest(str(exc).splitlines()[-1])
        )
        raise fail(err) from exc
    batch = c.ingest.batch()  # the files are published together, not one refresh per file
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
    ) as progress:
        task = progress.add_task("ingesting", total=len(files))
        for path, name in files:
            progress.update(task, description=f"ingesting {name[:40]}")
            batch.ingest(
                name, scope, filename=name, data=path.read_bytes(), source=str(path), sidecar=_sidecar(path)
            )
            progress.advance(task)
        progress.update(task, description="publishing")
        outcomes = batch.finish()
    report = IngestReport.of(tenant, namespace, [_file(outcome) for outcome in outcomes])
    if as_json:
        print_json(report)
    else:
        _print_table(report)
    return 1 if report.totals.failed else 0


def _file(outcome: BatchOutcome) -> IngestedFile:
    if outcome.error is None:
        r = outcome.results[0]
        return IngestedFile(
            file=outcome.key,
            status="unchanged" if r.skipped else "indexed",
            document_id=r.document_id,
            chunks=r.chunks,
            pages=r.pages,
            content_hash=r.content_hash,
            notes=list(r.notes),
        )
    if isinstance(outcome.error, errors.RaglineError):
        err = IngestError(code=outcome.error.code, message=outcome.error.message)
        return IngestedFile(file=outcome.key, status="failed", error=err)
    raise outcome.error  # not a Ragline error: a bug, shown whole as before


def _print_table(report: IngestReport) -> None:
    table = Table(title=f"ingest → {report.tenant}/{report.namespace}")
    for col in ("file", "status", "chunks", "pages", "detail"):
        table.add_column(col)
    for f in report.files:
        if f.error is None:
            status, detail = f"[green]{f.status}[/green]", escape(f.document_id or "")
            if f.notes:  # read, but not cleanly: said beside the file, not above the table
                detail += "".join(f"\n[yellow]{escape(note)}[/yellow]" for note in f.notes)
            table.add_row(escape(f.file), status, str(f.chunks), str(f.pages), detail)
        else:
            table.add_row(escape(f.file), f"[red]{f.error.code}[/red]", "0", "-", escape(f.error.message))
    Console().print(table)
