"""Runs that survive their client, over real HTTP through ``ragline serve``'s app (issue 42): every
streamed event carries its sequence number; a client that drops at any event boundary resumes with
``Last-Event-ID`` and gets exactly the rest; a background run ends with no client and announces
itself once; a cancelled run stops and is charged for what it spent. On the embedded backend and on
DynamoDB (moto server: the ledger, the run log and the conversations in the template's tables) —
the charge checked on the ledger each time."""

from __future__ import annotations

import json
import time

import pytest

from tests.support.run_world import QUESTION, World, stream, world

pytestmark = pytest.mark.e2e
__all__ = ["world"]  # the fixture


# -- resuming ---------------------------------------------------------------------------------------
def test_every_event_boundary_resumes_to_the_exact_rest(world: World) -> None:
    # Given a streamed run read to its end
    run_id, full = stream(world)
    assert [b["event"] for b in full[-2:]] == ["sources", "final"]
    # Then its events are numbered 1, 2, … as the SSE id
    assert [int(b["id"]) for b in full] == list(range(1, len(full) + 1))
    assert json.loads(full[-1]["data"])["runId"] == run_id
    # And a client that dropped after any of them gets exactly the rest, to the byte
    for k in range(len(full) + 1):
        assert world.log(run_id, after=k) == full[k:], k
    # And the run was charged once, however often it was read again
    assert world.runs() == 1


def test_a_stream_dropped_live_at_every_boundary_resumes_to_the_exact_rest(world: World) -> None:
    # Given a run of a known length (its log read whole)
    world.model.words = 12
    run_id, full = stream(world)
    count = len(full)
    # When a new run's stream is dropped after k events, for every k, as the run is still answering
    for k in range(1, count):
        dropped_id, head = stream(world, limit=k)
        rest = world.log(dropped_id, after=k)
        # Then it resumes to exactly the rest of that run: numbered on, ending with its own final event
        whole = head + rest
        assert [int(b["id"]) for b in whole] == list(range(1, len(whole) + 1)), k
        assert whole == world.log(dropped_id) and whole[-1]["event"] == "final", k
        assert json.loads(whole[-1]["data"])["runId"] == dropped_id and dropped_id != run_id
    # And every run was charged once, none twice for being read again
    assert world.runs() == count


def test_replaying_and_resuming_a_run_never_charges_it_again(world: World) -> None:
    key = {"idempotency-key": "replayed-run"}
    run_id, full = stream(world, **key)
    assert run_id == "replayed-run"
    for _ in range(3):  # the same key again: its recorded final event, flagged, not run
        again_id, again = stream(world, **key)
        assert again_id == run_id and len(again) == 1 and json.loads(again[0]["data"])["replayed"] is True
        assert "id" not in again[0]  # a replay is not the run's log
        assert world.log(run_id, after=2) == full[2:]
    assert world.runs() == 1


@pytest.mark.parametrize("drop_after", [1, 2, 7, 30])
def test_a_client_dropping_mid_run_resumes_the_live_tail(world: World, drop_after: int) -> None:
    # Given an answer that takes about a second and a half to stream
    world.model.words, world.model.pause = 40, 0.03
    # When the client drops after ``drop_after`` events, while the run is still answering
    run_id, head = stream(world, limit=drop_after)
    assert len(head) == drop_after
    # Then it resumes with Last-Event-ID, following the live tail to the end
    tail = world.log(run_id, after=drop_after)
    whole = head + tail
    assert [int(b["id"]) for b in whole] == list(range(1, len(whole) + 1))
    assert whole[-1]["event"] == "final" and json.loads(whole[-1]["data"])["exitReason"] == "answered"
    # And the run went on without the client: the model wrote every word; it was charged once
    assert world.model.produced == 40
    assert whole == world.log(run_id)
    assert world.wait_until(run_id, "completed")["status"] == "completed"
    assert world.runs() == 1


# -- background runs and cancelling ---------------------------------------------------------------
def test_a_background_run_ends_with_no_client_and_announces_itself_once(world: World) -> None:
    # When a run is asked for in the background
    response = world.api.client.post(
        "/v1/chat", json={**QUESTION, "background": True}, headers=world.headers()
    )
    # Then the answer is a 202 with its run id at once
    assert response.status_code == 202, response.text
    accepted = response.json()
    run_id = accepted["runId"]
    assert accepted == {"runId": run_id, "status": "queued", "events": f"/v1/runs/{run_id}/events"}
    assert response.headers["ragline-run-id"] == run_id
    # And the run ends with nobody reading, its result readable and its events replayable
    view = world.wait_until(run_id, "completed", "failed")
    assert view["status"] == "completed" and view["background"] is True
    assert view["result"]["exitReason"] == "answered" and view["result"]["answer"]
    log = world.log(run_id)
    assert log[-1]["event"] == "final" and json.loads(log[-1]["data"]) == view["result"]
    # And it was announced once, as run.completed
    ended = [e for e in world.announced.events if e.type.startswith("run.")]
    assert [(e.type, e.detail["run_id"]) for e in ended] == [("run.completed", run_id)]
    # And a redelivered message of it runs nothing and announces nothing again
    assert not world.c.background.work("acme", run_id, "{}")
    assert len([e for e in world.announced.events if e.type.startswith("run.")]) == 1
    assert world.runs() == 1


