"""``ragline``: the command line over the same services the Lambda handlers use.

Heavy modules (models, SDKs, the services) are imported inside the commands so ``--help`` is instant.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ragline.cli.limits import Burst, MaxRuns, Rps, describe, limits_of

if TYPE_CHECKING:
    from ragline.config import Settings
    from ragline.wiring import Container

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    help="Ragline: multi-tenant agentic retrieval.",
)
namespaces_app = typer.Typer(no_args_is_help=True, help="Manage namespaces (collections).")
app.add_typer(namespaces_app, name="namespaces")
tenants_app = typer.Typer(no_args_is_help=True, help="Manage tenants.")
keys_app = typer.Typer(no_args_is_help=True, help="Manage API keys.")
app.add_typer(tenants_app, name="tenants")
app.add_typer(keys_app, name="keys")


def _add_identity_commands() -> None:
    from ragline.cli.identity import identity_app
    from ragline.cli.limits import tenants_limits

    tenants_app.add_typer(identity_app, name="identity-provider")
    tenants_app.command("limits")(tenants_limits)


def _add_webhook_commands() -> None:
    from ragline.cli.sources import sources_app
    from ragline.cli.webhooks import webhooks_app

    app.add_typer(webhooks_app, name="webhooks")
    app.add_typer(sources_app, name="sources")


_add_identity_commands()
_add_webhook_commands()

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


_made: list[Container] = []
"""The containers this command made (see :func:`_root`)."""


@app.callback()
def _root(ctx: typer.Context) -> None:
    """When the command ends, succeeded or failed, its due webhook events are delivered: the outbox's
    relay thread dies with the process, so a short command would exit before it sent them."""
    _made.clear()

    def deliver() -> None:
        while _made:
            _made.pop().deliver_pending_events()

    ctx.call_on_close(deliver)


def _container(home: Path | None) -> Container:
    from ragline.wiring import Container

    container = Container(_settings(home))
    _made.append(container)
    return container


def _settings(home: Path | None) -> Settings:
    """The environment's settings; an invalid value ends the command with a message naming its
    variable and what it accepts (``configuration_error``, exit 2), not a traceback."""
    from pydantic import ValidationError

    from ragline.config import Settings
    from ragline.errors import ConfigurationError

    try:
        return Settings.from_env(home=home) if home is not None else Settings.from_env()
    except ValidationError as exc:
        problems = [f"RAGLINE_{str(e['loc'][0]).upper()}: {e['msg']}" for e in exc.errors()[:5] if e["loc"]]
        raise _fail(ConfigurationError("invalid settings: " + "; ".join(problems))) from exc


def _fail(exc: Exception) -> typer.Exit:
    from ragline.errors import RaglineError

    if isinstance(exc, RaglineError):
        typer.secho(f"error [{exc.code}]: {exc.message}", err=True, fg="red")
        return typer.Exit(2)
    raise exc


@namespaces_app.command("create")
def namespaces_create(
    namespace_id: str,
    home: Home = None,
    tenant: Tenant = "local",
    description: str = "",
    default: bool = False,
) -> None:
    """Create a namespace."""
    from ragline.errors import RaglineError
    from ragline.services.namespaces import new_namespace, save_new_namespace

    c = _container(home)
    try:
        save_new_namespace(c.registry, new_namespace(tenant, namespace_id, description, default))
    except RaglineError as exc:
        raise _fail(exc) from exc
    typer.echo(f"created namespace {namespace_id}")


@namespaces_app.command("list")
def namespaces_list(home: Home = None, tenant: Tenant = "local") -> None:
    """List namespaces."""
    for ns in _container(home).registry.list_namespaces(tenant):
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
) -> None:
    """Rebuild a namespace with another embedding model or chunking; it serves as it is meanwhile."""
    from pydantic import ValidationError

    from ragline.cli.reindex import run_reindex
    from ragline.errors import RaglineError

    settings = _settings(home)
    try:
        code = run_reindex(
            settings, tenant, namespace_id, model=model, chunk_tokens=chunk_tokens,
            overlap_tokens=overlap_tokens, keep_old_for=keep_old_for, echo=typer.echo,
            chunking=chunking, parent_tokens=parent_tokens,
        )  # fmt: skip
    except (RaglineError, ValidationError) as exc:
        raise _fail(_as_ragline(exc)) from exc
    raise typer.Exit(code)


@tenants_app.command("create")
def tenants_create(
    tenant_id: str,
    name: str = "",
    quota: Annotated[int | None, typer.Option(help="Runs per month (default: unlimited).")] = None,
    rps: Rps = None,
    burst: Burst = None,
    max_runs: MaxRuns = None,
    home: Home = None,
) -> None:
    """Create a tenant (the first step of onboarding a customer)."""
    from ragline.errors import RaglineError

    try:
        _container(home).tenancy.create_tenant(tenant_id, name, quota, limits_of(rps, burst, max_runs))
    except RaglineError as exc:
        raise _fail(exc) from exc
    typer.echo(f"created tenant {tenant_id}")


@tenants_app.command("status")
def tenants_status(
    tenant_id: str,
    status: Annotated[str, typer.Argument(help="active, suspended or deleted (deleted is final).")],
    home: Home = None,
) -> None:
    """Suspend, reactivate or delete a tenant: only an active tenant's keys authenticate."""
    from ragline.errors import RaglineError

    if status not in ("active", "suspended", "deleted"):
        raise typer.BadParameter("status is one of: active, suspended, deleted")
    if status == "deleted":
        tenants_delete(tenant_id, home=home)
        return
    try:
        _container(home).tenancy.set_status(tenant_id, status)  # type: ignore[arg-type]
    except RaglineError as exc:
        raise _fail(exc) from exc
    typer.echo(f"tenant {tenant_id} is {status}")


