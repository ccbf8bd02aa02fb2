"""Two tenants on one deployment for the fairness load test and ``bench/limits.py``: DynamoDB on moto
for the registry, the ledger and the limiter (tables from ``template.yaml``), an SQLite store, and
searches sent through the real search handler as API Gateway events from threads.

``burst`` sends a tenant's requests at a fixed rate whatever their answers (each request on a
thread of its own, as concurrent Lambdas); ``steady`` sends them one after another, never faster
than the rate (one client at its normal pace).
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from pathlib import Path
from typing import Any, NamedTuple

from ragline.adapters.aws.ledger import DynamoDbUsageLedger
from ragline.adapters.aws.limits import DynamoDbRateLimiter
from ragline.adapters.aws.tenants import DynamoDbTenantRegistry
from ragline.adapters.embedded.store import SqliteVectorStoreProvider
from ragline.cli.serve import LambdaContext, gateway_event
from ragline.config import Settings
from ragline.domain.limits import Limits
from ragline.domain.models import TenantScope
from ragline.services.namespaces import new_namespace
from ragline.wiring import Container
from tests.contract.vector_store_contract import make_chunks
from tests.support.cfn_tables import create_table_from_template
from tests.support.fakes import BowEmbedder
from tests.support.lambda_harness import authorizer_context, load_handler
from tests.support.vectors import DIM

SEARCH = load_handler("search")
TEXTS = ["Rockets launch at dawn.", "Fuel is loaded the night before.", "Launch windows open at dawn."]


class Answer(NamedTuple):
    status: int
    retry_after: str | None
    code: str
    seconds: float


def fairness_container(dynamodb: Any, home: Path, tenants: dict[str, Limits | None]) -> Container:
    """A container on moto's DynamoDB with ``tenants`` (None: no limits set) and a namespace each."""
    suffix = uuid.uuid4().hex[:8]
    tenants_table = create_table_from_template(dynamodb, "TenantsTable", f"tenants-{suffix}")
    usage_table = create_table_from_template(dynamodb, "UsageTable", f"usage-{suffix}")
    stores = SqliteVectorStoreProvider(home / "store.sqlite", dimension=DIM)
    c = Container(
        Settings(home=home),
        registry=DynamoDbTenantRegistry(tenants_table, client=dynamodb),
        ledger=DynamoDbUsageLedger(usage_table, client=dynamodb),
        limiter=DynamoDbRateLimiter(usage_table, client=dynamodb),
        stores=stores,
        embedder=BowEmbedder(),
    )
    for tenant, limits in tenants.items():
        c.tenancy.create_tenant(tenant, limits=limits)
        c.registry.create_namespace(new_namespace(tenant, "docs", default=True))
        stores.scoped(TenantScope(tenant_id=tenant, namespace_id="docs")).upsert(make_chunks("d", TEXTS))
    for part in ("tenant_gate", "search", "metering", "retrieval"):  # built once, before threads race
        getattr(c, part)
    return c


def search(container: Container, tenant: str) -> Answer:
    """One search of ``tenant``'s through the search handler, as API Gateway sends it."""
    event = gateway_event(
        "POST",
        "/v1/namespaces/docs/search",
        resource="/v1/namespaces/{namespace}/search",
        path_parameters={"namespace": "docs"},
        authorizer=authorizer_context(tenant, scopes="search"),
        body=json.dumps({"query": "when do rockets launch"}),
    )
    started = time.perf_counter()
    response = SEARCH.lambda_handler(event, LambdaContext(), container=container)
    seconds = time.perf_counter() - started
    headers = response.get("multiValueHeaders") or {}
    retry = headers.get("Retry-After")
    code = (
        json.loads(response["body"]).get("error", {}).get("code", "") if response["statusCode"] >= 400 else ""
    )
    return Answer(response["statusCode"], retry[0] if retry else None, code, seconds)


def burst(container: Container, tenant: str, rate: float, seconds: float) -> tuple[list[Answer], float]:
    """``tenant``'s searches started at ``rate`` a second for ``seconds``, each on its own thread;
    their answers and the seconds from the first start to the last answer."""
    answers: list[Answer] = []
    lock = threading.Lock()

    def one() -> None:
        answer = search(container, tenant)
        with lock:
            answers.append(answer)

    threads, started = [], time.perf_counter()
    for i in range(round(rate * seconds)):
        time.sleep(max(0.0, started + i / rate - time.perf_counter()))
        threads.append(threading.Thread(target=one))
        threads[-1].start()
    for t in threads:
        t.join(timeout=120)
    return answers, time.perf_counter() - started


def steady(container: Container, tenant: str, rate: float, count: int) -> list[Answer]:
    """``count`` searches of ``tenant``'s one after another, at least ``1 / rate`` seconds apart."""
    answers: list[Answer] = []
    for _ in range(count):
        started = time.perf_counter()
        answers.append(search(container, tenant))
        time.sleep(max(0.0, started + 1 / rate - time.perf_counter()))
    return answers
