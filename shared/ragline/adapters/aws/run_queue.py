""":class:`~ragline.ports.RunQueue` on SQS: a background run is a message of the runs queue, which the
chat function drains through the Web Adapter's ``/events`` path (one run per invocation, within the
function's timeout)."""

from __future__ import annotations

import json
from typing import Any

from ragline import errors
from ragline.adapters.boto import LazyClient


class SqsRunQueue:
    def __init__(self, queue_url: str, *, client: Any = None) -> None:
        self.queue_url = queue_url
        self._client = LazyClient("sqs", client=client)

    def submit(self, tenant_id: str, run_id: str, message: str) -> None:
        from botocore.exceptions import BotoCoreError, ClientError

        body = json.dumps({"ragline_run": {"tenant": tenant_id, "runId": run_id, "message": message}})
        try:
            self._client().send_message(QueueUrl=self.queue_url, MessageBody=body)
        except (ClientError, BotoCoreError) as exc:
            raise errors.DependencyUnavailable("SQS refused the background run", run_id=run_id) from exc


def run_of(body: str) -> tuple[str, str, str]:
    """(tenant, run id, message) of a runs-queue message; InvalidRequest when it is not one."""
    try:
        run = json.loads(body)["ragline_run"]
        return str(run["tenant"]), str(run["runId"]), str(run["message"])
    except (ValueError, KeyError, TypeError) as exc:
        raise errors.InvalidRequest("not a background run message") from exc
