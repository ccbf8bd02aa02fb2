"""``ragline chat --continue``: each answer is a turn of a conversation the server keeps; a follow-up
continues the most recent one without repeating the question, offline, with no key."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ragline.config import Settings
from ragline.services.authentication import Principal
from ragline.wiring import Container
from tests.e2e.test_cli import SAMPLES, cli

pytestmark = pytest.mark.e2e


def test_a_follow_up_continues_the_most_recent_conversation(tmp_path: Path) -> None:
    home = tmp_path / "home"
    code, out = cli("ingest", str(SAMPLES), "-n", "northwind", "--create", "--home", str(home))
    assert code == 0, out
    # Nothing to continue yet: a clear refusal, nothing run
    code, out = cli("chat", "--continue", "And the frame?", "--home", str(home))
    assert code != 0 and "no conversation to continue" in out, out

    code, first = cli("chat", "How long is the warranty on the frame?", "--home", str(home))
    assert code == 0, first
    conversation = re.search(r"conversation (conv_[0-9a-f]+)", first)
    assert conversation, first
    code, second = cli("chat", "--continue", "And how do I claim it?", "--home", str(home))
    assert code == 0 and f"conversation {conversation.group(1)}" in second, second

    container = Container(Settings(home=home))
    try:
        kept = container.conversations.get(Principal.operator("local"), conversation.group(1))
    finally:
        container.close()
    questions = [t.messages[0]["content"] for t in kept.turns]
    assert questions == ["How long is the warranty on the frame?", "And how do I claim it?"]
    assert kept.usage.retrievals == sum(t.usage.retrievals for t in kept.turns) >= 2
