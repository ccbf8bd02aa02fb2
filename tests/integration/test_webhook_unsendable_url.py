"""A webhook whose URL no request can be made to (saved before the URL rules refused it) fails as a
delivery does: the tenant's other webhooks still get the event, and the failure is retried and
dead-lettered like any other — never an exception that aborts the batch (the delivery function
would fail every message of every tenant in it)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ragline import errors
from ragline.adapters.embedded.webhooks import SqliteOnceMarks, SqliteWebhookStore
from ragline.adapters.webhook_http import HttpWebhookTransport
from ragline.domain.events import Event
from ragline.domain.webhooks import Subscription
from ragline.services.webhooks import WebhookDelivery
from tests.support.webhook_receiver import Receiver

pytestmark = pytest.mark.integration
EVENT = Event("evt_1", "document.indexed", "acme", datetime(2026, 3, 1, tzinfo=UTC), {"namespace": "docs"})


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.close()


@pytest.mark.parametrize(
    "saved",
    ["https://bücher.example/hook", "https://hooks.example.com/café", "https://hooks.example.com:99999/hook"],
)
def test_an_unsendable_url_does_not_keep_the_event_from_other_webhooks(
    tmp_path: Path, receiver: Receiver, saved: str
) -> None:
    # Given a tenant whose first webhook's URL cannot be sent to, and a second one that works
    store = SqliteWebhookStore(tmp_path / "events.sqlite")
    created = datetime(2026, 1, 1, tzinfo=UTC)
    store.put(Subscription("wh_a", "acme", saved, "whsec_a", created_at=created))
    store.put(
        Subscription("wh_b", "acme", receiver.url("/hook"), "whsec_b", created_at=created.replace(day=2))
    )
    receiver.secrets["/hook"] = "whsec_b"
    delivery = WebhookDelivery(
        store, SqliteOnceMarks(tmp_path / "events.sqlite"), HttpWebhookTransport(allow_loopback=True),
        loopback_http=True,
    )  # fmt: skip
    # When the event is delivered
    with pytest.raises(errors.DependencyUnavailable) as failed:
        delivery.deliver(EVENT)
    # Then the working webhook got it, signed, and the failure names the other one (to be retried)
    assert [d.event_id for d in receiver.accepted()] == ["evt_1"]
    assert receiver.deliveries[0].verified
    assert list(failed.value.details["failures"]) == ["wh_a"]
