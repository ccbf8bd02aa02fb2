"""``ragline ingest``, ``search`` and ``hosting-search``: documents into a namespace, and chunks back
out of it, through the same services the Lambda handlers use (as the tenant's operator)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ragline.cli.context import as_ragline, build_container, fail, invalid
from ragline.cli.options import FilterOption, Home, Json, Mode, Namespace, Tenant, json_filter


def ingest(
    paths: Annotated[list[Path], typer.Argument(help="Files or folders.")],
    namespace: Namespace = "default",
    home: Home = None,
    tenant: Tenant = "local",
    create: Annotated[
        bool, typer.Option("--create", help="Create the namespace if it does not exist.")
    ] = False,
    as_json: Json = False,
) -> None:
    """Parse, chunk, embed and index files; prints a summary table. Exit 1 if any file failed."""
    from ragline.cli.ingest import run_ingest

    c = build_container(home)
    raise typer.Exit(run_ingest(c, tenant, namespace, paths, create=create, as_json=as_json))


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
    as_json: Json = False,
) -> None:
    """Search a namespace and print the hits with their score breakdown (``--json``: the API's body)."""
    from ragline.cli.output import print_hits, print_json
    from ragline.domain.api import SearchRequest
    from ragline.errors import RaglineError
    from ragline.services.authentication import Principal

    if mode not in ("semantic", "keyword", "hybrid"):
        raise fail(invalid(f"unknown mode {mode!r}; use semantic, keyword or hybrid"))
    if fusion not in (None, "rrf", "convex", "adaptive"):
        raise fail(invalid(f"unknown fusion {fusion!r}; use adaptive, convex or rrf"))
    c = build_container(home)
    try:
        body = {"query": query, "mode": mode, "k": k, "fusion": fusion, "filter": json_filter(filter_)}
        request = SearchRequest.model_validate(body)
        out = c.search.search(Principal.operator(tenant), namespace, request)
    except (RaglineError, ValueError) as exc:
        raise fail(as_ragline(exc)) from exc
    if as_json:
        print_json(out)
    else:
        print_hits(out)


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
    as_json: Json = False,
) -> None:
    """The best chunks for a question: generated queries, evaluated round by round; prints the rounds."""
    from ragline.cli.output import print_hosting_search, print_json
    from ragline.domain.api import HostingSearchRequest
    from ragline.errors import RaglineError
    from ragline.services.authentication import Principal

    c = build_container(home)
    try:
        request = HostingSearchRequest.model_validate(
            {"query": query, "namespaces": namespace, "mode": mode, "maxEvals": max_evals,
             "topK": top_k, "tokenBudget": token_budget, "filter": json_filter(filter_)}
        )  # fmt: skip
        out = c.hosting_search.search(Principal.operator(tenant), request)
    except (RaglineError, ValueError) as exc:
        raise fail(as_ragline(exc)) from exc
    if as_json:
        print_json(out)
    else:
        print_hosting_search(out)
