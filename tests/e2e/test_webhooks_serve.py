"""``ragline serve`` delivers webhooks too: the Python client subscribes a receiver on 127.0.0.1
(allowed by ``RAGLINE_WEBHOOK_LOOPBACK_HTTP``), adds and deletes a document over HTTP, and the
receiver gets both events signed with the secret the creation returned — from the outbox's relay."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn

from ragline.cli.serve import build_app
from ragline.client import RaglineClient
from ragline.config import Settings
from ragline.wiring import Container
from tests.support.fakes import BowEmbedder
from tests.support.webhook_receiver import Receiver

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).parents[2]


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, str]]:
    settings = Settings(home=tmp_path, webhook_loopback_http=True)
    container = Container(settings, embedder=BowEmbedder(), tokenizer=BowEmbedder())
    container.tenancy.create_tenant("acme")
    admin, _ = container.tenancy.create_key("acme", scopes=["chat", "search", "ingest", "admin"])
    app = build_app(ROOT / "functions", "acme", container, api_keys=True)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}", admin
    server.should_exit = True
    thread.join(timeout=10)
    container.close()


def wait_for(receiver: Receiver, count: int, seconds: float = 30.0) -> None:
    """Until the relay thread delivered ``count`` events (bounded: a stuck relay fails the test)."""
    end = time.monotonic() + seconds
    while len(receiver.accepted()) < count and time.monotonic() < end:
        time.sleep(0.05)


def test_the_local_server_delivers_signed_webhooks(served: tuple[str, str]) -> None:
    url, admin = served
    receiver = Receiver()
    try:
        with RaglineClient(url, admin) as rl:
            made = rl.create_webhook(
                receiver.url("/hook"), event_types=["document.indexed", "document.deleted"]
            )
            receiver.secrets["/hook"] = made.secret
            assert [w.webhook_id for w in rl.list_webhooks().webhooks] == [made.webhook_id]
            rl.create_namespace("docs")
            rl.add_text("docs", "guide.md", "The frame warranty lasts ten years.")
            rl.delete_document("docs", "guide.md")
            wait_for(receiver, 2)
            assert rl.get_webhook(made.webhook_id).url == receiver.url("/hook")
            rotated = rl.rotate_webhook_secret(made.webhook_id)
            assert rotated.secret != made.secret
            assert rl.delete_webhook(made.webhook_id).webhook_id == made.webhook_id
    finally:
        receiver.close()
    kinds = [d.body["type"] for d in receiver.accepted()]
    assert kinds == ["document.indexed", "document.deleted"]
    assert all(d.verified for d in receiver.deliveries)
