"""Conversations the server keeps (issue 42), over real HTTP through ``ragline serve``'s app, on the
embedded backend and on DynamoDB: turn 2 sends only its own message and is answered from the kept
turns; a conversation is its user's alone; an earlier answer whose document was deleted or rewritten
since is not shown to the model again; a conversation's usage is the sum of its runs."""

from __future__ import annotations

from typing import Any

import pytest

from ragline.domain.conversations import WITHHELD
from ragline.domain.models import TenantScope
from ragline.services.authentication import Principal
from tests.support.run_world import World, world

pytestmark = pytest.mark.e2e
__all__ = ["world"]  # the fixture
FIRST = "When do rockets launch?"
SECOND = "And from which pad?"
ANSWER = 'Rockets launch at dawn <citation ids="rockets.txt#0"/>.'


def ask(world: World, content: str, conversation: str | None = None, **headers: str) -> Any:
    body: dict[str, Any] = {
        "messages": [{"role": "user", "content": content}],
        "namespaces": ["docs"],
        "stream": False,
    }
    if conversation is not None:
        body["conversationId"] = conversation
    return world.api.client.post("/v1/chat", json=body, headers={**world.headers(), **headers})


def shown(world: World) -> list[tuple[str, str]]:
    """What the model was shown on its last call (role, content), without the system prompt."""
    return [(m.role, m.content) for m in world.model.seen[-1] if m.role in ("user", "assistant")]


def test_turn_two_is_answered_from_the_kept_turns(world: World) -> None:
    alice = world.headers("users", user="alice")
    world.model.answer = ANSWER
    # Given alice's first turn
    first = ask(world, FIRST, **alice).json()
    conversation = first["conversationId"]
    assert conversation and first["exitReason"] == "answered"
    # When her second turn sends only its own message
    world.model.answer = "From pad 39."
    second = ask(world, SECOND, conversation, **alice).json()
    # Then the model saw the first turn's question and answer before it
    assert shown(world)[:3] == [("user", FIRST), ("assistant", first["answer"]), ("user", SECOND)]
    assert second["conversationId"] == conversation and second["answer"].startswith("From pad 39")
    # And the conversation reads back with both turns, its usage the sum of both runs
    kept = world.api.client.get(f"/v1/conversations/{conversation}", headers=alice).json()
    assert [t["runId"] for t in kept["turns"]] == [first["runId"], second["runId"]]
    assert [t["messages"] for t in kept["turns"]] == [
        [{"role": "user", "content": FIRST}],
        [{"role": "user", "content": SECOND}],
    ]
    assert kept["turnCount"] == 2 and not any(t["withheld"] for t in kept["turns"])
    for name in ("llmInputTokens", "llmOutputTokens", "retrievals"):
        assert kept["usage"][name] == first["usage"][name] + second["usage"][name] > 0
    listed = world.api.client.get("/v1/conversations", headers=alice).json()["conversations"]
    assert [(c["conversationId"], c["title"], c["turnCount"]) for c in listed] == [(conversation, FIRST, 2)]
    assert world.runs() == 2


def test_a_conversation_is_its_users_alone(world: World) -> None:
    alice = world.headers("users", user="alice")
    conversation = ask(world, FIRST, **alice).json()["conversationId"]
    calls = len(world.model.seen)
    # When anyone else names it: bob (the same key), a namespace-limited key, another tenant
    for headers in (world.headers("users", user="bob"), world.headers("limited"), world.headers("globex")):
        refused = ask(world, SECOND, conversation, **headers)
        # Then it is the same 404 as a conversation that does not exist, with nothing run or charged
        assert refused.status_code == 404, refused.text
        assert refused.json()["error"]["code"] == "conversation_not_found"
        for method in ("GET", "DELETE"):
            other = world.api.client.request(method, f"/v1/conversations/{conversation}", headers=headers)
            assert other.status_code == 404
        assert world.api.client.get("/v1/conversations", headers=headers).json()["conversations"] == []
    assert ask(world, SECOND, "conv_missing", **alice).status_code == 404
    assert len(world.model.seen) == calls and world.runs() == 1
    # While the tenant's unrestricted key sees it; and alice deletes it, for good
    operator = world.api.client.get("/v1/conversations", headers=world.headers()).json()["conversations"]
    assert [c["conversationId"] for c in operator] == [conversation]
    assert world.api.client.delete(f"/v1/conversations/{conversation}", headers=alice).status_code == 204
    assert world.api.client.get(f"/v1/conversations/{conversation}", headers=alice).status_code == 404
    assert ask(world, SECOND, conversation, **alice).status_code == 404


@pytest.mark.parametrize("change", ["deleted", "rewritten"])
def test_an_answer_whose_document_changed_is_not_quoted_again(world: World, change: str) -> None:
    world.model.answer = ANSWER
    conversation = ask(world, FIRST).json()["conversationId"]
    # When the document the first answer drew on is deleted or rewritten between the turns
    scope = TenantScope(tenant_id="acme", namespace_id="docs")
    if change == "deleted":
        world.c.document_service.delete(Principal.operator("acme"), "docs", "rockets.txt")
    else:
        world.c.ingest.ingest(
            scope, filename="rockets.txt", data=b"Launches moved to dusk.", document_id="rockets.txt"
        )
    world.model.answer = "I cannot say."
    ask(world, SECOND, conversation)
    # Then the model is shown the first question with its answer withheld, never the answer itself
    assert shown(world)[:3] == [("user", FIRST), ("assistant", WITHHELD), ("user", SECOND)]
    assert all("dawn" not in m.content for m in world.model.seen[-1])
    # And a reader of the conversation sees it withheld too
    turns = world.api.client.get(f"/v1/conversations/{conversation}", headers=world.headers()).json()["turns"]
    assert (turns[0]["answer"], turns[0]["withheld"]) == (WITHHELD, True)
    assert turns[1]["withheld"] is False


def test_a_bad_conversation_id_and_a_turn_ending_with_the_assistant_are_refused(world: World) -> None:
    assert ask(world, FIRST, "has spaces").status_code == 400
    conversation = ask(world, FIRST).json()["conversationId"]
    body = {
        "messages": [{"role": "assistant", "content": "hi"}],
        "conversationId": conversation,
        "stream": False,
    }
    refused = world.api.client.post("/v1/chat", json=body, headers=world.headers())
    assert refused.status_code == 400 and refused.json()["error"]["code"] == "invalid_request"
