"""``ragline namespaces``: create and list a tenant's namespaces (collections), and rebuild one with
another embedding model or chunking while it keeps serving (:mod:`ragline.cli.reindex` runs it).
``--json`` prints the API's bodies: ``NamespaceView``, ``NamespaceList``, and the reindexed namespace's
``NamespaceView`` once its rebuild ended (the progress on stderr)."""

from __future__ import annotations

from typing import Annotated

import typer

from ragline.cli.context import as_ragline, build_container, fail, load_settings
from ragline.cli.options import Home, Json, Tenant

namespaces_app = typer.Typer(no_args_is_help=True, help="Manage namespaces (collections).")


@namespaces_app.command("create")
def namespaces_create(
    namespace_id: str,
    home: Home = None,
    tenant: Tenant = "local",
    description: str = "",
    default: bool = False,
    as_json: Json = False,
) -> None:
    """Create a namespace."""
    from ragline.cli.output import print_json
    from ragline.domain.api import NamespaceView
    from ragline.errors import RaglineError
    from ragline.services.namespaces import new_namespace, save_new_namespace

    c = build_container(home)
    try:
        saved = save_new_namespace(c.registry, new_namespace(tenant, namespace_id, description, default))
    except RaglineError as exc:
        raise fail(exc) from exc
    if as_json:  # POST /v1/namespaces's body
        print_json(NamespaceView.of(saved))
    else:
        typer.echo(f"created namespace {namespace_id}")


@namespaces_app.command("list")
def namespaces_list(home: Home = None, tenant: Tenant = "local", as_json: Json = False) -> None:
    """List namespaces."""
    from ragline.cli.output import print_json
    from ragline.services.authentication import Principal

    c = build_container(home)
    if as_json:  # GET /v1/namespaces's body
        print_json(c.namespaces.list(Principal.operator(tenant)))
        return
    for ns in c.registry.list_namespaces(tenant):
        typer.echo(f"{ns.namespace_id}\t{ns.settings.embedding_model or '-'}\t{ns.description}")


@namespaces_app.command("reindex")
def namespaces_reindex(
    namespace_id: str,
    home: Home = None,
    tenant: Tenant = "local",
    model: Annotated[str | None, typer.Option(help="Embedding model id (default: the current one).")] = None,
    chunk_tokens: Annotated[
        int | None, typer.Option(help="Chunk size in tokens (0: the deployment's).")
    ] = None,
    overlap_tokens: Annotated[int | None, typer.Option(help="Chunk overlap in tokens.")] = None,
    chunking: Annotated[
        str | None,
        typer.Option(
            help="Chunking strategy: fixed, hierarchical or semantic (README, 'Chunking strategies')."
        ),
    ] = None,
    parent_tokens: Annotated[
        int | None, typer.Option(help="A hierarchical parent's size in tokens (0: four chunks').")
    ] = None,
    keep_old_for: Annotated[
        float, typer.Option(help="Seconds the old generation is kept after the switch.")
    ] = 30.0,
    as_json: Json = False,
) -> None:
    """Rebuild a namespace with another embedding model or chunking; it serves as it is meanwhile."""
    from pydantic import ValidationError

    from ragline.cli.output import print_json
    from ragline.cli.reindex import run_reindex
    from ragline.errors import RaglineError

    settings = load_settings(home)
    try:
        code = run_reindex(
            settings, tenant, namespace_id, model=model, chunk_tokens=chunk_tokens,
            overlap_tokens=overlap_tokens, keep_old_for=keep_old_for, chunking=chunking,
            parent_tokens=parent_tokens, echo=lambda line: typer.echo(line, err=as_json),
            done=print_json if as_json else None,
        )  # fmt: skip
    except (RaglineError, ValidationError) as exc:
        raise fail(as_ragline(exc)) from exc
    raise typer.Exit(code)
