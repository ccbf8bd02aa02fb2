"""The options several ``ragline`` commands share, declared once so they read (and ``--help`` says)
the same everywhere, and the parsing of ``--filter``'s JSON."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ragline.cli.context import invalid, use_json

Home = Annotated[
    Path | None, typer.Option("--home", help="State folder (default ./.ragline or RAGLINE_HOME).")
]
Tenant = Annotated[str, typer.Option("--tenant", help="Tenant id for local use.")]
Namespace = Annotated[str, typer.Option("--namespace", "-n", help="Namespace id.")]
Mode = Annotated[str, typer.Option("--mode", "-m", help="semantic | keyword | hybrid")]
FilterOption = Annotated[
    str | None,
    typer.Option(
        "--filter", help='A metadata filter as JSON, e.g. \'{"equals": {"key": "year", "value": 2024}}\'.'
    ),
]

Json = Annotated[
    bool,
    typer.Option(
        "--json",
        help="Print the result as JSON on stdout, the API's own body (errors too: its error body).",
        callback=use_json,
        is_eager=True,
    ),
]
"""Every command that prints a result takes it. Processed before the other options, so the command's
failures print JSON too (:func:`ragline.cli.context.fail`)."""

# The administration commands' spelling: the tenant is required, the state folder's help is short.
TenantOption = Annotated[str, typer.Option("--tenant", help="Tenant id.")]
HomeOption = Annotated[Path | None, typer.Option("--home", help="State folder.")]


def json_filter(text: str | None) -> object:
    """``--filter``'s JSON (None: no filter); text that is not JSON is an invalid request."""
    import json

    if text is None:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise invalid(f"--filter is not JSON: {exc.msg}") from exc
