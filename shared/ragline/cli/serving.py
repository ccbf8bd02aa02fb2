"""``ragline serve``, ``mcp`` and ``openapi``: the API on this machine, over HTTP (the ASGI app
:mod:`ragline.cli.serve` builds) or as MCP over stdio (:mod:`ragline.cli.mcp`), and its OpenAPI
document (:mod:`ragline.cli.openapi`). Those modules are heavy; they are imported when a command runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ragline.cli.context import build_container, fail
from ragline.cli.options import Home, Tenant

Functions = Annotated[Path, typer.Option(help="The repository's functions/ folder.")]


def serve(
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1.")] = 8000,
    tenant: Tenant = "local",
    functions: Functions = Path("functions"),
    api_keys: Annotated[
        bool, typer.Option("--api-keys", help="Require an API key per request (else: --tenant's operator).")
    ] = False,
    home: Home = None,
) -> None:
    """Serve the real handlers locally: chat (SSE), search, documents, namespaces, keys and usage; MCP at
    /mcp (always with an API key)."""
    import uvicorn

    from ragline.cli.serve import build_app, operator_tenant

    container = build_container(home)
    if not api_keys:
        operator_tenant(container, tenant)
    app_ = build_app(functions.resolve(), tenant, container, api_keys=api_keys)
    uvicorn.run(app_, host="127.0.0.1", port=port, log_level="info")


def mcp_stdio(home: Home = None) -> None:
    """Serve MCP over stdio (tools search, hosting_search and ask; the key's namespaces as resources),
    acting as the API key in RAGLINE_API_KEY. ``ragline serve`` also serves it at /mcp."""
    import os

    from ragline.cli.mcp import serve_stdio
    from ragline.errors import RaglineError

    try:
        serve_stdio(build_container(home), os.environ.get("RAGLINE_API_KEY", ""))
    except RaglineError as exc:
        raise fail(exc) from exc


def openapi(
    out: Annotated[Path | None, typer.Option(help="Write here instead of stdout.")] = None,
    functions: Functions = Path("functions"),
) -> None:
    """The API's OpenAPI 3.1 document, generated from the handlers (``make openapi`` writes docs/)."""
    from ragline.cli.openapi import render

    document = render(functions.resolve())
    if out is None:
        typer.echo(document, nl=False)
    else:
        out.write_text(document, encoding="utf-8")
