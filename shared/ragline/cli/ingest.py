"""``ragline ingest``: files and folders → one namespace, with a progress bar and a summary table."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ragline import errors
from ragline.domain.document_metadata import MAX_SIDECAR_BYTES, is_sidecar, sidecar_of
from ragline.domain.models import TenantScope
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


def run_ingest(c: Container, tenant: str, namespace: str, paths: list[Path], *, create: bool) -> int:
    console = Console(stderr=True)
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
        console.print(f"[red]{escape(f'error [{err.code}]: {err.message}')}[/red]")
        return 2
    table = Table(title=f"ingest → {tenant}/{namespace}")
    for col in ("file", "status", "chunks", "pages", "detail"):
        table.add_column(col)
    batch = c.ingest.batch()  # the files are published together, not one refresh per file
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
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
    failed = 0
    for outcome in outcomes:
        name = outcome.key
        if outcome.error is None:
            r = outcome.results[0]
            status = "unchanged" if r.skipped else "indexed"
            table.add_row(
                escape(name), f"[green]{status}[/green]", str(r.chunks), str(r.pages), escape(r.document_id)
            )
        elif isinstance(outcome.error, errors.RaglineError):
            failed += 1
            err = outcome.error
            table.add_row(escape(name), f"[red]{err.code}[/red]", "0", "-", escape(err.message))
        else:
            raise outcome.error  # not a Ragline error: a bug, shown whole as before
    Console().print(table)
    return 1 if failed else 0
