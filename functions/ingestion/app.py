"""SQS batch of S3 notifications → ingest or remove each object; failures are reported per message.

A message that fails (unreadable file, throttled dependency) is returned in ``batchItemFailures`` so
SQS redelivers only it, and moves it to the DLQ after the queue's ``maxReceiveCount``; the rest of
the batch is acknowledged. The document record keeps the readable reason.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from ragline import telemetry, wiring
from ragline.wiring import Container

logger = telemetry.handler_logger()
# Report failures per message even when every message failed (no whole-invocation error).
processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)


@logger.inject_lambda_context
def lambda_handler(
    event: dict[str, Any], context: LambdaContext, container: Container | None = None
) -> PartialItemFailureResponse:
    ingest = (container or wiring.container()).ingest
    done: list[tuple[str, int]] = []

    def handle_record(record: SQSRecord) -> None:
        logger.append_keys(message_id=record.message_id)  # the correlation id of this message's lines
        for result in ingest.handle_notification(record.body):
            done.append((result.outcome, result.chunks))
            extra = {"document": result.document_id, "outcome": result.outcome, "reason": result.reason}
            logger.info("processed", extra=extra)

    response = process_partial_response(
        event=event, record_handler=handle_record, processor=processor, context=context
    )
    telemetry.record_ingest(done, failures=len(response.get("batchItemFailures", [])))
    return response