@tenants_app.command("delete")
def tenants_delete(tenant_id: str, home: Home = None) -> None:
    """Delete a tenant and everything it stored: objects (every version), chunks, document records,
    namespaces, keys and recorded run results. Final; run it again to finish an interrupted one."""
    from ragline.errors import RaglineError

    try:
        purge = _container(home).tenant_deletion.delete(tenant_id)
    except RaglineError as exc:
        raise _fail(exc) from exc
    typer.echo(
        f"tenant {tenant_id} is deleted: {purge.objects} objects, {purge.chunks} chunks, "
        f"{purge.documents} document records and {purge.usage_details} usage details removed"
    )


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
) -> None:
    """Create an API key; it is printed once and stored only as a hash."""
    from ragline.errors import RaglineError

    try:
        plaintext, record = _container(home).tenancy.create_key(
            tenant,
            name=name,
            scopes=[s.strip() for s in scopes.split(",") if s.strip()],
            namespaces=[n.strip() for n in namespaces.split(",") if n.strip()],
            assert_user=assert_user,
            require_user=require_user,
            limits=limits_of(rps, burst, max_runs),
        )
    except RaglineError as exc:
        raise _fail(exc) from exc
    typer.echo(f"key id: {record.key_id}\nscopes: {','.join(record.scopes)}")
    if record.limits:
        typer.echo(f"limits: {describe(record.limits)}")
    if record.may_assert_user:
        typer.echo(f"user context: {'required' if record.requires_user else 'may be asserted'}")
    typer.echo(f"API key (shown once, store it now): {plaintext}")


@keys_app.command("list")
def keys_list(tenant: Annotated[str, typer.Option("--tenant")], home: Home = None) -> None:
    """List a tenant's keys (never the keys themselves)."""
    for k in _container(home).tenancy.list_keys(tenant):
        state = "revoked" if not k.active else "active"
        typer.echo(f"{k.key_id}\t{state}\t{','.join(k.scopes)}\t{','.join(k.namespaces) or '*'}\t{k.name}")


