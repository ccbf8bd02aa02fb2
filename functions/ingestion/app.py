"""SQS batch of S3 notifications → ingest or remove each object; failures are reported per message.

A message that fails (unreadable file, throttled dependency) is returned in ``batchItemFailures`` so
SQS redelivers only it, and moves it to the DLQ after the queue's ``maxReceiveCount``; the rest of
the batch is acknowledged. The document record keeps the readable reason.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from ragline.config import load_settings
from ragline.domain.s3_events import parse_notification, split_key
from ragline.services.ingest import IngestService, ObjectEvent, document_id_for
from ragline.wiring import Container

logger = Logger()
# Report failures per message even when every message failed (no whole-invocation error).
processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)


@cache
def ingest_service() -> IngestService:
    return Container(load_settings()).ingest


def handle_record(record: SQSRecord) -> None:
    notification = parse_notification(record.body)
    for s3 in notification.records:
        scope, path = split_key(s3.key)
        if s3.removed:
            result = ingest_service().remove(scope, document_id_for(path), s3.sequencer)
        else:
            obj = s3.s3.object
            result = ingest_service().ingest_object(
                ObjectEvent(
                    scope=scope,
                    key=s3.key,
                    path=path,
                    sequencer=s3.sequencer,
                    version_id=obj.version_id or "",
                    etag=obj.etag,
                    size=obj.size,
                    source=f"s3://{s3.s3.bucket.name}/{s3.key}",
                )
            )
        logger.info("processed", extra={"key": s3.key, "outcome": result.outcome, "chunks": result.chunks})


@logger.inject_lambda_context
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return process_partial_response(
        event=event, record_handler=handle_record, processor=processor, context=context
    )
