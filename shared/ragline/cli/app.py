"""``ragline``: the command line over the same services the Lambda handlers use.

This module only assembles: the root command, and each command or group registered onto it from the
module that holds it. What the commands share (settings, containers, failures, options) is in
:mod:`ragline.cli.context` and :mod:`ragline.cli.options`; their printing in :mod:`ragline.cli.output`.
Heavy modules (models, SDKs, the services) are imported inside the commands so ``--help`` is instant.
"""

from __future__ import annotations

import typer

from ragline.cli.chat import chat
from ragline.cli.context import deliver_when_done, use_json
from ragline.cli.evaluation import evaluate
from ragline.cli.keys import keys_app
from ragline.cli.namespaces import namespaces_app
from ragline.cli.retrieval import hosting_search, ingest, search
from ragline.cli.serving import mcp_stdio, openapi, serve
from ragline.cli.sources import sources_app
from ragline.cli.tenants import tenants_app
from ragline.cli.webhooks import webhooks_app

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    help="Ragline: multi-tenant agentic retrieval.",
)


@app.callback()
def _root(ctx: typer.Context) -> None:
    """Runs before every command: its webhook events go out when it ends (see deliver_when_done); it
    prints text unless its own ``--json`` says otherwise (parsed after this)."""
    deliver_when_done(ctx)
    use_json(False)


# In the order ``ragline --help`` lists them.
app.command("ingest")(ingest)
app.command("search")(search)
app.command("hosting-search")(hosting_search)
app.command("chat")(chat)
app.command("serve")(serve)
app.command("mcp")(mcp_stdio)
app.command("openapi")(openapi)
app.command("eval")(evaluate)
app.add_typer(namespaces_app, name="namespaces")
app.add_typer(tenants_app, name="tenants")
app.add_typer(keys_app, name="keys")
app.add_typer(webhooks_app, name="webhooks")
app.add_typer(sources_app, name="sources")


def main() -> None:
    """The ``ragline`` command (``serve`` included): one BLAS thread before numpy is first imported."""
    from ragline.environment import one_blas_thread

    one_blas_thread()
    app(prog_name="ragline")


if __name__ == "__main__":
    main()