@keys_app.command("revoke")
def keys_revoke(key_id: str, tenant: Annotated[str, typer.Option("--tenant")], home: Home = None) -> None:
    """Revoke a key."""
    from ragline.errors import RaglineError

    try:
        _container(home).tenancy.revoke_key(tenant, key_id)
    except RaglineError as exc:
        raise _fail(exc) from exc
    typer.echo(f"revoked {key_id}")


@app.command()
def ingest(
    paths: Annotated[list[Path], typer.Argument(help="Files or folders.")],
    namespace: Namespace = "default",
    home: Home = None,
    tenant: Tenant = "local",
    create: Annotated[
        bool, typer.Option("--create", help="Create the namespace if it does not exist.")
    ] = False,
) -> None:
    """Parse, chunk, embed and index files; prints a summary table. Exit 1 if any file failed."""
    from ragline.cli.ingest import run_ingest

    raise typer.Exit(run_ingest(_container(home), tenant, namespace, paths, create=create))


@app.command()
def search(
    query: str,
    namespace: Namespace = "default",
    mode: Mode = "hybrid",
    k: Annotated[int, typer.Option("-k", help="Number of hits.")] = 10,
    fusion: Annotated[
        str | None, typer.Option(help="Hybrid fusion: adaptive | convex | rrf (default: settings).")
    ] = None,
    filter_: FilterOption = None,
    home: Home = None,
    tenant: Tenant = "local",
) -> None:
    """Search a namespace and print the hits with their score breakdown."""
    from ragline.cli.output import print_hits
    from ragline.domain.api import SearchRequest
    from ragline.errors import RaglineError
    from ragline.services.authentication import Principal

    if mode not in ("semantic", "keyword", "hybrid"):
        raise _fail(_invalid(f"unknown mode {mode!r}; use semantic, keyword or hybrid"))
    if fusion not in (None, "rrf", "convex", "adaptive"):
        raise _fail(_invalid(f"unknown fusion {fusion!r}; use adaptive, convex or rrf"))
    c = _container(home)
    try:
        body = {"query": query, "mode": mode, "k": k, "fusion": fusion, "filter": _json_filter(filter_)}
        request = SearchRequest.model_validate(body)
        out = c.search.search(Principal.operator(tenant), namespace, request)
    except (RaglineError, ValueError) as exc:
        raise _fail(_as_ragline(exc)) from exc
    print_hits(out)


@app.command("hosting-search")
def hosting_search(
    query: str,
    namespace: Annotated[list[str], typer.Option("--namespace", "-n", help="Namespace(s).")] = ["default"],  # noqa: B006
    mode: Annotated[str, typer.Option("--mode", "-m", help="accurate (reranks) | fast")] = "accurate",
    max_evals: Annotated[int, typer.Option(help="Rounds at most (1-5).")] = 3,
    top_k: Annotated[int, typer.Option("--top-k", "-k", help="Chunks kept.")] = 15,
    token_budget: Annotated[int, typer.Option(help="Model tokens for planning.")] = 4096,
    filter_: FilterOption = None,
    home: Home = None,
    tenant: Tenant = "local",
) -> None:
    """The best chunks for a question: generated queries, evaluated round by round; prints the rounds."""
    from ragline.cli.output import print_hosting_search
    from ragline.domain.api import HostingSearchRequest
    from ragline.errors import RaglineError
    from ragline.services.authentication import Principal

    c = _container(home)
    try:
        request = HostingSearchRequest.model_validate(
            {"query": query, "namespaces": namespace, "mode": mode, "maxEvals": max_evals,
             "topK": top_k, "tokenBudget": token_budget, "filter": _json_filter(filter_)}
        )  # fmt: skip
        out = c.hosting_search.search(Principal.operator(tenant), request)
    except (RaglineError, ValueError) as exc:
        raise _fail(_as_ragline(exc)) from exc
    print_hosting_search(out)


