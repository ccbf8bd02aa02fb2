"""``ragline webhooks``: the operator subscribes, lists and removes a tenant's webhooks (the same
service and checks as ``/v1/webhooks``), printing the route's JSON body (``--json`` is accepted, and
makes a failure the API's error body too); events of a local run are delivered from its outbox."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ragline.cli.context import build_container, fail, invalid
from ragline.cli.options import HomeOption, Json, TenantOption

webhooks_app = typer.Typer(no_args_is_help=True, help="A tenant's webhooks (document and usage events).")


def _run(home: Path | None, tenant: str, call: Any) -> None:
    from ragline.cli.output import print_json
    from ragline.errors import RaglineError
    from ragline.services.authentication import Principal

    try:
        result = call(build_container(home).webhooks, Principal.operator(tenant))
    except RaglineError as exc:
        raise fail(exc) from exc
    print_json(result)


@webhooks_app.command("add")
def webhooks_add(
    url: Annotated[str, typer.Argument(help="https:// URL that receives the signed POSTs.")],
    tenant: TenantOption,
    events: Annotated[str, typer.Option("--events", help="Comma-separated event types (default: all).")] = "",
    home: HomeOption = None,
    as_json: Json = False,
) -> None:
    """Subscribe ``url``; the signing secret is printed once."""
    from ragline.domain.webhook_api import NewWebhook

    types = [t.strip() for t in events.split(",") if t.strip()]
    try:
        body = NewWebhook.model_validate({"url": url, "eventTypes": types})
    except ValueError as exc:
        raise fail(invalid(str(exc))) from exc
    _run(home, tenant, lambda service, operator: service.create(operator, body))


@webhooks_app.command("list")
def webhooks_list(tenant: TenantOption, home: HomeOption = None, as_json: Json = False) -> None:
    """The tenant's webhooks (never their secrets)."""
    _run(home, tenant, lambda service, operator: service.list(operator))


@webhooks_app.command("remove")
def webhooks_remove(
    webhook_id: str, tenant: TenantOption, home: HomeOption = None, as_json: Json = False
) -> None:
    """Delete a webhook: nothing more is sent to it."""
    _run(home, tenant, lambda service, operator: service.delete(operator, webhook_id))
