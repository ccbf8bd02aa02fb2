"""The data sources service's promises (the API's and the CLI's): credentials kept and never shown,
schedules following ``everyMinutes``, refusals before anything is stored, the per-namespace cap, a
namespace with sources kept, and a tenant's deletion taking its sources, credentials and schedules."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragline import errors
from ragline.adapters.embedded.step_queue import InlineStepQueue
from ragline.config import Settings
from ragline.domain.source_api import NewSource, SourcePatch, SyncRequest
from ragline.domain.sources import MAX_SOURCES_PER_NAMESPACE, SyncStep
from ragline.services.authentication import Principal
from ragline.services.namespaces import new_namespace
from ragline.wiring import Container
from tests.support.fakes import BowEmbedder

pytestmark = pytest.mark.integration
OPERATOR = Principal.operator("acme")
CONFLUENCE = {"siteUrl": "https://acme.atlassian.net", "spaces": ["ENG"]}
CREDENTIALS = {"email": "bot@acme.example", "apiToken": "ATATT-token-one"}


@pytest.fixture
def c(tmp_path: Path) -> Iterator[Container]:
    embedder = BowEmbedder()
    container = Container(
        Settings(home=tmp_path), embedder=embedder, tokenizer=embedder, step_queue=InlineStepQueue()
    )
    container.tenancy.create_tenant("acme")
    container.registry.create_namespace(new_namespace("acme", "docs", default=True))
    yield container
    container.close()


def confluence(**more: Any) -> NewSource:
    body = {"kind": "confluence", "confluence": CONFLUENCE, "credentials": CREDENTIALS} | more
    return NewSource.model_validate(body)


def due(c: Container, after_seconds: float) -> list[SyncStep]:
    """The syncs a local server's clock would start ``after_seconds`` from now."""
    scheduler = c.sync_scheduler
    scheduler._clock = lambda: time.time() + after_seconds  # type: ignore[attr-defined]
    try:
        return scheduler.due()  # type: ignore[attr-defined,no-any-return]
    finally:
        scheduler._clock = time.time  # type: ignore[attr-defined]


def test_credentials_are_kept_and_never_shown(c: Container) -> None:
    view = c.source_service.create(OPERATOR, "docs", confluence())
    assert view.has_credentials and "ATATT" not in view.model_dump_json()
    assert c.source_secrets.get("acme", "docs", view.source_id) == CREDENTIALS
    replaced = {"email": "bot@acme.example", "apiToken": "ATATT-token-two"}
    c.source_service.update(
        OPERATOR, "docs", view.source_id, SourcePatch.model_validate({"credentials": replaced})
    )
    assert c.source_secrets.get("acme", "docs", view.source_id) == replaced
    assert "ATATT" not in c.source_service.list(OPERATOR, "docs").model_dump_json()


def test_a_new_source_queues_its_first_sync(c: Container) -> None:
    view = c.source_service.create(OPERATOR, "docs", confluence())
    queue = c.step_queue
    assert isinstance(queue, InlineStepQueue)
    assert queue.steps == [(SyncStep("acme", "docs", view.source_id), 0.0)]


def test_a_schedule_follows_every_minutes(c: Container) -> None:
    view = c.source_service.create(OPERATOR, "docs", confluence(everyMinutes=30))
    assert due(c, 29 * 60) == [] and due(c, 31 * 60) == [SyncStep("acme", "docs", view.source_id)]
    c.source_service.update(OPERATOR, "docs", view.source_id, SourcePatch.model_validate({"everyMinutes": 0}))
    assert due(c, 10**6) == []
    c.source_service.update(
        OPERATOR, "docs", view.source_id, SourcePatch.model_validate({"everyMinutes": 15})
    )
    assert due(c, 16 * 60) == [SyncStep("acme", "docs", view.source_id)]
    with pytest.raises(errors.InvalidRequest):
        c.source_service.update(
            OPERATOR, "docs", view.source_id, SourcePatch.model_validate({"everyMinutes": 14})
        )