@app.command()
def chat(
    question: str,
    namespace: Annotated[
        list[str] | None,
        typer.Option("--namespace", "-n", help="Namespace(s); none: the collection router picks."),
    ] = None,
    mode: Annotated[str, typer.Option("--mode", "-m", help="accurate | fast")] = "accurate",
    agent: Annotated[
        str,
        typer.Option("--agent", "-a", help="agentic | deep_search | chain_of_rag | auto (the RAG router)"),
    ] = "agentic",
    resume: Annotated[
        bool, typer.Option("--continue", "-c", help="Continue the most recent conversation.")
    ] = False,
    conversation: Annotated[
        str | None, typer.Option("--conversation", help="Continue this conversation (its id).")
    ] = None,
    home: Home = None,
    tenant: Tenant = "local",
) -> None:
    """Ask a question: streams the answer and prints the cited sources. Each answer is a turn of a
    conversation the server keeps: ``--continue`` asks a follow-up in the most recent one."""
    from ragline.cli.output import stream_chat
    from ragline.domain.api import ChatRequest
    from ragline.errors import RaglineError
    from ragline.services.authentication import Principal

    c = _container(home)
    caller = Principal.operator(tenant)
    try:
        if resume and conversation is None:
            recent = c.conversations.list(caller).conversations
            if not recent:
                raise typer.BadParameter("no conversation to continue yet", param_hint="--continue")
            conversation = recent[0].conversation_id
        request = ChatRequest.model_validate(
            {
                "messages": [{"role": "user", "content": question}],
                "namespaces": namespace or [],
                "mode": mode,
                "agent": agent,
                **({"conversationId": conversation} if conversation else {}),
            }
        )
        events = c.chat.answer_chat(caller, request)
        final = stream_chat(events, c.chat_model.name)
        if final is not None and final.conversation_id:
            typer.echo(f'conversation {final.conversation_id} (ragline chat --continue "…" to follow up)')
    except RaglineError as exc:
        raise _fail(exc) from exc
    except ValueError as exc:
        raise _fail(_as_ragline(exc)) from exc


@app.command()
def serve(
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1.")] = 8000,
    tenant: Tenant = "local",
    functions: Annotated[Path, typer.Option(help="The repository's functions/ folder.")] = Path("functions"),
    api_keys: Annotated[
        bool, typer.Option("--api-keys", help="Require an API key per request (else: --tenant's operator).")
    ] = False,
    home: Home = None,
) -> None:
    """Serve the real handlers locally: chat (SSE), search, documents, namespaces, keys and usage; MCP at
    /mcp (always with an API key)."""
    import uvicorn

    from ragline.cli.serve import build_app, operator_tenant

    container = _container(home)
    if not api_keys:
        operator_tenant(container, tenant)
    app_ = build_app(functions.resolve(), tenant, container, api_keys=api_keys)
    uvicorn.run(app_, host="127.0.0.1", port=port, log_level="info")


@app.command("mcp")
def mcp_stdio(home: Home = None) -> None:
    """Serve MCP over stdio (tools search, hosting_search and ask; the key's namespaces as resources),
    acting as the API key in RAGLINE_API_KEY. ``ragline serve`` also serves it at /mcp."""
    import os

    from ragline.cli.mcp import serve_stdio
    from ragline.errors import RaglineError

    try:
        serve_stdio(_container(home), os.environ.get("RAGLINE_API_KEY", ""))
    except RaglineError as exc:
        raise _fail(exc) from exc


@app.command()
def openapi(
    out: Annotated[Path | None, typer.Option(help="Write here instead of stdout.")] = None,
    functions: Annotated[Path, typer.Option(help="The repository's functions/ folder.")] = Path("functions"),
) -> None:
    """The API's OpenAPI 3.1 document, generated from the handlers (``make openapi`` writes docs/)."""
    from ragline.cli.openapi import render

    document = render(functions.resolve())
    if out is None:
        typer.echo(document, nl=False)
    else:
        out.write_text(document, encoding="utf-8")


