"""SQS batch of S3 notifications → ingest or remove each object; failures are reported per message.
Reindex steps and data-source sync steps (scheduled or asked for) arrive on the same queue.

A message that fails (unreadable file, throttled dependency) is returned in ``batchItemFailures`` so
SQS redelivers only it, and moves it to the DLQ after the queue's ``maxReceiveCount``; the rest of
the batch is acknowledged, also when every message failed (no whole-invocation error). The document
record keeps the readable reason. Each message's work is fitted to the invocation's time left (the
context's): one that would start with too little is not started, and left for redelivery. The batch's
documents are written message by message and published together at the end, with one refresh (see
:mod:`ragline.services.ingest_batch`); a message whose document was refused at publish, or whose
publish the store failed for that document alone, fails alone. The loop
is written out rather than Powertools' ``BatchProcessor``, whose import (every event source's data
classes, asyncio) was a third of this function's cold start.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ragline import errors, snapstart, telemetry, wiring
from ragline.domain.generations import ReindexStep
from ragline.domain.sources import SyncStep
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
    c = container or wiring.container()
    deadline = WorkerDeadline.of_lambda(context)
    batch = c.ingest.batch(deadline)
    failures: list[dict[str, str]] = []
    for record in event["Records"]:
        logger.append_keys(message_id=record["messageId"])  # the correlation id of this message's lines
        step = ReindexStep.parse(record["body"])
        sync = SyncStep.parse(record["body"]) if step is None else None
        if step is None and sync is None:
            batch.notification(record["messageId"], record["body"])
            continue
        try:  # a reindex's or a data source sync's step (README); it queues its successor
            if step is not None:
                c.reindex.run(step, deadline)
            elif sync is not None:
                ran = c.source_sync.run(sync, deadline)
                logger.info("sync step", extra={"source": sync.source_id, "outcome": ran})
        except errors.RaglineError:
            logger.warning("step failed", exc_info=True)
            failures.append({"itemIdentifier": record["messageId"]})
    done: list[tuple[str, int]] = []
    for outcome in batch.finish():  # every message's documents published together, then reported
        logger.append_keys(message_id=outcome.key)
        if outcome.error is None:
            for result in outcome.results:
                done.append((result.outcome, result.chunks))
                extra = {"document": result.document_id, "outcome": result.outcome, "reason": result.reason}
                logger.info("processed", extra=extra)
            continue
        failures.append({"itemIdentifier": outcome.key})  # so SQS redelivers this message alone
        if isinstance(outcome.error, errors.WorkerOutOfTime):  # not the message's fault
            logger.info("left for redelivery", extra={"reason": outcome.error.message})
        else:
            logger.warning("message failed", exc_info=outcome.error)
    telemetry.record_ingest(done, failures=len(failures))
    return {"batchItemFailures": failures}


snapstart.prepare("ingest")  # a SnapStart init's warm-up and hooks; nothing otherwise
