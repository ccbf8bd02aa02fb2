"""The DocumentRegistry contract: every backend subclasses :class:`DocumentRegistryContract`.

Given a ``registry`` over a fresh, empty store, every test here must pass unchanged. Each clause of
the :class:`~ragline.ports.DocumentRegistry` docstring has a test named after it.
"""

from __future__ import annotations

import threading
import uuid
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragline.domain.documents import Claim, DocumentRecord, document_id_for, normalise_sequencer
from ragline.ports import DocumentRegistry
from tests.support.clock import ManualClock

T, N = "acme", "docs"
S1, S2, S3 = "0055AED6DCD90281E5", "0055AED6DCD90281E6", "0055AED6DCD90281F0"
SHORT_OLDER = "0055AED6DCD9028"  # a prefix of S1: right-padded it sorts below S1
SHORT_NEWER = "0056"  # shorter but greater than all of the above
LEASE = 330.0
WALL_CLOCK = "18ED0A5B3C2D1E0F"
"""The "sequencer" a local write stored before issue 24 (``time_ns`` in hex): above every S3 one."""


def claim(registry: DocumentRegistry, doc: str, sequencer: str | None, **kw: object) -> Claim:
    return registry.claim(T, N, doc, sequencer, **kw)  # type: ignore[arg-type]


def run_concurrently(n: int, call: Any) -> list[Claim]:
    start = threading.Barrier(n)
    claims: list[Claim] = []
    failures: list[BaseException] = []

    def worker() -> None:
        try:
            start.wait()
            claims.append(call())
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    return claims


