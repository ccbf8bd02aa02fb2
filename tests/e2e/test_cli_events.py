"""A CLI command delivers its webhook events before its process exits (issue 30): the outbox's relay
thread dies with the process, so a short command waits, bounded, for what it published."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragline.adapters.embedded.events import SqliteEventOutbox
from ragline.backends import EVENTS_FILE
from ragline.cli.app import app
from tests.support.webhook_receiver import Receiver

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]


def test_a_cli_ingest_delivers_its_event_before_the_process_exits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGLINE_WEBHOOK_LOOPBACK_HTTP", "1")
    home = tmp_path / "home"
    receiver = Receiver()
    receiver.delay["/hook"] = 0.5  # slower than the command's own end
    try:
        runner = CliRunner()
        assert runner.invoke(app, ["tenants", "create", "acme", "--home", str(home)]).exit_code == 0
        added = runner.invoke(
            app, ["webhooks", "add", receiver.url("/hook"), "--tenant", "acme", "--home", str(home)]
        )
        assert added.exit_code == 0, added.output
        receiver.secrets["/hook"] = json.loads(added.output)["secret"]
        doc = tmp_path / "guide.md"
        doc.write_text("# Guide\n\nThe frame warranty lasts ten years from the date of purchase.\n")

        command = [sys.executable, "-c", "from ragline.cli.app import main; main()", "ingest", str(doc),
                   "-n", "docs", "--create", "--tenant", "acme", "--home", str(home)]  # fmt: skip
        done = subprocess.run(
            command, cwd=ROOT, env=dict(os.environ), capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, done.stderr

        # When the process has exited, the receiver has taken the event and the outbox knows it
        accepted = receiver.accepted("/hook")
        assert [(d.body["type"], d.body["detail"]["document_id"]) for d in accepted] == [
            ("document.indexed", "guide.md")
        ]
        assert all(d.verified for d in accepted)
        assert SqliteEventOutbox(home / EVENTS_FILE).status(accepted[0].event_id) == ("delivered", 1)
    finally:
        receiver.close()


def test_a_cli_reindex_delivers_its_event_before_it_returns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGLINE_WEBHOOK_LOOPBACK_HTTP", "1")
    home = str(tmp_path / "home")
    receiver = Receiver()
    receiver.delay["/hook"] = 0.5
    try:
        runner = CliRunner()
        doc = tmp_path / "guide.md"
        doc.write_text("# Guide\n\nThe frame warranty lasts ten years from the date of purchase.\n")
        assert runner.invoke(app, ["tenants", "create", "acme", "--home", home]).exit_code == 0
        ingested = runner.invoke(
            app, ["ingest", str(doc), "-n", "docs", "--create", "--tenant", "acme", "--home", home]
        )
        assert ingested.exit_code == 0, ingested.output
        added = runner.invoke(app, ["webhooks", "add", receiver.url("/hook"), "--tenant", "acme",
                                    "--events", "namespace.reindexed", "--home", home])  # fmt: skip
        assert added.exit_code == 0, added.output
        receiver.secrets["/hook"] = json.loads(added.output)["secret"]

        reindex = ["namespaces", "reindex", "docs", "--tenant", "acme", "--chunk-tokens", "30"]
        done = runner.invoke(app, [*reindex, "--keep-old-for", "0", "--home", home])
        assert done.exit_code == 0, done.output

        [delivery] = receiver.accepted("/hook")
        assert delivery.body["type"] == "namespace.reindexed" and delivery.verified
        outbox = SqliteEventOutbox(Path(home) / EVENTS_FILE)
        assert outbox.status(delivery.event_id) == ("delivered", 1)  # answered before the command returned
    finally:
        receiver.close()
