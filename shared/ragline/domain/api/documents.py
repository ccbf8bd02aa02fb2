"""Documents: text added through the API, metadata and access changes, and what a tenant sees of
a document's record, its deletion and its update.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, ValidationInfo, field_validator

from ragline.domain.access import MAX_GROUPS
from ragline.domain.api.common import ApiRequest
from ragline.domain.api_base import ApiModel
from ragline.domain.document_metadata import MetadataInput, access_of
from ragline.domain.documents import DocumentRecord, DocumentStatus, check_document_id, shown_source


class DocumentAccess(ApiRequest):
    """Who may read a document: users and groups (none named: every user of the namespace)."""

    users: list[str] = Field(default_factory=list, max_length=MAX_GROUPS)
    groups: list[str] = Field(default_factory=list, max_length=MAX_GROUPS)


METADATA_DESCRIPTION = (
    "Document metadata, {key: value}: strings, numbers, booleans, lists of strings, and dates (ISO-8601,"
    " for keys the namespace declares as dates). Each key's type is fixed per namespace by the first"
    " document carrying it (or a declaration); at most 50 keys, 16 KiB."
)


class AddText(ApiRequest):
    filename: str = Field(min_length=1, max_length=300, description="Name with extension, e.g. notes.md")
    text: str = Field(min_length=1)
    document_id: str | None = Field(
        default=None,
        description="Defaults to the id derived from the filename; A-Z a-z 0-9 _ . - / ~, at most 240.",
    )
    metadata: dict[str, Any] = Field(default_factory=dict, description=METADATA_DESCRIPTION)
    access: DocumentAccess = Field(
        default_factory=DocumentAccess, description="Who may read it; default: everyone."
    )

    def metadata_input(self) -> MetadataInput:
        return MetadataInput(self.metadata, self.access.users, self.access.groups)

    @field_validator("document_id")
    @classmethod
    def _document_id(cls, value: str | None) -> str | None:
        return None if value is None else check_document_id(value)


class DocumentLabels(ApiRequest):
    """``PATCH /v1/namespaces/{ns}/documents/{id}``: a document's metadata and/or access, each replaced
    whole when present and kept when absent. The content is not re-read or re-embedded."""

    metadata: dict[str, Any] | None = Field(default=None, description=METADATA_DESCRIPTION)
    access: DocumentAccess | None = None

    def metadata_input(self, current: DocumentRecord) -> MetadataInput:
        users, groups = access_of(current.readers)
        if self.access is not None:
            users, groups = self.access.users, self.access.groups
        attributes = current.attributes if self.metadata is None else self.metadata
        return MetadataInput(attributes, users, groups)


class DocumentError(ApiModel):
    code: str
    message: str


class AccessView(ApiModel):
    users: list[str]
    groups: list[str]
    everyone: bool
    """No user or group named: every user of the namespace may read it."""


class DocumentView(ApiModel):
    """What a tenant sees of a record (no tenant id, no internal generation)."""

    document_id: str
    status: DocumentStatus
    source: str
    """The tenant's own name for the document (:func:`~ragline.domain.documents.shown_source`): an S3
    upload's path in the namespace, the API text's filename, a data source's URL."""
    metadata: dict[str, Any]
    """The served version's metadata."""
    access: AccessView | None
    """Who may read the served version (``null`` where the caller acts for an end user)."""
    chunk_count: int
    pages: int
    content_hash: str
    version_id: str
    error: DocumentError | None
    attempts: int
    updated_at: str
    serving: Literal["this_version", "previous_version", "nothing"]
    """What readers are served for the document now: this record's version (``ready``); the version
    before it, whole (a new one is being indexed, or failed for a reason outside the file — chunk and
    page counts and hash are still that version's); or nothing (never indexed, deleted, or refused)."""

    @field_validator("source")
    @classmethod
    def _shown(cls, source: str, info: ValidationInfo) -> str:
        """Every view of a record shows its source as the tenant's own name (a record of API text
        written before its source named the file shows its document id)."""
        return shown_source(source, str(info.data.get("document_id", "")))

    @classmethod
    def of(cls, r: DocumentRecord) -> DocumentView:
        serving: Literal["this_version", "previous_version", "nothing"] = "nothing"
        if r.serves:
            serving = "this_version" if r.status == "ready" else "previous_version"
        users, groups = access_of(r.readers)
        return cls(
            document_id=r.document_id,
            status=r.status,
            source=r.source,
            metadata=dict(r.attributes),
            access=AccessView(users=users, groups=groups, everyone=not r.readers),
            chunk_count=r.chunk_count,
            pages=r.pages,
            content_hash=r.content_hash,
            version_id=r.version_id,
            error=DocumentError(code=r.error_code, message=r.error_message) if r.error_code else None,
            attempts=r.attempts,
            updated_at=r.updated_at.isoformat(),
            serving=serving,
        )


class DocumentList(ApiModel):
    documents: list[DocumentView]


class DocumentDeletion(ApiModel):
    """``deleting``: the S3 object was removed and its event will remove the chunks (202);
    ``deleted``: an API document's chunks are gone (200)."""

    document_id: str
    status: Literal["deleting", "deleted"]
    document: DocumentView | None = None


class DocumentUpdate(ApiModel):
    """A change of a document's metadata or access. ``updated`` (200): an API or CLI document, its
    new labels served now; ``updating`` (202): an S3 document, whose metadata lives in its sidecar
    ``<key>.metadata.json`` — the sidecar was written, and its event re-labels the document."""

    document_id: str
    status: Literal["updating", "updated"]
    document: DocumentView
