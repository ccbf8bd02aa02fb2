"""Documents of a namespace as the API sees them: list, inspect, add text, delete.

With an end user (``principal.user``), a document whose readers do not admit the user does not exist
for the request: absent from the listing, and the same 404 as a missing document on every route that
names it — nothing tells "exists, not yours" from "no such document" — and a view never shows it
who else may read a document (``access`` is left out). A key without a user context sees every
document and its ACL (issue 29's trust model).

The delete rule lives here: a document that came from S3 is deleted by removing its object and its
metadata sidecar (its ``ObjectRemoved`` event then removes the chunks, ordered with the uploads by the
event sequencer);
a document sent as text through the API has no object, so its chunks are removed at once.
"""

from __future__ import annotations

from ragline import errors
from ragline.domain.api import (
    AddText,
    DocumentDeletion,
    DocumentLabels,
    DocumentList,
    DocumentUpdate,
    DocumentView,
)
from ragline.domain.attributes import normalise
from ragline.domain.document_metadata import sidecar_body, sidecar_of
from ragline.domain.documents import API_SOURCE, DocumentRecord
from ragline.domain.models import TenantScope
from ragline.domain.s3_events import object_key_of
from ragline.domain.tenancy import Scope
from ragline.ports import DocumentRegistry, ObjectStore, TenantRegistry
from ragline.services.authentication import Principal
from ragline.services.ingest import IngestService, document_id_of
from ragline.services.namespaces import require_namespace
from ragline.services.read_views import may_see

READ: tuple[Scope, ...] = ("ingest", "search")


class DocumentService:
    def __init__(
        self,
        *,
        registry: TenantRegistry,
        documents: DocumentRegistry,
        objects: ObjectStore,
        ingest: IngestService,
    ) -> None:
        self._registry = registry
        self._documents = documents
        self._objects = objects
        self._ingest = ingest

    def list(self, principal: Principal, namespace: str) -> DocumentList:
        s = self._scope(principal, namespace, READ)
        records = self._documents.list(s.tenant_id, s.namespace_id)
        return DocumentList(
            documents=[self._view(principal, r) for r in records if may_see(principal, r.readers)]
        )

    def get(self, principal: Principal, namespace: str, document_id: str) -> DocumentView:
        s = self._scope(principal, namespace, READ)
        return self._view(principal, self._find(s, document_id, principal))

    def add_text(self, principal: Principal, namespace: str, body: AddText) -> DocumentView:
        """Add or replace a text document. Under an end user's context, replacing a document that
        user may not read is the 404 of a missing one, and changes nothing (a key that must act for
        a user cannot overwrite what that user cannot see)."""
        s = self._scope(principal, namespace, ("ingest",))
        if principal.user is not None:
            existing = self._documents.get(s.tenant_id, s.namespace_id, document_id_of_text(body))
            if existing is not None and existing.status != "deleted":
                self._find(s, existing.document_id, principal)
        result = self._ingest.ingest(
            s,
            filename=body.filename,
            data=body.text.encode(),
            document_id=body.document_id,
            source=API_SOURCE + body.filename,  # shown as the filename (see shown_source)
            metadata=body.metadata_input(),
        )
        return self._view(principal, self._find(s, result.document_id))

    def relabel(
        self, principal: Principal, namespace: str, document_id: str, body: DocumentLabels
    ) -> DocumentUpdate:
        """Change a document's metadata and/or access (see :class:`DocumentUpdate`). Everything is
        checked before anything is written: a refused change leaves the document and the namespace's
        schema as they were."""
        s = self._scope(principal, namespace, ("ingest",))
        record = self._find(s, document_id, principal)
        if record.status == "deleted":
            raise errors.NotFound(f"no document {document_id!r}", document_id=document_id)
        given = body.metadata_input(record)
        key = object_key_of(record.source)
        if key is None:
            self._ingest.relabel(s, record.document_id, given)
            return DocumentUpdate(
                document_id=record.document_id,
                status="updated",
                document=self._view(principal, self._find(s, record.document_id)),
            )
        # An S3 document's metadata is its sidecar's: write it (checked now against the schema, so a
        # clash is this request's 409); its event re-labels the document as any sidecar change does.
        readers = given.readers()
        schema = require_namespace(self._registry, s.tenant_id, s.namespace_id).settings.metadata_schema
        attributes, _ = normalise(given.attributes, schema)
        self._objects.put(sidecar_of(key), sidecar_body(attributes, readers))
        return DocumentUpdate(
            document_id=record.document_id, status="updating", document=self._view(principal, record)
        )

    def delete(self, principal: Principal, namespace: str, document_id: str) -> DocumentDeletion:
        s = self._scope(principal, namespace, ("ingest",))
        record = self._find(s, document_id, principal)
        if record.status == "deleted":  # again: no new version, no S3 delete marker, no event
            return DocumentDeletion(
                document_id=record.document_id, status="deleted", document=self._view(principal, record)
            )
        key = object_key_of(record.source)
        if key is not None:
            self._objects.delete(key)
            self._objects.delete(sidecar_of(key))  # its metadata goes with it (a no-op when none)
            return DocumentDeletion(document_id=record.document_id, status="deleting")
        self._ingest.remove(s, record.document_id)
        gone = self._find(s, record.document_id)
        return DocumentDeletion(
            document_id=gone.document_id, status="deleted", document=self._view(principal, gone)
        )

    def _scope(self, principal: Principal, namespace: str, needs: tuple[Scope, ...]) -> TenantScope:
        principal.require_any(needs, namespace)
        require_namespace(self._registry, principal.tenant_id, namespace)
        return TenantScope(tenant_id=principal.tenant_id, namespace_id=namespace)

    @staticmethod
    def _view(principal: Principal, record: DocumentRecord) -> DocumentView:
        """The record as the caller sees it: an end user sees a document's metadata, never who else
        may read it (the SaaS's own keys see the whole ACL)."""
        view = DocumentView.of(record)
        return view if principal.user is None else view.model_copy(update={"access": None})

    def _find(self, s: TenantScope, document_id: str, principal: Principal | None = None) -> DocumentRecord:
        """The record, or NotFound — also when ``principal``'s user may not read it (one 404 for both)."""
        record = self._documents.get(s.tenant_id, s.namespace_id, document_id)
        if record is None or (principal is not None and not may_see(principal, record.readers)):
            raise errors.NotFound(f"no document {document_id!r}", document_id=document_id)
        return record


def document_id_of_text(body: AddText) -> str:
    """The id a text document is stored under (as :meth:`IngestService.ingest` derives it)."""
    return body.document_id or document_id_of(body.filename)
