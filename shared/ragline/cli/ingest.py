"""``ragline ingest``: files and folders → one namespace, with a progress bar and a summary table."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ragline import errors
from ragline.domain.models import TenantScope
from ragline.services.namespaces import new_namespace
from ragline.wiring import Container


def _files(paths: list[Path]) -> list[tuple[Path, str]]:
    """Every file under the given paths, with the name it gets as a document (relative to its root)."""
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
    return out


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
    failed = 0
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
            try:
                r = c.ingest.ingest(scope, filename=name, data=path.read_bytes(), source=str(path))
                status = "unchanged" if r.skipped else "indexed"
                table.add_row(
                    escape(name),
                    f"[green]{status}[/green]",
                    str(r.chunks),
                    str(r.pages),
                    escape(r.document_id),
                )
            except errors.RaglineError as exc:
                failed += 1
                table.add_row(escape(name), f"[red]{exc.code}[/red]", "0", "-", escape(exc.message))
            progress.advance(task)
    Console().print(table)
    return 1 if failed else 0
