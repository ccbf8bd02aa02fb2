"""``ragline sources``: a namespace's data sources, with the same service and checks as
``/v1/namespaces/{ns}/sources``. A sync runs here, in this process, step by step (the steps the
ingestion queue runs on AWS), and prints the source's status as JSON when it ends. Every command prints
the route's JSON body (``--json`` is accepted, and makes a failure the API's error body too).

Credentials are read from a JSON file (``--credentials``), never from the command line (a shell's
history and the process list would keep them); they are stored in the deployment's secret store.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from ragline.cli.context import fail, invalid, load_settings, made
from ragline.cli.options import HomeOption, Json, TenantOption

sources_app = typer.Typer(no_args_is_help=True, help="A namespace's data sources (websites, wikis, drives).")
Namespace = Annotated[str, typer.Argument(help="Namespace id.")]
SourceId = Annotated[str, typer.Argument(help="Source id (src_…).")]
Credentials = Annotated[
    Path | None, typer.Option("--credentials", help="A JSON file of the source's credentials.", exists=True)
]
Every = Annotated[int | None, typer.Option("--every", help="Sync every N minutes (at least 15; 0: never).")]
RETRY_SECONDS = 5.0
"""How long a step that must wait (the source asked to slow down, a write in flight) waits here."""


def _run(home: Path | None, call: Any) -> Any:
    """``call(container)`` with the steps it queues run here, in order; errors end the command (2)."""
    from ragline.adapters.embedded.step_queue import InlineStepQueue
    from ragline.errors import RaglineError
    from ragline.wiring import Container

    queue = InlineStepQueue()
    container = Container(load_settings(home), step_queue=queue)
    made.append(container)  # its webhook events go out when the command ends
    try:
        result = call(container)
        _drain(container, queue)
    except RaglineError as exc:
        raise fail(exc) from exc
    return result


def _drain(container: Any, queue: Any) -> None:
    from ragline.domain.sources import SyncStep
    from ragline.services.source_sync import TRANSIENT

    while (item := queue.take()) is not None:
        step, delay = item
        assert isinstance(step, SyncStep)  # only syncs queue steps here
        if delay:
            time.sleep(min(delay, 60.0))
        try:
            container.source_sync.run(step)
        except TRANSIENT as exc:
            typer.secho(f"waiting: {exc.message}", err=True)
            time.sleep(RETRY_SECONDS)
            queue.submit(step)


def _echo(view: Any) -> None:
    from ragline.cli.output import print_json

    print_json(view)


def _body(model: Any, value: dict[str, Any]) -> Any:
    from pydantic import ValidationError

    try:
        return model.model_validate(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise fail(invalid(f"{where}: {first['msg']}")) from exc


def _settings(text: str) -> Any:
    """``--settings``'s JSON; text that is not JSON is an invalid request, not a traceback."""
    try:
        return json.loads(text)
    except ValueError as exc:
        raise fail(invalid(f"--settings is not JSON: {exc}")) from exc


def _credentials(path: Path | None) -> dict[str, Any]:
    if path is None:
        return {}
    try:
        value = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise fail(invalid(f"{path} is not a JSON file: {exc}")) from exc
    return {"credentials": value}


