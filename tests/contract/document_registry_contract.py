"""The DocumentRegistry contract: every backend subclasses :class:`DocumentRegistryContract`.

Given a ``registry`` over a fresh, empty store, every test here must pass unchanged. Each clause of
the :class:`~ragline.ports.DocumentRegistry` docstring has a test named after it.
"""

from __future__ import annotations

import threading
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragline.domain.documents import Claim, DocumentRecord, document_id_for, normalise_sequencer
from ragline.ports import DocumentRegistry

T, N = "acme", "docs"
S1, S2, S3 = "0055AED6DCD90281E5", "0055AED6DCD90281E6", "0055AED6DCD90281F0"
SHORT_OLDER = "0055AED6DCD9028"  # a prefix of S1: right-padded it sorts below S1
SHORT_NEWER = "0056"  # shorter but greater than all of the above


def claim(registry: DocumentRegistry, doc: str, sequencer: str, **kw: object) -> Claim:
    return registry.claim(T, N, doc, sequencer, **kw)  # type: ignore[arg-type]


class DocumentRegistryContract:
    """Subclasses provide the ``registry`` fixture."""

    @pytest.fixture
    def registry(self) -> DocumentRegistry:
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
                st.sampled_from([S1, S2, S3, SHORT_OLDER, SHORT_NEWER]),
                st.booleans(),
                st.sampled_from(["complete", "fail", "crash"]),
            ),
            min_size=1,
            max_size=10,
        )
    )
    def test_property_event_history_matches_reference_model(
        self, registry: DocumentRegistry, events: list[tuple[str, bool, str]]
    ) -> None:
        doc = f"doc-{uuid.uuid4().hex}"
        model: DocumentRecord | None = None
        for sequencer, deleting, outcome in events:
            seq = normalise_sequencer(sequencer)
            c = claim(registry, doc, sequencer, deleting=deleting)
            if model is None or seq > model.sequencer:
                expected, attempts = "claimed", 1
            elif seq == model.sequencer and model.status in ("processing", "deleting", "failed"):
                expected, attempts = "claimed", model.attempts + 1
            else:
                expected = "stale" if seq < model.sequencer else "duplicate"
            assert c.reason == expected and c.granted == (expected == "claimed")
            if not c.granted:
                assert c.record == model
                continue
            assert c.record.generation == (model.generation if model else 0) + 1
            assert c.record.attempts == attempts
            model = c.record
            if outcome == "complete":
                assert registry.complete(
                    model.model_copy(update={"status": "deleted" if deleting else "ready"})
                )
            elif outcome == "fail":
                assert registry.fail(model, "empty_document", "nothing to index")
            model = registry.get(T, N, doc)
        assert registry.get(T, N, doc) == model
