"""A rotation that read the webhook just before a delete landed does not bring it back: the tenant
deleted it, so no new secret is issued and nothing is delivered to its URL again."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragline import errors
from ragline.adapters.embedded.webhooks import SqliteWebhookStore
from ragline.domain.webhook_api import NewWebhook
from ragline.domain.webhooks import Subscription
from ragline.services.authentication import Principal
from ragline.services.webhooks import WebhookService


class DeletedAfterRead(SqliteWebhookStore):
    """The tenant's ``DELETE`` lands between the rotation's read and its write."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.path = path

    def get(self, tenant_id: str, subscription_id: str) -> Subscription:
        found = super().get(tenant_id, subscription_id)
        SqliteWebhookStore(self.path).delete(tenant_id, subscription_id)  # another request's
        return found


def test_a_rotation_racing_a_delete_does_not_resurrect_the_webhook(tmp_path: Path) -> None:
    # Given a webhook
    store = DeletedAfterRead(tmp_path / "events.sqlite")
    service = WebhookService(store)
    admin = Principal.operator("acme")
    made = service.create(admin, NewWebhook(url="https://hooks.example.com/r"))
    # When its secret is rotated while it is being deleted
    with pytest.raises(errors.NotFound):
        service.rotate(admin, made.webhook_id)
    # Then it stays deleted
    assert service.list(admin).webhooks == []