def test_a_background_run_refused_when_it_starts_fails_and_says_why(world: World) -> None:
    from ragline.domain.tenancy import Tenant

    # Given a tenant whose quota is spent by the time its background run starts
    world.c.registry.update_tenant(Tenant(tenant_id="acme", max_runs_per_period=1))
    stream(world)
    response = world.api.client.post(
        "/v1/chat", json={**QUESTION, "background": True}, headers=world.headers()
    )
    run_id = response.json()["runId"]
    # Then the run fails with the quota's error as its event, announced once as run.failed
    assert world.wait_until(run_id, "failed")["status"] == "failed"
    log = world.log(run_id)
    assert [b["event"] for b in log] == ["error"] and json.loads(log[0]["data"])["code"] == "quota_exceeded"
    assert [e.type for e in world.announced.events if e.type.startswith("run.")] == ["run.failed"]
    assert world.runs() == 1


def test_a_bad_background_request_is_refused_at_once(world: World) -> None:
    body = {**QUESTION, "namespaces": ["nowhere"], "background": True}
    response = world.api.client.post("/v1/chat", json=body, headers=world.headers())
    assert response.status_code == 404 and response.json()["error"]["code"] == "namespace_not_found"


@pytest.mark.parametrize("background", [True, False])
def test_a_cancelled_run_stops_and_is_charged_for_what_it_spent(world: World, background: bool) -> None:
    # Given a long answer (200 words, 20 ms apart)
    world.model.words, world.model.pause = 200, 0.02
    if background:
        response = world.api.client.post(
            "/v1/chat", json={**QUESTION, "background": True}, headers=world.headers()
        )
        run_id = response.json()["runId"]
    else:  # a streamed run whose client read a few events and left
        run_id, _ = stream(world, limit=3)
    while world.model.produced < 10:
        time.sleep(0.02)
    # When it is cancelled
    cancelled = world.api.client.post(f"/v1/runs/{run_id}/cancel", headers=world.headers())
    assert cancelled.status_code == 200, cancelled.text
    # Then it stops, ends "cancelled" and is charged once, for the search it ran
    view = world.wait_until(run_id, "cancelled")
    assert view["status"] == "cancelled" and view["result"]["exitReason"] == "cancelled"
    assert world.model.produced < 200
    assert view["result"]["usage"]["retrievals"] == 1 and world.runs() == 1
    # And cancelling again, or reading it again, changes nothing
    again = world.api.client.post(f"/v1/runs/{run_id}/cancel", headers=world.headers()).json()
    assert again["status"] == "cancelled" and world.runs() == 1
    if background:
        assert [e.type for e in world.announced.events if e.type.startswith("run.")] == ["run.cancelled"]


# -- privacy ----------------------------------------------------------------------------------------
def test_a_run_is_read_only_by_its_owner(world: World) -> None:
    # Given alice's run (a key asserting the end user)
    run_id, _ = stream(world, **world.headers("users", user="alice"))
    alice = world.headers("users", user="alice")
    routes = [("GET", f"/v1/runs/{run_id}"), ("GET", f"/v1/runs/{run_id}/events"),
              ("POST", f"/v1/runs/{run_id}/cancel")]  # fmt: skip
    for method, path in routes:
        assert world.api.client.request(method, path, headers=alice).status_code == 200
        # Then bob (the same key), a key limited to the namespace, another tenant's key: the same 404
        for headers in (
            world.headers("users", user="bob"),
            world.headers("limited"),
            world.headers("globex"),
        ):
            refused = world.api.client.request(method, path, headers=headers)
            assert refused.status_code == 404 and refused.json()["error"]["code"] == "run_not_found", path
        # and a key without the chat scope a 403
        assert world.api.client.request(method, path, headers=world.headers("search")).status_code == 403
        # while the tenant's unrestricted key (no end user) reads every run of its tenant
        assert world.api.client.request(method, path, headers=world.headers("operator")).status_code == 200
    # And a run id that does not exist is the same 404; a bad Last-Event-ID a 400
    assert world.api.client.get("/v1/runs/nope", headers=alice).status_code == 404
    bad = world.api.client.get(f"/v1/runs/{run_id}/events", headers={**alice, "last-event-id": "-1"})
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_request"
