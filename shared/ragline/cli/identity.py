"""``ragline tenants identity-provider``: the operator sets, shows or removes a tenant's identity
provider (the same service and checks as ``PUT/GET/DELETE /v1/tenant/identity-provider``), printing the
route's JSON body (``--json`` is accepted, and makes a failure the API's error body too)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ragline.cli.context import build_container, fail, invalid
from ragline.cli.options import HomeOption, Json, TenantOption

identity_app = typer.Typer(
    no_args_is_help=True, help="A tenant's identity provider: whose tokens act as its end users."
)


def _run(home: Path | None, tenant: str, action: str, body: str = "") -> None:
    from ragline.cli.output import print_json
    from ragline.domain.api import IdentityProviderBody
    from ragline.errors import RaglineError
    from ragline.services.authentication import Principal

    try:
        service = build_container(home).identity_providers
        operator = Principal.operator(tenant)
        if action == "set":
            result = service.put(operator, IdentityProviderBody.model_validate_json(body))
        elif action == "show":
            result = service.show(operator)
        else:
            result = service.delete(operator)  # type: ignore[assignment]
    except RaglineError as exc:
        raise fail(exc) from exc
    except ValueError as exc:  # the body's validation
        raise fail(invalid(str(exc))) from exc
    print_json(result)


@identity_app.command("set")
def identity_set(
    config: Annotated[Path, typer.Argument(help="JSON body of PUT /v1/tenant/identity-provider.")],
    tenant: TenantOption,
    home: HomeOption = None,
    as_json: Json = False,
) -> None:
    """Set (or replace) the tenant's identity provider from a JSON file."""
    _run(home, tenant, "set", config.read_text(encoding="utf-8"))


@identity_app.command("show")
def identity_show(tenant: TenantOption, home: HomeOption = None, as_json: Json = False) -> None:
    """Show the tenant's identity provider."""
    _run(home, tenant, "show")


@identity_app.command("delete")
def identity_delete(tenant: TenantOption, home: HomeOption = None, as_json: Json = False) -> None:
    """Remove it: its tokens stop authenticating at once (cached answers within 5 minutes)."""
    _run(home, tenant, "delete")
