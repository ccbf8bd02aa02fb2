"""The SyncScheduler contract on the embedded table and on EventBridge Scheduler (moto server)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from ragline.adapters.aws.sync_scheduler import EventBridgeSyncScheduler, schedule_name
from ragline.adapters.embedded.sync_scheduler import SqliteSyncScheduler
from ragline.domain.sources import SyncStep

pytestmark = pytest.mark.contract


class TestSqliteSyncScheduler:
    def test_a_schedule_yields_its_first_step_when_due_then_moves_on(self, tmp_path: Path) -> None:
        now = [1000.0]
        scheduler = SqliteSyncScheduler(tmp_path / "s.sqlite", clock=lambda: now[0])
        scheduler.put("acme", "docs", "src_1", 15)
        assert scheduler.due() == []
        now[0] += 15 * 60
        assert scheduler.due() == [SyncStep("acme", "docs", "src_1")]
        assert scheduler.due() == []  # moved to its next time
        now[0] += 15 * 60
        assert scheduler.due() == [SyncStep("acme", "docs", "src_1")]

    def test_put_replaces_and_delete_removes(self, tmp_path: Path) -> None:
        now = [0.0]
        scheduler = SqliteSyncScheduler(tmp_path / "s.sqlite", clock=lambda: now[0])
        scheduler.put("acme", "docs", "src_1", 15)
        scheduler.put("acme", "docs", "src_1", 60)
        now[0] = 15 * 60
        assert scheduler.due() == []
        now[0] = 60 * 60
        assert len(scheduler.due()) == 1
        scheduler.delete("acme", "docs", "src_1")
        scheduler.delete("acme", "docs", "src_1")
        now[0] = 10**9
        assert scheduler.due() == []

    def test_purge_tenant_removes_only_its_schedules(self, tmp_path: Path) -> None:
        now = [0.0]
        scheduler = SqliteSyncScheduler(tmp_path / "s.sqlite", clock=lambda: now[0])
        scheduler.put("acme", "docs", "src_1", 15)
        scheduler.put("acme", "other", "src_2", 15)
        scheduler.put("beta", "docs", "src_3", 15)
        assert scheduler.purge_tenant("acme") == 2
        now[0] = 10**9
        assert scheduler.due() == [SyncStep("beta", "docs", "src_3")]


class TestEventBridgeSyncScheduler:
    @pytest.fixture
    def client(self, moto_endpoint: str, moto_aws_env: dict[str, str]) -> Any:
        import boto3

        client = boto3.client("scheduler", region_name="us-east-1", endpoint_url=moto_endpoint)
        return client

    @pytest.fixture
    def scheduler(self, client: Any) -> EventBridgeSyncScheduler:
        group = f"ragline-{uuid.uuid4().hex[:8]}"
        client.create_schedule_group(Name=group)
        return EventBridgeSyncScheduler(
            group=group,
            queue_arn="arn:aws:sqs:us-east-1:123456789012:ingest",
            role_arn="arn:aws:iam::123456789012:role/scheduler",
            client=client,
        )

    def test_put_creates_then_replaces_the_sources_schedule(
        self, scheduler: EventBridgeSyncScheduler, client: Any
    ) -> None:
        scheduler.put("acme", "docs", "src_1", 15)
        scheduler.put("acme", "docs", "src_1", 60)
        found = client.get_schedule(Name=schedule_name("acme", "docs", "src_1"), GroupName=scheduler.group)
        assert found["ScheduleExpression"] == "rate(60 minutes)"
        assert found["Target"]["Arn"] == scheduler.queue_arn
        assert found["Target"]["RoleArn"] == scheduler.role_arn
        assert SyncStep.parse(found["Target"]["Input"]) == SyncStep("acme", "docs", "src_1")
        assert json.loads(found["Target"]["Input"])["ragline_sync"]["token"] == ""

    def test_delete_removes_it_and_is_idempotent(
        self, scheduler: EventBridgeSyncScheduler, client: Any
    ) -> None:
        scheduler.put("acme", "docs", "src_1", 15)
        scheduler.delete("acme", "docs", "src_1")
        scheduler.delete("acme", "docs", "src_1")
        assert client.list_schedules(GroupName=scheduler.group)["Schedules"] == []

    def test_purge_tenant_removes_only_its_schedules(
        self, scheduler: EventBridgeSyncScheduler, client: Any
    ) -> None:
        scheduler.put("acme", "docs", "src_1", 15)
        scheduler.put("acme", "other", "src_2", 15)
        scheduler.put("acmeco", "docs", "src_3", 15)
        assert scheduler.purge_tenant("acme") == 2
        left = [s["Name"] for s in client.list_schedules(GroupName=scheduler.group)["Schedules"]]
        assert left == [schedule_name("acmeco", "docs", "src_3")]
