"""``ragline keys``: the operator creates, lists and revokes a tenant's API keys (the same service and
checks as ``/v1/keys``); a key is shown once and stored only as a hash. ``--json`` prints the route's
body: ``NewKeyView`` (the key in ``apiKey``), ``KeyList``, ``KeyView``."""

from __future__ import annotations

from typing import Annotated

import typer

from ragline.cli.context import build_container, fail
from ragline.cli.limits import Burst, MaxRuns, Rps, describe, limits_of
from ragline.cli.options import Home, Json

keys_app = typer.Typer(no_args_is_help=True, help="Manage API keys.")


@keys_app.command("create")
def keys_create(
    tenant: Annotated[str, typer.Option("--tenant", help="Tenant id.")],
    scopes: Annotated[str, typer.Option(help="Comma-separated: chat,search,ingest,admin.")] = "chat,search",
    namespaces: Annotated[str, typer.Option(help="Comma-separated allow-list (default: all).")] = "",
    name: str = "",
    assert_user: Annotated[
        bool, typer.Option("--assert-user", help="Requests may name their end user (Ragline-User-Id).")
    ] = False,
    require_user: Annotated[
        bool, typer.Option("--require-user", help="Requests must name their end user (implies the above).")
    ] = False,
    rps: Rps = None,
    burst: Burst = None,
    max_runs: MaxRuns = None,
    home: Home = None,
    as_json: Json = False,
) -> None:
    """Create an API key; it is printed once and stored only as a hash."""
    from ragline.cli.output import print_json
    from ragline.domain.api import KeyView, NewKeyView
    from ragline.errors import RaglineError

    try:
        plaintext, record = build_container(home).tenancy.create_key(
            tenant,
            name=name,
            scopes=[s.strip() for s in scopes.split(",") if s.strip()],
            namespaces=[n.strip() for n in namespaces.split(",") if n.strip()],
            assert_user=assert_user,
            require_user=require_user,
            limits=limits_of(rps, burst, max_runs),
        )
    except RaglineError as exc:
        raise fail(exc) from exc
    if as_json:  # POST /v1/keys's body
        print_json(NewKeyView(**KeyView.of(record).model_dump(by_alias=False), api_key=plaintext))
        return
    typer.echo(f"key id: {record.key_id}\nscopes: {','.join(record.scopes)}")
    if record.limits:
        typer.echo(f"limits: {describe(record.limits)}")
    if record.may_assert_user:
        typer.echo(f"user context: {'required' if record.requires_user else 'may be asserted'}")
    typer.echo(f"API key (shown once, store it now): {plaintext}")


@keys_app.command("list")
def keys_list(
    tenant: Annotated[str, typer.Option("--tenant")], home: Home = None, as_json: Json = False
) -> None:
    """List a tenant's keys (never the keys themselves)."""
    from ragline.cli.output import print_json
    from ragline.services.authentication import Principal

    container = build_container(home)
    if as_json:  # GET /v1/keys's body
        print_json(container.tenancy.keys(Principal.operator(tenant)))
        return
    for k in container.tenancy.list_keys(tenant):
        state = "revoked" if not k.active else "active"
        typer.echo(f"{k.key_id}\t{state}\t{','.join(k.scopes)}\t{','.join(k.namespaces) or '*'}\t{k.name}")


@keys_app.command("revoke")
def keys_revoke(
    key_id: str, tenant: Annotated[str, typer.Option("--tenant")], home: Home = None, as_json: Json = False
) -> None:
    """Revoke a key."""
    from ragline.cli.output import print_json
    from ragline.errors import RaglineError
    from ragline.services.authentication import Principal

    try:
        view = build_container(home).tenancy.revoke(Principal.operator(tenant), key_id)
    except RaglineError as exc:
        raise fail(exc) from exc
    if as_json:  # DELETE /v1/keys/{keyId}'s body
        print_json(view)
    else:
        typer.echo(f"revoked {key_id}")
