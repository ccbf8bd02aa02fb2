"""Documents: their bytes (the object store) and their records, whose conditional claims order
every version's indexing.

Part of :mod:`ragline.ports` (which re-exports every port); the docstrings are the contracts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # annotations only: importing the ports must stay cheap (cold starts)
    from ragline.domain.documents import Claim, DocumentRecord


class ObjectStore(Protocol):
    """Documents as bytes under keys ``<tenant>/<namespace>/<path>``.

    Contract: a key is stored as exactly itself or refused with ``InvalidRequest`` — never rewritten
    into another key (so one tenant's key can never alias another's object).
    """

    def get(self, key: str, *, version_id: str = "", limit: int | None = None) -> bytes:
        """The exact bytes stored; ``NotFound`` when there is no object under ``key``.

        ``version_id``: that version of the object (``NotFound`` when it is gone); a store that keeps
        no versions serves its one object. ``limit``: an object longer than ``limit`` bytes is
        refused with ``DocumentTooLarge`` (naming the key) from its stored length, before its body is
        read, and no more than ``limit`` + 1 bytes are ever read (a body longer than its declared
        length is refused the same way)."""
        ...

    def put(self, key: str, data: bytes) -> None:
        """Store or replace the object."""
        ...

    def delete(self, key: str) -> None:
        """Remove the object; deleting a missing key is a no-op."""
        ...

    def purge(self, prefix: str) -> int:
        """Remove every object under the *folder* ``prefix`` — with every stored version, where the
        store keeps versions — returning how many went; an empty prefix is refused. Idempotent."""
        ...

    def list(self, prefix: str) -> list[str]:
        """Every key under the *folder* ``prefix`` (``t/ns`` and ``t/ns/`` alike, never ``t/ns2/…``),
        sorted; ``""`` lists everything."""
        ...


class DocumentRegistry(Protocol):
    """Document records and their ordering; every transition is a conditional write.

    Contract (the rule is :func:`ragline.domain.documents.claim_decision`):

    - ``claim`` takes an S3 event's ``sequencer`` (normalised on the way in, see
      :func:`~ragline.domain.documents.normalise_sequencer`) or ``None`` for a *local* write (API
      text, the CLI). One ordering covers both: a local write is granted always (it is made now,
      after everything stored); an S3 event is compared with the greatest S3 sequencer stored, never
      with a local write, and is granted when no record exists or when it is greater. The same S3
      sequencer is ``stale`` when a local write claimed after it, ``duplicate`` once ``ready`` or
      ``deleted``, ``busy`` while ``processing``/``deleting`` under a live lease (a concurrent copy
      of the event: it must not start the work), and granted otherwise (``queued``, ``failed``, or
      a lease that ran out: its worker died). An older sequencer is ``stale``.
    - A granted claim stores the S3 sequencer (a local write keeps the stored one) and its origin,
      sets status ``processing`` (``deleting`` when ``deleting=True``), increments ``generation``
      and ``attempts`` (attempts restart at 1 for any other event), clears the error, records
      source/version/etag/size and, when ``lease_seconds`` > 0, ``lease_until`` = the registry's
      clock + that long (0: no lease). Refused claims return the stored record unchanged.
    - ``sidecar`` (with ``sequencer=None``): the claim of an event of the document's metadata
      sidecar, with that sidecar key's sequencer. It is ordered like a local write against S3 events
      of the document, and like an S3 event against the sidecar's own events
      (``sidecar_sequencer``): a copy of a sidecar event already applied is ``duplicate``, an older
      one ``stale``, a copy under a live lease ``busy``; on a ``deleted`` document it is ``stale``.
    - A granted claim on a ``deleted`` document records the change its deletion was announced
      under in ``deleted_change`` (kept while claims after it are unsettled), so a claim that finds
      S3 still serving nothing settles as that deletion, not as a second one.
      Each granted claim gets its own generation, also under concurrent claims, and of concurrent
      copies of one event under a lease exactly one is granted.
    - ``complete`` and ``fail`` write only while the stored generation is still the record's; they
      return False when a newer claim took over (and then change nothing).
    - ``get`` returns None when absent; ``list`` returns a namespace's records ordered by id.
      Records stored by earlier versions read through
      :func:`~ragline.domain.documents.upgrade_stored` and order as above.
    """

    def claim(
        self,
        tenant_id: str,
        namespace_id: str,
        document_id: str,
        sequencer: str | None,
        *,
        deleting: bool = False,
        source: str = "",
        version_id: str = "",
        etag: str = "",
        size: int = 0,
        lease_seconds: float = 0.0,
        sidecar: str | None = None,
    ) -> Claim: ...

    def complete(self, record: DocumentRecord) -> bool:
        """Store ``record``'s final state (ready/deleted, counts, hash) if its generation still holds."""
        ...

    def fail(self, record: DocumentRecord, code: str, message: str) -> bool: ...

    def get(self, tenant_id: str, namespace_id: str, document_id: str) -> DocumentRecord | None: ...

    def list(self, tenant_id: str, namespace_id: str) -> list[DocumentRecord]: ...

    def purge_tenant(self, tenant_id: str) -> int:
        """Delete every record of the tenant, in every namespace it ever had; returns how many.
        Idempotent (a tenant's deletion)."""
        ...