def test_removal_drops_credentials_and_schedule_at_once_then_the_source(c: Container) -> None:
    view = c.source_service.create(OPERATOR, "docs", confluence(everyMinutes=60))
    queue = c.step_queue
    assert isinstance(queue, InlineStepQueue)
    queue.steps.clear()
    removing = c.source_service.delete(OPERATOR, "docs", view.source_id)
    assert removing.status == "removing"
    with pytest.raises(errors.NotFound):
        c.source_secrets.get("acme", "docs", view.source_id)
    assert due(c, 10**6) == []
    with pytest.raises(errors.Conflict):
        c.source_service.sync(OPERATOR, "docs", view.source_id, SyncRequest())
    ((step, _),) = queue.steps
    assert c.source_sync.run(step) == "done"  # no connector needed: it had nothing
    with pytest.raises(errors.NotFound):
        c.source_service.get(OPERATOR, "docs", view.source_id)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"kind": "confluence", "confluence": CONFLUENCE}, "credentials"),
        ({"kind": "confluence", "confluence": CONFLUENCE, "credentials": {"apiToken": "x"}}, "credentials"),
        ({"kind": "confluence", "web": {"seeds": ["https://example.com/"]}}, "confluence"),
        (
            {"kind": "web", "web": {"seeds": ["https://example.com/"]}, "credentials": {"a": "b"}},
            "credentials",
        ),
        ({"kind": "web", "web": {"seeds": ["https://example.com/"]}, "everyMinutes": 5}, "everyMinutes"),
    ],
)
def test_a_bad_source_is_refused_before_anything_is_stored(
    c: Container, body: dict[str, Any], field: str
) -> None:
    with pytest.raises(errors.InvalidRequest) as refused:
        c.source_service.create(OPERATOR, "docs", NewSource.model_validate(body))
    assert refused.value.details.get("field") == field
    assert c.sources.list("acme", "docs") == []
    assert not (c.settings.home / "secrets").exists() or not list(
        (c.settings.home / "secrets").rglob("*.json")
    )


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"kind": "web", "web": {"seeds": ["http://10.0.0.5/wiki/"]}}, "web.seeds"),
        ({"kind": "web", "web": {"seeds": ["http://127.0.0.1:8080/"]}}, "web.seeds"),
        (
            {"kind": "web", "web": {"seeds": ["https://example.com/"], "sitemaps": ["http://[::1]/s.xml"]}},
            "web.sitemaps",
        ),
        (
            {
                "kind": "confluence",
                "confluence": {"siteUrl": "http://acme.atlassian.net"},
                "credentials": CREDENTIALS,
            },
            "confluence.siteUrl",
        ),
        (
            {
                "kind": "graph",
                "graph": {
                    "tenant": "acme.onmicrosoft.com",
                    "driveId": "b!x",
                    "loginUrl": "http://login.example",
                },
                "credentials": {"clientId": "a", "clientSecret": "b"},
            },
            "graph.loginUrl",
        ),
    ],
)
def test_a_source_reaching_a_private_address_or_sending_credentials_in_clear_is_refused(
    c: Container, body: dict[str, Any], field: str
) -> None:
    with pytest.raises(errors.InvalidRequest) as refused:
        c.source_service.create(OPERATOR, "docs", NewSource.model_validate(body))
    assert refused.value.details.get("field") == field
    assert c.sources.list("acme", "docs") == []


def test_a_public_website_may_be_plain_http(c: Container) -> None:
    view = c.source_service.create(
        OPERATOR, "docs", NewSource.model_validate({"kind": "web", "web": {"seeds": ["http://example.com/"]}})
    )
    patch = SourcePatch.model_validate({"web": {"seeds": ["http://192.168.1.1/"]}})
    with pytest.raises(errors.InvalidRequest):
        c.source_service.update(OPERATOR, "docs", view.source_id, patch)
    assert c.source_service.get(OPERATOR, "docs", view.source_id).settings["seeds"] == ["http://example.com/"]


def test_a_namespace_holds_at_most_its_cap_of_sources(c: Container) -> None:
    for _ in range(MAX_SOURCES_PER_NAMESPACE):
        c.source_service.create(OPERATOR, "docs", confluence())
    with pytest.raises(errors.QuotaExceeded):
        c.source_service.create(OPERATOR, "docs", confluence())
    secrets = list((c.settings.home / "secrets").rglob("*.json"))
    assert len(secrets) == MAX_SOURCES_PER_NAMESPACE  # the refused one's credentials did not stay


def test_a_namespace_with_sources_is_not_deleted(c: Container) -> None:
    c.source_service.create(OPERATOR, "docs", confluence())
    with pytest.raises(errors.Conflict) as refused:
        c.namespaces.delete(OPERATOR, "docs")
    assert "data sources" in refused.value.message
    assert c.registry.get_namespace("acme", "docs")


def test_deleting_the_tenant_takes_its_sources_credentials_and_schedules(c: Container) -> None:
    view = c.source_service.create(OPERATOR, "docs", confluence(everyMinutes=60))
    c.tenant_deletion.delete("acme")
    assert c.sources.list("acme", "docs") == []
    with pytest.raises(errors.NotFound):
        c.source_secrets.get("acme", "docs", view.source_id)
    assert due(c, 10**6) == []


def test_a_local_servers_clock_queues_each_due_sync(c: Container) -> None:
    from ragline.cli.serve import SyncClock

    view = c.source_service.create(OPERATOR, "docs", confluence(everyMinutes=15))
    queue = c.step_queue
    assert isinstance(queue, InlineStepQueue)
    queue.steps.clear()
    clock = SyncClock(c)
    assert clock.tick() == 0
    c.sync_scheduler._clock = lambda: time.time() + 16 * 60  # type: ignore[attr-defined]
    assert clock.tick() == 1
    assert queue.steps == [(SyncStep("acme", "docs", view.source_id), 0.0)]
