"""The client's view of what a namespace holds: its documents (added as text, their metadata and
readers changed, deleted) and the data sources that sync documents into it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ragline.domain.api import DocumentDeletion, DocumentList, DocumentUpdate, DocumentView
from ragline.domain.source_api import SourceList, SourceView

from .transport import ApiTransport, _seg


class DocumentRequests(ApiTransport):
    """A namespace's documents and data sources."""

    # -- documents -----------------------------------------------------------------------------
    def list_documents(self, namespace: str) -> DocumentList:
        return self._call(DocumentList, "GET", f"/v1/namespaces/{_seg(namespace)}/documents")

    def get_document(self, namespace: str, document_id: str) -> DocumentView:
        path = f"/v1/namespaces/{_seg(namespace)}/documents/{_seg(document_id)}"
        return self._call(DocumentView, "GET", path)

    def add_text(
        self,
        namespace: str,
        filename: str,
        text: str,
        *,
        document_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        users: Sequence[str] | None = None,
        groups: Sequence[str] | None = None,
    ) -> DocumentView:
        """``metadata``: ``{key: value}`` (string, number, boolean, list of strings, ISO date);
        ``users``/``groups``: who may read it (none: everyone)."""
        body: dict[str, Any] = {"filename": filename, "text": text}
        if document_id is not None:
            body["documentId"] = document_id
        if metadata:
            body["metadata"] = dict(metadata)
        if users or groups:
            body["access"] = {"users": list(users or ()), "groups": list(groups or ())}
        return self._call(DocumentView, "POST", f"/v1/namespaces/{_seg(namespace)}/documents", body)

    def update_document(
        self,
        namespace: str,
        document_id: str,
        *,
        metadata: Mapping[str, Any] | None = None,
        users: Sequence[str] | None = None,
        groups: Sequence[str] | None = None,
    ) -> DocumentUpdate:
        """Replace a document's metadata (when given) and/or who may read it (when ``users`` or
        ``groups`` is given; both empty lists: everyone). Its content is not re-embedded."""
        body: dict[str, Any] = {}
        if metadata is not None:
            body["metadata"] = dict(metadata)
        if users is not None or groups is not None:
            body["access"] = {"users": list(users or ()), "groups": list(groups or ())}
        path = f"/v1/namespaces/{_seg(namespace)}/documents/{_seg(document_id)}"
        return self._call(DocumentUpdate, "PATCH", path, body)

    def delete_document(self, namespace: str, document_id: str) -> DocumentDeletion:
        path = f"/v1/namespaces/{_seg(namespace)}/documents/{_seg(document_id)}"
        return self._call(DocumentDeletion, "DELETE", path)

    # -- data sources --------------------------------------------------------------------------
    def create_source(
        self,
        namespace: str,
        kind: str,
        settings: Mapping[str, Any],
        *,
        name: str = "",
        credentials: Mapping[str, str] | None = None,
        every_minutes: int = 0,
    ) -> SourceView:
        """Add a data source to ``namespace`` (``kind``: ``web``, ``confluence`` or ``graph``, with that
        kind's ``settings``); its first sync is queued at once. ``credentials`` are stored in the
        deployment's secret store and never returned."""
        body: dict[str, Any] = {
            "kind": kind,
            "name": name,
            kind: dict(settings),
            "everyMinutes": every_minutes,
        }
        if credentials is not None:
            body["credentials"] = dict(credentials)
        return self._call(SourceView, "POST", f"/v1/namespaces/{_seg(namespace)}/sources", body)

    def list_sources(self, namespace: str) -> SourceList:
        return self._call(SourceList, "GET", f"/v1/namespaces/{_seg(namespace)}/sources")

    def get_source(self, namespace: str, source_id: str) -> SourceView:
        return self._call(SourceView, "GET", f"/v1/namespaces/{_seg(namespace)}/sources/{_seg(source_id)}")

    def update_source(
        self,
        namespace: str,
        source_id: str,
        *,
        name: str | None = None,
        settings: Mapping[str, Any] | None = None,
        credentials: Mapping[str, str] | None = None,
        every_minutes: int | None = None,
    ) -> SourceView:
        """Change what is given; ``settings`` replace the kind's settings whole."""
        current = self.get_source(namespace, source_id) if settings is not None else None
        body: dict[str, Any] = {}
        if name is not None:
            body["name"] = name
        if every_minutes is not None:
            body["everyMinutes"] = every_minutes
        if credentials is not None:
            body["credentials"] = dict(credentials)
        if current is not None and settings is not None:
            body[current.kind] = dict(settings)
        path = f"/v1/namespaces/{_seg(namespace)}/sources/{_seg(source_id)}"
        return self._call(SourceView, "PATCH", path, body)

    def sync_source(self, namespace: str, source_id: str, *, full: bool = False) -> SourceView:
        """Queue a sync now (one already running is the one asked for); poll ``get_source``."""
        path = f"/v1/namespaces/{_seg(namespace)}/sources/{_seg(source_id)}/sync"
        return self._call(SourceView, "POST", path, {"full": full})

    def delete_source(self, namespace: str, source_id: str) -> SourceView:
        """Remove the source: its credentials and schedule now, its documents in steps, then it."""
        return self._call(SourceView, "DELETE", f"/v1/namespaces/{_seg(namespace)}/sources/{_seg(source_id)}")
