"""SQS batch of Ragline events (the bus rule's target) → each POSTed, signed, to its tenant's webhooks.

A message whose delivery failed for any subscription is returned in ``batchItemFailures``: SQS
redelivers it after the queue's visibility timeout (the retry's backoff) and moves it to the delivery
DLQ after ``maxReceiveCount``. The subscriptions that took it already are not POSTed again (each
success is recorded: see :class:`~ragline.services.webhooks.WebhookDelivery`).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ragline import errors, snapstart, telemetry, wiring
from ragline.domain.events import Event

if TYPE_CHECKING:
    from ragline.wiring import Container

logger = telemetry.handler_logger()
tracer = telemetry.handler_tracer()


def event_of(body: str) -> Event:
    """The message's event: the rule sends the EventBridge envelope's ``detail`` (or the envelope)."""
    data = json.loads(body)
    if isinstance(data, dict) and "detail-type" in data:
        data = data["detail"]
    return Event.from_dict(data)


@logger.inject_lambda_context
@tracer.capture_lambda_handler(capture_response=False)
def lambda_handler(
    event: dict[str, Any], context: Any, *, container: Container | None = None
) -> dict[str, list[dict[str, str]]]:
    c = container or wiring.container()
    failures: list[dict[str, str]] = []
    for record in event["Records"]:
        logger.append_keys(message_id=record["messageId"])
        try:
            delivered = event_of(record["body"])
        except (ValueError, KeyError, TypeError):
            logger.error("not a Ragline event; dropped", exc_info=True)  # redelivery cannot fix it
            continue
        logger.append_keys(event_id=delivered.id, event_type=delivered.type)
        try:
            sent = c.webhook_delivery.deliver(delivered)
        except errors.RaglineError as exc:
            logger.warning("delivery failed; retried", extra={"failures": exc.details})
            failures.append({"itemIdentifier": record["messageId"]})
            continue
        logger.info("delivered", extra={"webhooks": sent})
    return {"batchItemFailures": failures}


snapstart.prepare("webhook_delivery")  # a SnapStart init's warm-up and hooks; nothing otherwise