class DocumentRegistryContract:
    """Subclasses provide the ``registry`` fixture (on the ``clock`` fixture's time) and
    :meth:`store_as_before`."""

    @pytest.fixture
    def clock(self) -> ManualClock:
        return ManualClock()

    @pytest.fixture
    def registry(self, clock: ManualClock) -> DocumentRegistry:
        raise NotImplementedError

    def store_as_before(self, registry: DocumentRegistry, fields: dict[str, Any]) -> None:
        """Store a record the way the version before issue 24 did (no origin; the attempt counter
        where that backend kept it)."""
        raise NotImplementedError

    # -- claim --------------------------------------------------------------------------------
    def test_given_no_record_when_claimed_then_created_processing_at_generation_1(
        self, registry: DocumentRegistry
    ) -> None:
        c = claim(registry, "a.txt", S1, source="s3://b/acme/docs/a.txt", version_id="v1", etag="e1", size=42)
        assert c.granted and c.reason == "claimed"
        r = c.record
        assert (r.tenant_id, r.namespace_id, r.document_id) == (T, N, "a.txt")
        assert (r.status, r.generation, r.attempts) == ("processing", 1, 1)
        assert r.sequencer == normalise_sequencer(S1)
        assert (r.source, r.version_id, r.etag, r.size) == ("s3://b/acme/docs/a.txt", "v1", "e1", 42)
        assert registry.get(T, N, "a.txt") == r

    def test_the_longest_document_id_of_the_longest_key_round_trips(self, registry: DocumentRegistry) -> None:
        """Issue 11 #9: an 1,100-byte key broke DynamoDB's key limit; ids are capped at 240 bytes."""
        doc = document_id_for("d/" + "é" * 1100)
        c = claim(registry, doc, S1)
        assert c.granted and registry.complete(
            c.record.model_copy(update={"status": "ready", "indexed_generation": 1})
        )
        stored = registry.get(T, N, doc)
        assert stored is not None and stored.document_id == doc and stored.indexed_generation == 1

    def test_a_completed_versions_metadata_and_readers_round_trip_and_outlive_claims_and_failures(
        self, registry: DocumentRegistry
    ) -> None:
        """Issue 29 #1/#3: a record carries its served version's attributes and reader terms; a
        later claim or a failure keeps them (they change only with a completed version)."""
        attributes: dict[str, str | float | bool | list[str]] = {
            "year": 2024.0, "draft": False, "tags": ["a", "é"], "team": "hr", "on": "2024-05-01T00:00:00Z"
        }  # fmt: skip
        r = claim(registry, "a.txt", S1).record
        done = r.model_copy(
            update={"status": "ready", "attributes": attributes, "readers": ("g:hr", "u:ann")}
        )
        assert registry.complete(done)
        stored = registry.get(T, N, "a.txt")
        assert stored is not None
        assert (stored.attributes, stored.readers) == (attributes, ("g:hr", "u:ann"))
        again = claim(registry, "a.txt", S2).record
        assert (again.attributes, again.readers) == (attributes, ("g:hr", "u:ann"))
        assert registry.fail(again, "metadata_type_clash", "year is a number")
        failed = registry.get(T, N, "a.txt")
        assert failed is not None and (failed.attributes, failed.readers) == (attributes, ("g:hr", "u:ann"))
        assert registry.list(T, N)[0].attributes == attributes

    def test_given_processing_when_same_event_redelivered_then_granted_with_next_generation(
        self, registry: DocumentRegistry
    ) -> None:
        first = claim(registry, "a.txt", S1).record
        again = claim(registry, "a.txt", S1)
        assert again.granted and again.reason == "claimed"
        assert (again.record.generation, again.record.attempts) == (2, 2)
        assert again.record.created_at == first.created_at

    def test_given_ready_when_same_event_redelivered_then_duplicate_with_stored_record(
        self, registry: DocumentRegistry
    ) -> None:
        r = claim(registry, "a.txt", S1).record
        done = r.model_copy(update={"status": "ready", "chunk_count": 3, "pages": 2, "content_hash": "h"})
        assert registry.complete(done)
        dup = claim(registry, "a.txt", S1.lower())
        assert not dup.granted and dup.reason == "duplicate"
        assert dup.record == registry.get(T, N, "a.txt")
        assert (dup.record.status, dup.record.generation, dup.record.chunk_count) == ("ready", 1, 3)
        assert (dup.record.pages, dup.record.content_hash) == (2, "h")

    def test_given_newer_stored_when_older_event_arrives_then_stale_with_stored_record(
        self, registry: DocumentRegistry
    ) -> None:
        claim(registry, "a.txt", S2)
        stale = claim(registry, "a.txt", S1)
        assert not stale.granted and stale.reason == "stale"
        assert stale.record == registry.get(T, N, "a.txt")
        assert (stale.record.sequencer, stale.record.generation) == (normalise_sequencer(S2), 1)

    def test_given_stored_when_newer_event_arrives_then_granted_and_attempts_restart(
        self, registry: DocumentRegistry
    ) -> None:
        claim(registry, "a.txt", S1)
        r = claim(registry, "a.txt", S1).record
        assert registry.fail(r, "unreadable_document", "bad pdf")
        newer = claim(registry, "a.txt", S2, version_id="v2")
        assert newer.granted
        assert (newer.record.generation, newer.record.attempts, newer.record.status) == (3, 1, "processing")
        assert (newer.record.error_code, newer.record.error_message) == ("", "")
        assert newer.record.version_id == "v2"

    def test_sequencers_of_different_lengths_compare_after_normalisation(
        self, registry: DocumentRegistry
    ) -> None:
        assert claim(registry, "a.txt", S1).granted
        assert claim(registry, "a.txt", S2).granted  # same length, one greater
        assert claim(registry, "a.txt", SHORT_OLDER).reason == "stale"  # shorter prefix sorts below
        assert claim(registry, "a.txt", S2 + "00").granted  # same value padded: a redelivery
        assert claim(registry, "a.txt", S3).granted
        newest = claim(registry, "a.txt", SHORT_NEWER)  # shorter yet greater
        assert newest.granted and newest.record.sequencer == normalise_sequencer(SHORT_NEWER)
        assert claim(registry, "a.txt", S3).reason == "stale"

    def test_given_delete_event_when_claimed_then_deleting_and_completes_as_deleted(
        self, registry: DocumentRegistry
    ) -> None:
        claim(registry, "a.txt", S1)
        c = claim(registry, "a.txt", S2, deleting=True)
        assert c.granted and (c.record.status, c.record.generation) == ("deleting", 2)
        assert claim(registry, "a.txt", S2, deleting=True).granted  # a redelivered delete retries
        r = registry.get(T, N, "a.txt")
        assert r is not None and r.status == "deleting"
        assert registry.complete(r.model_copy(update={"status": "deleted", "chunk_count": 0}))
        gone = registry.get(T, N, "a.txt")
        assert gone is not None and (gone.status, gone.generation) == ("deleted", 3)
        assert claim(registry, "a.txt", S2, deleting=True).reason == "duplicate"
        assert claim(registry, "a.txt", S3).granted  # re-created by a later upload

    # -- one ordering for every source (issue 24 #2) -------------------------------------------
    def test_an_s3_upload_after_api_text_of_the_same_name_is_granted(
        self, registry: DocumentRegistry
    ) -> None:
        """Issue 24 #2: API text took a wall-clock sequencer above every S3 one; the upload was stale."""
        api = claim(registry, "a.txt", None, source="api:")
        assert api.granted and (api.record.origin, api.record.sequencer) == ("local", "")
        assert registry.complete(api.record.model_copy(update={"status": "ready"}))
        upload = claim(registry, "a.txt", S1, source="s3://b/acme/docs/a.txt")
        assert upload.granted and (upload.record.origin, upload.record.generation) == ("s3", 2)
        assert upload.record.sequencer == normalise_sequencer(S1) and upload.record.attempts == 1

    def test_a_local_write_is_granted_over_anything_and_keeps_the_s3_order(
        self, registry: DocumentRegistry
    ) -> None:
        claim(registry, "a.txt", S2, lease_seconds=LEASE)  # a live S3 claim
        api = claim(registry, "a.txt", None, source="api:", lease_seconds=LEASE)
        assert api.granted and (api.record.origin, api.record.generation) == ("local", 2)
        assert api.record.sequencer == normalise_sequencer(S2)
        again = claim(registry, "a.txt", None, source="api:")  # the text replaced: granted again
        assert again.granted and (again.record.generation, again.record.attempts) == (3, 1)
        assert claim(registry, "a.txt", S2).reason == "stale"  # its event came before the API text
        assert claim(registry, "a.txt", S1).reason == "stale"
        reupload = claim(registry, "a.txt", S3)  # a re-upload after the text was replaced
        assert reupload.granted and reupload.record.origin == "s3"
        assert claim(registry, "a.txt", None, deleting=True).record.status == "deleting"

    def test_records_stored_before_the_origin_existed_read_and_order_sensibly(
        self, registry: DocumentRegistry
    ) -> None:
        common = {"tenant_id": T, "namespace_id": N, "status": "ready", "generation": 4, "attempts": 1}
        api = common | {"document_id": "api.txt", "source": "api:", "sequencer": WALL_CLOCK}
        s3 = common | {"document_id": "s3.txt", "source": "s3://b/acme/docs/s3.txt", "sequencer": S2}
        for fields in (api, s3):
            self.store_as_before(registry, fields | {"sequencer": normalise_sequencer(fields["sequencer"])})
        old_api = registry.get(T, N, "api.txt")
        assert old_api is not None and (old_api.origin, old_api.sequencer, old_api.generation) == (
            "local",
            "",
            4,
        )
        old_s3 = registry.get(T, N, "s3.txt")
        assert old_s3 is not None and (old_s3.origin, old_s3.sequencer) == ("s3", normalise_sequencer(S2))
        assert [r.document_id for r in registry.list(T, N)] == ["api.txt", "s3.txt"]
        upload = claim(registry, "api.txt", S1)  # an upload after legacy API text: no longer stale
        assert upload.granted and upload.record.generation == 5
        assert claim(registry, "s3.txt", S2).reason == "duplicate"
        assert claim(registry, "s3.txt", S1).reason == "stale"
        assert claim(registry, "s3.txt", S3).record.generation == 5

    # -- the claim's lease (issue 24 #9) ------------------------------------------------------
    def test_a_copy_of_an_event_under_a_live_lease_is_busy_and_takes_over_after_it(
        self, registry: DocumentRegistry, clock: ManualClock
    ) -> None:
        first = claim(registry, "a.txt", S1, lease_seconds=LEASE)
        assert first.record.lease_until == clock.now + timedelta(seconds=LEASE)
        clock.advance(LEASE - 1)
        copy = claim(registry, "a.txt", S1, lease_seconds=LEASE)
        assert (copy.granted, copy.reason) == (False, "busy")
        assert copy.record == first.record == registry.get(T, N, "a.txt")  # nothing written
        clock.advance(1)  # the first worker's function has timed out: it is dead
        takeover = claim(registry, "a.txt", S1, lease_seconds=LEASE)
        assert takeover.granted and (takeover.record.generation, takeover.record.attempts) == (2, 2)
        assert not registry.complete(first.record.model_copy(update={"status": "ready"}))

    def test_a_lease_never_holds_back_a_newer_event_a_failure_or_a_finished_one(
        self, registry: DocumentRegistry
    ) -> None:
        held = claim(registry, "a.txt", S1, lease_seconds=LEASE).record
        assert claim(registry, "a.txt", S2, deleting=True, lease_seconds=LEASE).granted
        assert not registry.fail(held, "superseded", "late")
        newest = claim(registry, "a.txt", S3, lease_seconds=LEASE).record
        assert registry.fail(newest, "dependency_unavailable", "embedder down")
        assert claim(registry, "a.txt", S3, lease_seconds=LEASE).granted  # failed: retried at once
        done = registry.get(T, N, "a.txt")
        assert done is not None and registry.complete(done.model_copy(update={"status": "ready"}))
        assert claim(registry, "a.txt", S3, lease_seconds=LEASE).reason == "duplicate"

    def test_concurrent_copies_of_one_leased_event_grant_exactly_one(
        self, registry: DocumentRegistry
    ) -> None:
        claims = run_concurrently(8, lambda: claim(registry, "a.txt", S1, lease_seconds=LEASE))
        assert sorted(c.reason for c in claims) == ["busy"] * 7 + ["claimed"]
        stored = registry.get(T, N, "a.txt")
        assert stored is not None and (stored.generation, stored.attempts) == (1, 1)

    # -- sidecar events and deletions found again (issue 37 #5/#6) ------------------------------
    def test_a_sidecar_event_is_ordered_among_its_sidecars_events_and_is_one_change(
        self, registry: DocumentRegistry, clock: ManualClock
    ) -> None:
        upload = claim(registry, "a.txt", S2, source="s3://b/acme/docs/a.txt").record
        assert registry.complete(upload.model_copy(update={"status": "ready"}))
        first = claim(registry, "a.txt", None, sidecar=S1, lease_seconds=LEASE)
        assert first.granted and (first.record.origin, first.record.generation) == ("sidecar", 2)
        assert first.record.sequencer == normalise_sequencer(S2)  # the document's S3 order is kept
        assert first.record.event_id == f"sidecar-{normalise_sequencer(S1)}"
        copy = claim(registry, "a.txt", None, sidecar=S1, lease_seconds=LEASE)
        assert (copy.granted, copy.reason) == (False, "busy")  # a concurrent copy: no second change
        assert registry.complete(first.record.model_copy(update={"status": "ready"}))
        assert claim(registry, "a.txt", None, sidecar=S1).reason == "duplicate"
        assert claim(registry, "a.txt", None, sidecar=SHORT_OLDER).reason == "stale"
        newer = claim(registry, "a.txt", None, sidecar=S3)
        assert newer.granted and newer.record.attempts == 1
        assert newer.record.sidecar_sequencer == normalise_sequencer(S3)
        assert claim(registry, "a.txt", S3).granted  # the document's own order is not the sidecar's
        assert claim(registry, "a.txt", None, sidecar=S3).reason == "stale"  # overtaken by it
        stored = registry.get(T, N, "a.txt")
        assert stored is not None and stored.sidecar_sequencer == normalise_sequencer(S3)

    def test_a_sidecar_event_on_a_deleted_document_is_stale(self, registry: DocumentRegistry) -> None:
        gone = claim(registry, "a.txt", S1, deleting=True).record
        assert registry.complete(gone.model_copy(update={"status": "deleted"}))
        assert claim(registry, "a.txt", None, sidecar=S2).reason == "stale"

    def test_a_sidecar_event_on_text_written_locally_since_is_stale(self, registry: DocumentRegistry) -> None:
        # Given an S3 document, then text written under its name through the API (a local claim)
        upload = claim(registry, "a.txt", S1, source="s3://b/acme/docs/a.txt").record
        assert registry.complete(upload.model_copy(update={"status": "ready"}))
        text = claim(registry, "a.txt", None, source="api:").record
        assert registry.complete(text.model_copy(update={"status": "ready"}))
        # Then a sidecar event (read before the text was written, or sent after it) changes nothing
        assert claim(registry, "a.txt", None, sidecar=S2, source=upload.source).reason == "stale"
        # and the key's own next event takes the document back, after which its sidecar applies
        assert claim(registry, "a.txt", S3, source=upload.source).granted
        assert claim(registry, "a.txt", None, sidecar=S2, source=upload.source).granted

    def test_a_claim_on_a_deleted_document_carries_its_deletion_until_one_settles(
        self, registry: DocumentRegistry
    ) -> None:
        gone = claim(registry, "a.txt", S1, deleting=True).record
        assert gone.deleted_change == ""
        assert registry.complete(gone.model_copy(update={"status": "deleted"}))
        again = claim(registry, "a.txt", S2, deleting=True).record
        assert again.deleted_change == normalise_sequencer(S1) and again.change == ""
        crashed_over = claim(registry, "a.txt", S3, deleting=True).record  # S2's worker died
        assert crashed_over.deleted_change == normalise_sequencer(S1)
        kept = crashed_over.model_copy(update={"status": "deleted", "change": crashed_over.deleted_change})
        assert registry.complete(kept)
        stored = registry.get(T, N, "a.txt")
        assert stored is not None and stored.event_id == normalise_sequencer(S1)
        assert stored.sequencer == normalise_sequencer(S3)  # the S3 order moved on
        assert claim(registry, "a.txt", S3, deleting=True).reason == "duplicate"
        indexed = claim(registry, "a.txt", None).record  # a new version: its own change
        assert indexed.event_id == "local-4" and indexed.deleted_change == normalise_sequencer(S1)
        assert registry.complete(indexed.model_copy(update={"status": "ready"}))
        assert claim(registry, "a.txt", None, deleting=True).record.deleted_change == ""

    def test_concurrent_local_writes_each_get_their_own_generation(self, registry: DocumentRegistry) -> None:
        claims = run_concurrently(6, lambda: claim(registry, "a.txt", None, lease_seconds=LEASE))
        assert all(c.granted for c in claims)
        assert sorted(c.record.generation for c in claims) == list(range(1, 7))

    # -- complete / fail ----------------------------------------------------------------------
    def test_given_newer_claim_when_older_worker_completes_or_fails_then_false_and_unchanged(
        self, registry: DocumentRegistry
    ) -> None:
        old = claim(registry, "a.txt", S1).record
        new = claim(registry, "a.txt", S2).record
        assert not registry.complete(old.model_copy(update={"status": "ready", "chunk_count": 9}))
        assert not registry.fail(old, "unreadable_document", "late failure")
        assert registry.get(T, N, "a.txt") == new
        assert registry.complete(new.model_copy(update={"status": "ready"}))

    def test_given_failed_when_same_event_redelivered_then_granted_so_it_can_reach_the_dlq(
        self, registry: DocumentRegistry
    ) -> None:
        r = claim(registry, "a.txt", S1).record
        assert registry.fail(r, "dependency_unavailable", "embedder down")
        failed = registry.get(T, N, "a.txt")
        assert failed is not None and failed.status == "failed"
        assert (failed.error_code, failed.error_message) == ("dependency_unavailable", "embedder down")
        retry = claim(registry, "a.txt", S1)
        assert retry.granted
        assert (retry.record.generation, retry.record.attempts, retry.record.error_code) == (2, 2, "")

    def test_given_missing_record_when_completed_then_false_and_nothing_created(
        self, registry: DocumentRegistry
    ) -> None:
        ghost = DocumentRecord(tenant_id=T, namespace_id=N, document_id="ghost", generation=1, status="ready")
        assert not registry.complete(ghost)
        assert registry.get(T, N, "ghost") is None

    # -- get / list ---------------------------------------------------------------------------
    def test_get_returns_none_when_absent_and_list_is_ordered_and_scoped(
        self, registry: DocumentRegistry
    ) -> None:
        assert registry.get(T, N, "a.txt") is None and registry.list(T, N) == []
        for doc in ("b.md", "a.txt", "c/d.pdf", "B.md"):
            claim(registry, doc, S1)
        registry.claim("globex", N, "a0.txt", S1)
        registry.claim(T, "hr", "a1.txt", S1)
        assert [r.document_id for r in registry.list(T, N)] == ["B.md", "a.txt", "b.md", "c/d.pdf"]
        assert [r.document_id for r in registry.list("globex", N)] == ["a0.txt"]
        assert [r.document_id for r in registry.list(T, "hr")] == ["a1.txt"]
        assert registry.get("globex", N, "a.txt") is None

    def test_purging_a_tenant_removes_its_records_in_every_namespace_and_nothing_else(
        self, registry: DocumentRegistry
    ) -> None:
        for doc in ("a.txt", "b.md"):
            claim(registry, doc, S1)
        registry.claim(T, "hr", "c.txt", S1, deleting=True)
        registry.claim("globex", N, "a.txt", S1)
        assert registry.purge_tenant(T) == 3
        assert registry.list(T, N) == [] and registry.list(T, "hr") == []
        assert registry.get(T, N, "a.txt") is None
        assert [r.document_id for r in registry.list("globex", N)] == ["a.txt"]
        assert registry.purge_tenant(T) == 0
        assert registry.claim(T, N, "a.txt", S1).granted  # a fresh start, at generation 1
        assert registry.get(T, N, "a.txt").generation == 1  # type: ignore[union-attr]

    # -- concurrency --------------------------------------------------------------------------
    def test_concurrent_claims_of_one_event_each_get_their_own_generation(
        self, registry: DocumentRegistry
    ) -> None:
        start = threading.Barrier(8)
        claims: list[Claim] = []
        failures: list[BaseException] = []

        def worker() -> None:
            try:
                start.wait()
                claims.append(claim(registry, "a.txt", S1))
            except BaseException as exc:
                failures.append(exc)

        threads = [threading.Thread(target=worker) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert failures == []
        granted = [c.record.generation for c in claims if c.granted]
        assert len(granted) == 8  # same event, status processing: every redelivery is granted
        assert sorted(granted) == list(range(1, 9))
        stored = registry.get(T, N, "a.txt")
        assert stored is not None and (stored.generation, stored.attempts) == (len(granted), len(granted))

    # -- property: any event history behaves like the reference model ----------------------------
    # Every backend subclass runs this same method (a different "executor" to hypothesis, by design);
    # each example uses a fresh document id, so examples cannot leak into one another.
    @settings(
        max_examples=20,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.differing_executors],
    )
    @given(
        events=st.lists(
            st.tuples(
                st.sampled_from([S1, S2, S3, SHORT_OLDER, SHORT_NEWER, None]),  # None: a local write
                st.booleans(),
                st.sampled_from(["complete", "fail", "crash"]),
                st.sampled_from([0.0, LEASE]),  # time passing before the next event
            ),
            min_size=1,
            max_size=10,
        )
    )
    def test_property_event_history_matches_reference_model(
        self,
        registry: DocumentRegistry,
        clock: ManualClock,
        events: list[tuple[str | None, bool, str, float]],
    ) -> None:
        doc = f"doc-{uuid.uuid4().hex}"
        model: DocumentRecord | None = None
        for sequencer, deleting, outcome, later in events:
            seq = None if sequencer is None else normalise_sequencer(sequencer)
            c = claim(registry, doc, sequencer, deleting=deleting, lease_seconds=LEASE)
            if model is None or seq is None or seq > model.sequencer:
                expected = "claimed"
            elif seq < model.sequencer or model.origin == "local":
                expected = "stale"
            elif model.status in ("ready", "deleted"):
                expected = "duplicate"
            elif model.status in ("processing", "deleting") and clock.now < model.lease_until:  # type: ignore[operator]
                expected = "busy"
            else:
                expected = "claimed"
            assert c.reason == expected and c.granted == (expected == "claimed")
            clock.advance(later)
            if not c.granted:
                assert c.record == model
                continue
            same_event = model is not None and model.origin == "s3" and seq == model.sequencer
            assert c.record.generation == (model.generation if model else 0) + 1
            assert c.record.attempts == (model.attempts + 1 if same_event else 1)  # type: ignore[union-attr]
            assert c.record.sequencer == (seq if seq is not None else model.sequencer if model else "")
            model = c.record
            if outcome == "complete":
                assert registry.complete(
                    model.model_copy(update={"status": "deleted" if deleting else "ready"})
                )
            elif outcome == "fail":
                assert registry.fail(model, "empty_document", "nothing to index")
            model = registry.get(T, N, doc)
        assert registry.get(T, N, doc) == model
