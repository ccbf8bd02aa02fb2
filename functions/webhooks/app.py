"""SQS batch of Ragline events (the bus rule's target) → each POSTed, signed, to its tenant's webhooks.

A message whose delivery failed for any subscription is returned in ``batchItemFailures``: SQS
redelivers it after the queue's visibility timeout (the retry's backoff) and moves it to the delivery
DLQ after ``maxReceiveCount``. The subscriptions that took it already are not POSTed again (each
success is recorded: see :class:`~ragline.services.webhooks.WebhookDelivery`). The batch's records
are delivered at once, each to its webhooks at once.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from ragline import errors, snapstart, telemetry, wiring
from ragline.domain.events import Event

if TYPE_CHECKING:
    from ragline.services.webhooks import WebhookDelivery
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
    """Every record at once: one tenant's slow receivers never hold another tenant's events (a batch
    takes one POST's bound, not the sum of its records')."""
    delivery = (container or wiring.container()).webhook_delivery  # built before the threads
    records = event["Records"]
    with ThreadPoolExecutor(max_workers=max(len(records), 1), thread_name_prefix="record") as pool:
        delivered = list(pool.map(lambda record: _deliver(delivery, record), records))
    return {
        "batchItemFailures": [
            {"itemIdentifier": record["messageId"]}
            for record, ok in zip(records, delivered, strict=True)
            if not ok
        ]
    }


def _deliver(delivery: WebhookDelivery, record: dict[str, Any]) -> bool:
    """One message; ``False`` when SQS should bring it back."""
    logger.thread_safe_clear_keys()  # a pool thread's keys of its previous record
    logger.thread_safe_append_keys(message_id=record["messageId"])
    try:
        delivered = event_of(record["body"])
    except (ValueError, KeyError, TypeError):
        logger.error("not a Ragline event; dropped", exc_info=True)  # redelivery cannot fix it
        return True
    logger.thread_safe_append_keys(event_id=delivered.id, event_type=delivered.type)
    try:
        sent = delivery.deliver(delivered)
    except errors.RaglineError as exc:
        logger.warning("delivery failed; retried", extra={"failures": exc.details})
        return False
    logger.info("delivered", extra={"webhooks": sent})
    return True


snapstart.prepare("webhook_delivery")  # a SnapStart init's warm-up and hooks; nothing otherwise