@sources_app.command("add")
def sources_add(
    namespace: Namespace,
    tenant: TenantOption,
    kind: Annotated[str, typer.Option("--kind", help="web, confluence or graph.")] = "web",
    seed: Annotated[
        list[str] | None, typer.Option("--seed", help="web: a URL to start from (repeat).")
    ] = None,
    sitemap: Annotated[
        list[str] | None, typer.Option("--sitemap", help="web: a sitemap URL (repeat).")
    ] = None,
    include: Annotated[
        list[str] | None, typer.Option("--include", help="web: a path pattern (repeat).")
    ] = None,
    exclude: Annotated[
        list[str] | None, typer.Option("--exclude", help="web: a path pattern (repeat).")
    ] = None,
    max_depth: Annotated[int | None, typer.Option("--max-depth", help="web: links followed.")] = None,
    max_pages: Annotated[int | None, typer.Option("--max-pages", help="web: pages at most.")] = None,
    settings: Annotated[
        str | None, typer.Option("--settings", help="confluence/graph: the settings as JSON (camelCase).")
    ] = None,
    credentials: Credentials = None,
    name: Annotated[str, typer.Option("--name", help="A name to show.")] = "",
    every: Every = None,
    sync: Annotated[bool, typer.Option("--sync/--no-sync", help="Run the first sync now.")] = True,
    home: HomeOption = None,
    as_json: Json = False,
) -> None:
    """Add a data source to NAMESPACE (and run its first sync here, unless --no-sync)."""
    from ragline.domain.source_api import NewSource
    from ragline.services.authentication import Principal

    if kind == "web":
        given: dict[str, Any] = {"seeds": seed or [], "sitemaps": sitemap or [], "include": include or []}
        given |= {"exclude": exclude or []}
        given |= {k: v for k, v in (("maxDepth", max_depth), ("maxPages", max_pages)) if v is not None}
        kind_settings = _settings(settings) if settings else given
    else:
        kind_settings = _settings(settings or "{}")
    value = {"kind": kind, "name": name, kind: kind_settings, "everyMinutes": every or 0}
    body = _body(NewSource, value | _credentials(credentials))

    def add(c: Any) -> Any:
        view = c.source_service.create(Principal.operator(tenant), namespace, body)
        if not sync:
            c.step_queue.steps.clear()  # its first sync waits for `ragline sources sync`
        return view

    view = _run(home, add)
    _echo(_run(home, lambda c: c.source_service.get(Principal.operator(tenant), namespace, view.source_id)))


@sources_app.command("list")
def sources_list(
    namespace: Namespace, tenant: TenantOption, home: HomeOption = None, as_json: Json = False
) -> None:
    """The namespace's sources and where each one's sync stands."""
    from ragline.services.authentication import Principal

    _echo(_run(home, lambda c: c.source_service.list(Principal.operator(tenant), namespace)))


@sources_app.command("show")
def sources_show(
    namespace: Namespace,
    source_id: SourceId,
    tenant: TenantOption,
    home: HomeOption = None,
    as_json: Json = False,
) -> None:
    """One source's settings and status (never its credentials)."""
    from ragline.services.authentication import Principal

    _echo(_run(home, lambda c: c.source_service.get(Principal.operator(tenant), namespace, source_id)))


@sources_app.command("update")
def sources_update(
    namespace: Namespace,
    source_id: SourceId,
    tenant: TenantOption,
    settings: Annotated[str | None, typer.Option("--settings", help="The kind's settings as JSON.")] = None,
    credentials: Credentials = None,
    name: Annotated[str | None, typer.Option("--name")] = None,
    every: Every = None,
    home: HomeOption = None,
    as_json: Json = False,
) -> None:
    """Change a source's name, settings, credentials or schedule."""
    from ragline.domain.source_api import SourcePatch
    from ragline.services.authentication import Principal

    def patch(c: Any) -> Any:
        record = c.sources.get(tenant, namespace, source_id)
        value: dict[str, Any] = {k: v for k, v in (("name", name), ("everyMinutes", every)) if v is not None}
        if settings is not None:
            value[record.kind] = _settings(settings)
        body = _body(SourcePatch, value | _credentials(credentials))
        return c.source_service.update(Principal.operator(tenant), namespace, source_id, body)

    _echo(_run(home, patch))


@sources_app.command("sync")
def sources_sync(
    namespace: Namespace,
    source_id: SourceId,
    tenant: TenantOption,
    full: Annotated[bool, typer.Option("--full", help="Start over with a full listing.")] = False,
    home: HomeOption = None,
    as_json: Json = False,
) -> None:
    """Sync a source now, here, and print its status when the sync ends."""
    from ragline.domain.source_api import SyncRequest
    from ragline.services.authentication import Principal

    operator = Principal.operator(tenant)
    _run(home, lambda c: c.source_service.sync(operator, namespace, source_id, SyncRequest(full=full)))
    view = _run(home, lambda c: c.source_service.get(operator, namespace, source_id))
    _echo(view)
    if view.last_error:
        raise typer.Exit(1)


@sources_app.command("remove")
def sources_remove(
    namespace: Namespace,
    source_id: SourceId,
    tenant: TenantOption,
    home: HomeOption = None,
    as_json: Json = False,
) -> None:
    """Remove a source: its credentials and schedule, then its documents, then it."""
    from ragline.services.authentication import Principal

    _echo(_run(home, lambda c: c.source_service.delete(Principal.operator(tenant), namespace, source_id)))
