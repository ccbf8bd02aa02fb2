"""Sync schedules in Amazon EventBridge Scheduler: one schedule per source in the stack's schedule
group, ``rate(<n> minutes)``, whose target sends the sync's first step (a :class:`SyncStep` message
with no token) to the ingestion queue with the stack's scheduler role. The schedule's name is a
digest of the source's key (names are at most 64 characters); its description names the source."""

from __future__ import annotations

import hashlib
from typing import Any

from ragline.adapters.aws.errors import AlreadyExists, Missing, call, missing_or_exists
from ragline.adapters.boto import LazyClient
from ragline.domain.sources import SyncStep

NOT_FOUND = "ResourceNotFoundException"
CONFLICT = "ConflictException"


_condition = missing_or_exists(NOT_FOUND, CONFLICT)


def schedule_name(tenant_id: str, namespace_id: str, source_id: str) -> str:
    digest = hashlib.sha256(f"{tenant_id}\x00{namespace_id}\x00{source_id}".encode()).hexdigest()[:40]
    return f"sync-{digest}"


class EventBridgeSyncScheduler:
    def __init__(
        self, *, group: str, queue_arn: str, role_arn: str, client: Any = None, region: str | None = None
    ) -> None:
        self.group = group
        self.queue_arn = queue_arn
        self.role_arn = role_arn
        self._client = LazyClient("scheduler", client=client, region=region)

    def _send(self, action: str, request: dict[str, Any]) -> dict[str, Any]:
        return call(self._client(), action, request, _condition, service="Scheduler")

    def put(self, tenant_id: str, namespace_id: str, source_id: str, every_minutes: int) -> None:
        request = {
            "Name": schedule_name(tenant_id, namespace_id, source_id),
            "GroupName": self.group,
            "ScheduleExpression": f"rate({every_minutes} minutes)",
            "FlexibleTimeWindow": {
                "Mode": "FLEXIBLE",
                "MaximumWindowInMinutes": max(1, min(every_minutes // 4, 15)),
            },
            "Target": {
                "Arn": self.queue_arn,
                "RoleArn": self.role_arn,
                "Input": SyncStep(tenant_id, namespace_id, source_id).body(),
                "RetryPolicy": {"MaximumRetryAttempts": 3, "MaximumEventAgeInSeconds": 3600},
            },
            "Description": f"Ragline sync of {tenant_id}/{namespace_id}/{source_id}"[:512],
            "State": "ENABLED",
        }
        try:
            self._send("update_schedule", request)
        except Missing:
            try:
                self._send("create_schedule", request)
            except AlreadyExists:  # created meanwhile: this one's settings win
                self._send("update_schedule", request)

    def delete(self, tenant_id: str, namespace_id: str, source_id: str) -> None:
        try:
            self._send(
                "delete_schedule",
                {"Name": schedule_name(tenant_id, namespace_id, source_id), "GroupName": self.group},
            )
        except Missing:
            return

    def purge_tenant(self, tenant_id: str) -> int:
        """Schedules carry only digests: the tenant's are found by their description."""
        request: dict[str, Any] = {"GroupName": self.group, "MaxResults": 100}
        names: list[str] = []
        while True:
            response = self._send("list_schedules", request)
            names += [s["Name"] for s in response.get("Schedules", [])]
            if not response.get("NextToken"):
                break
            request["NextToken"] = response["NextToken"]
        gone = 0
        prefix = f"Ragline sync of {tenant_id}/"
        for name in names:
            try:
                found = self._send("get_schedule", {"Name": name, "GroupName": self.group})
            except Missing:
                continue
            if str(found.get("Description", "")).startswith(prefix):
                self._send("delete_schedule", {"Name": name, "GroupName": self.group})
                gone += 1
        return gone
