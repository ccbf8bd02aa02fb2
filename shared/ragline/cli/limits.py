"""``ragline tenants limits`` and the limit options of ``tenants create`` and ``keys create``: the
operator sets a tenant's request rate and concurrent runs (fair sharing), or a key's own; and
``--json``'s tenant (:class:`ragline.cli.views.TenantView`), which ``tenants`` commands print too."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from ragline.cli.context import build_container, fail, refuse
from ragline.cli.options import HomeOption, Json
from ragline.domain.limits import MAX_BURST, MAX_RPS, MAX_RUNS, MIN_RPS

if TYPE_CHECKING:
    from ragline.domain.limits import Limits
    from ragline.domain.tenancy import Tenant

Rps = Annotated[
    float | None,
    typer.Option("--rps", help="Requests a second (default: the deployment's).", min=MIN_RPS, max=MAX_RPS),
]
Burst = Annotated[
    int | None,
    typer.Option(
        "--burst",
        help="Requests at once after a quiet spell (default: 2 × rps).",
        min=1,
        max=MAX_BURST,
    ),
]
MaxRuns = Annotated[
    int | None,
    typer.Option(
        "--max-runs",
        help="Chat, search and hosting-search runs in flight at once.",
        min=1,
        max=MAX_RUNS,
    ),
]


def limits_of(rps: float | None, burst: int | None, max_runs: int | None) -> Limits | None:
    """The options as limits (None: none given)."""
    from ragline.domain.limits import Limits

    if rps is None and burst is None and max_runs is None:
        return None
    return Limits(requests_per_second=rps, burst=burst, max_concurrent_runs=max_runs)


def describe(limits: Limits) -> str:
    shown = limits.model_dump(exclude_none=True)
    return ", ".join(f"{k}={v}" for k, v in shown.items()) or "the deployment's defaults"


def print_tenant(tenant: Tenant) -> None:
    """The tenant as ``--json`` prints it."""
    from ragline.cli.output import print_json
    from ragline.cli.views import TenantView

    print_json(TenantView.of(tenant))


def tenants_limits(
    tenant_id: str,
    rps: Rps = None,
    burst: Burst = None,
    max_runs: MaxRuns = None,
    reset: Annotated[
        bool, typer.Option("--reset", help="Back to the deployment's defaults (every limit).")
    ] = False,
    home: HomeOption = None,
    as_json: Json = False,
) -> None:
    """Set a tenant's limits (the options not given: the deployment's defaults), or with no option
    show them; every process applies a change within 30 s. A refused request is a 429 with
    Retry-After."""
    from ragline.domain.limits import Limits
    from ragline.errors import RaglineError

    given = limits_of(rps, burst, max_runs)
    if reset and given is not None:
        raise refuse("--reset takes no limit option", "--reset")
    try:
        container = build_container(home)
        if given is None and not reset:  # nothing to set: show, never clear by omission
            tenant = container.registry.get_tenant(tenant_id)
        else:
            tenant = container.tenancy.set_limits(tenant_id, given or Limits())
    except RaglineError as exc:
        raise fail(exc) from exc
    if as_json:
        print_tenant(tenant)
    else:
        typer.echo(f"tenant {tenant_id} limits: {describe(tenant.limits)}")