@app.command("eval")
def evaluate(
    dataset: Annotated[
        str,
        typer.Argument(
            help="A BEIR folder (corpus.jsonl, queries.jsonl, qrels/<split>.tsv): retrieval scores; or"
            " `answers` followed by a question file: answer evaluation."
        ),
    ],
    questions: Annotated[
        Path | None, typer.Argument(help="With `answers`: the questions, JSON lines (evals/README.md).")
    ] = None,
    split: Annotated[str, typer.Option(help="train | test | dev")] = "test",
    modes: Annotated[
        str,
        typer.Option(
            help="Comma-separated: keyword, semantic, hybrid (configured fusion), hybrid:rrf, hybrid:convex,"
            " hybrid:adaptive, accurate (chat's default: hybrid → rerank → the chunks one search shows)."
        ),
    ] = "keyword,semantic,hybrid:rrf,hybrid:convex,hybrid:adaptive,accurate",
    config: Annotated[
        list[str] | None,
        typer.Option(
            "--config",
            help="answers: a configuration, KEY=VALUE,… with keys label, agent, mode, fusion, alpha,"
            " namespaces (a+b); give two for an A/B.",
        ),
    ] = None,
    beir: Annotated[
        list[str] | None,
        typer.Option(
            "--beir", help="answers: NAMESPACE=FOLDER: index a BEIR corpus into the namespace first."
        ),
    ] = None,
    judge: Annotated[
        bool, typer.Option("--judge/--no-judge", help="answers: grade against the references.")
    ] = True,
    report: Annotated[Path | None, typer.Option(help="answers: also write the HTML report here.")] = None,
    limit: Annotated[int | None, typer.Option(help="answers: the first N questions only.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="answers: print the report as JSON.")] = False,
    home: Home = None,
    tenant: Tenant = "local",
) -> None:
    """Index a BEIR dataset and print nDCG@10, Recall@100 and MRR@10 per mode; or, as ``eval answers
    QUESTIONS``, answer a question set through chat and score every answer (table + HTML report)."""
    from ragline.errors import RaglineError

    try:
        if dataset == "answers":
            from ragline.cli.eval_answers import run_answers

            if questions is None:
                raise _invalid("eval answers needs a question file")
            run_answers(
                _container(home), tenant, questions, configs=config or [], beir=beir or [], judge=judge,
                report=report, limit=limit, as_json=as_json,
            )  # fmt: skip
            return
        from ragline.cli.output import run_eval

        run_eval(_container(home), Path(dataset), split, [m.strip() for m in modes.split(",") if m.strip()])
    except RaglineError as exc:
        raise _fail(exc) from exc


def _json_filter(text: str | None) -> object:
    """``--filter``'s JSON (None: no filter); text that is not JSON is an invalid request."""
    import json

    if text is None:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise _invalid(f"--filter is not JSON: {exc.msg}") from exc


def _invalid(message: str) -> Exception:
    from ragline.errors import InvalidRequest

    return InvalidRequest(message)


def _as_ragline(exc: Exception) -> Exception:
    """A bad argument as the one error: pydantic's problems as ``field: message``, else the last line."""
    from pydantic import ValidationError

    from ragline.errors import InvalidRequest, RaglineError

    if isinstance(exc, RaglineError):
        return exc
    if isinstance(exc, ValidationError):
        problems = [f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:5]]
        return InvalidRequest("; ".join(problems))
    return InvalidRequest(str(exc).splitlines()[-1].strip())


def main() -> None:
    """The ``ragline`` command (``serve`` included): one BLAS thread before numpy is first imported."""
    from ragline.environment import one_blas_thread

    one_blas_thread()
    app(prog_name="ragline")


if __name__ == "__main__":
    main()
