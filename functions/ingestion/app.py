"""SQS batch of S3 notifications → ingest or remove each object; failures are reported per message.

A message that fails (unreadable file, throttled dependency) is returned in ``batchItemFailures`` so
SQS redelivers only it, and moves it to the DLQ after the queue's ``maxReceiveCount``; the rest of
the batch is acknowledged, also when every message failed (no whole-invocation error). The document
record keeps the readable reason. Each message's work is fitted to the invocation's time left (the
context's): one that would start with too little is not started, and left for redelivery. The loop
is written out rather than Powertools' ``BatchProcessor``, whose import (every event source's data
classes, asyncio) was a third of this function's cold start.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ragline import errors, snapstart, telemetry, wiring
from ragline.services.embedding_run import WorkerDeadline

if TYPE_CHECKING:
    from ragline.wiring import Container

logger = telemetry.handler_logger()
tracer = telemetry.handler_tracer()


@logger.inject_lambda_context
@tracer.capture_lambda_handler(capture_response=False)
def lambda_handler(
    event: dict[str, Any], context: Any, *, container: Container | None = None
) -> dict[str, list[dict[str, str]]]:
    ingest = (container or wiring.container()).ingest
    deadline = WorkerDeadline.of_lambda(context)
    done: list[tuple[str, int]] = []
    failures: list[dict[str, str]] = []
    for record in event["Records"]:
        message_id = record["messageId"]
        logger.append_keys(message_id=message_id)  # the correlation id of this message's lines
        try:
            for result in ingest.within(deadline).handle_notification(record["body"]):
                done.append((result.outcome, result.chunks))
                extra = {"document": result.document_id, "outcome": result.outcome, "reason": result.reason}
                logger.info("processed", extra=extra)
        except errors.WorkerOutOfTime as exc:  # not the message's fault: a fresh invocation takes it
            logger.info("left for redelivery", extra={"reason": exc.message})
            failures.append({"itemIdentifier": message_id})
        except Exception:  # reported, so SQS redelivers this message alone
            logger.warning("message failed", exc_info=True)
            failures.append({"itemIdentifier": message_id})
    telemetry.record_ingest(done, failures=len(failures))
    return {"batchItemFailures": failures}


snapstart.prepare("ingest")  # a SnapStart init's warm-up and hooks; nothing otherwise
