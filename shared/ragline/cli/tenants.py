"""``ragline tenants``: the operator onboards a customer (a tenant), suspends, reactivates or deletes
it, sets its limits (:mod:`ragline.cli.limits`) and its identity provider (:mod:`ragline.cli.identity`).
``--json`` prints the tenant (:class:`ragline.cli.views.TenantView`) or what its deletion removed
(:class:`ragline.cli.views.TenantDeleted`)."""

from __future__ import annotations

from typing import Annotated

import typer

from ragline.cli.context import build_container, fail, refuse
from ragline.cli.identity import identity_app
from ragline.cli.limits import Burst, MaxRuns, Rps, limits_of, print_tenant, tenants_limits
from ragline.cli.options import Home, Json

tenants_app = typer.Typer(no_args_is_help=True, help="Manage tenants.")
# First, so ``ragline tenants --help`` lists the commands in the order it always has.
tenants_app.add_typer(identity_app, name="identity-provider")
tenants_app.command("limits")(tenants_limits)


@tenants_app.command("create")
def tenants_create(
    tenant_id: str,
    name: str = "",
    quota: Annotated[int | None, typer.Option(help="Runs per month (default: unlimited).")] = None,
    rps: Rps = None,
    burst: Burst = None,
    max_runs: MaxRuns = None,
    home: Home = None,
    as_json: Json = False,
) -> None:
    """Create a tenant (the first step of onboarding a customer)."""
    from ragline.errors import RaglineError

    try:
        limits = limits_of(rps, burst, max_runs)
        tenant = build_container(home).tenancy.create_tenant(tenant_id, name, quota, limits)
    except RaglineError as exc:
        raise fail(exc) from exc
    if as_json:
        print_tenant(tenant)
    else:
        typer.echo(f"created tenant {tenant_id}")


@tenants_app.command("status")
def tenants_status(
    tenant_id: str,
    status: Annotated[str, typer.Argument(help="active, suspended or deleted (deleted is final).")],
    home: Home = None,
    as_json: Json = False,
) -> None:
    """Suspend, reactivate or delete a tenant: only an active tenant's keys authenticate."""
    from ragline.errors import RaglineError

    if status not in ("active", "suspended", "deleted"):
        raise refuse("status is one of: active, suspended, deleted")
    if status == "deleted":
        tenants_delete(tenant_id, home=home, as_json=as_json)
        return
    try:
        tenant = build_container(home).tenancy.set_status(tenant_id, status)  # type: ignore[arg-type]
    except RaglineError as exc:
        raise fail(exc) from exc
    if as_json:
        print_tenant(tenant)
    else:
        typer.echo(f"tenant {tenant_id} is {status}")


@tenants_app.command("delete")
def tenants_delete(tenant_id: str, home: Home = None, as_json: Json = False) -> None:
    """Delete a tenant and everything it stored: objects (every version), chunks, document records,
    namespaces, keys and recorded run results. Final; run it again to finish an interrupted one."""
    from ragline.cli.output import print_json
    from ragline.cli.views import TenantDeleted
    from ragline.errors import RaglineError

    try:
        purge = build_container(home).tenant_deletion.delete(tenant_id)
    except RaglineError as exc:
        raise fail(exc) from exc
    if as_json:
        print_json(TenantDeleted.of(purge))
        return
    typer.echo(
        f"tenant {tenant_id} is deleted: {purge.objects} objects, {purge.chunks} chunks, "
        f"{purge.documents} document records and {purge.usage_details} usage details removed"
    )
