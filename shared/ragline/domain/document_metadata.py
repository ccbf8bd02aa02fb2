"""A document's metadata and ACL as they arrive (API body, S3 sidecar, a folder's sidecar file) and as
its chunks carry them.

:class:`MetadataInput` is what a source says, unchecked: attribute values as JSON gave them, the
users and groups that may read. :class:`DocumentMetadata` is what a version carries once the
namespace's schema typed it (:func:`~ragline.domain.attributes.normalise`) and the principals were
checked (:func:`~ragline.domain.access.document_readers`).

The S3 source is a *sidecar*: ``<key>.metadata.json`` beside the object, in Bedrock Knowledge
Bases' shape (``{"metadataAttributes": {...}}``, plain values or Bedrock's typed ``{"value": {"type":
"NUMBER", "numberValue": 3}}`` form), plus Ragline's ``"access": {"users": [...], "groups": [...]}``.
A sidecar is never a document itself.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragline import errors
from ragline.domain.access import check_principals, document_readers
from ragline.domain.attributes import AttributeValue

SIDECAR_SUFFIX = ".metadata.json"
MAX_SIDECAR_BYTES = 64 * 1024
"""A sidecar is read up to this many bytes (the attributes themselves are bounded at 16 KiB as compact
JSON; the rest is room for Bedrock's typed form and for whitespace)."""
_TYPED_FIELDS = {
    "STRING": "stringValue",
    "NUMBER": "numberValue",
    "BOOLEAN": "booleanValue",
    "STRING_LIST": "stringListValue",
}


def is_sidecar(path: str) -> bool:
    """Whether an object path is a sidecar (``report.pdf.metadata.json``), not a document."""
    return path.endswith(SIDECAR_SUFFIX) and len(path) > len(SIDECAR_SUFFIX)


def sidecar_of(path: str) -> str:
    """The sidecar path of a document path (object key, or file path)."""
    return path + SIDECAR_SUFFIX


def document_of(sidecar_path: str) -> str:
    """The document path a sidecar path describes."""
    return sidecar_path[: -len(SIDECAR_SUFFIX)]


@dataclass(frozen=True)
class MetadataInput:
    """What a source says of a document, unchecked. ``None`` users/groups: none named (everyone)."""

    attributes: Mapping[str, object] = field(default_factory=dict)
    users: Sequence[object] = ()
    groups: Sequence[object] = ()

    def readers(self) -> tuple[str, ...]:
        """Checked reader terms (a bad principal is a 400 naming the field)."""
        return document_readers(check_principals(self.users, "user"), check_principals(self.groups, "group"))


@dataclass(frozen=True)
class DocumentMetadata:
    """A version's typed attributes and reader terms, as its record and every chunk carry them."""

    attributes: dict[str, AttributeValue] = field(default_factory=dict)
    readers: tuple[str, ...] = ()


NO_METADATA = MetadataInput()


def access_of(readers: Sequence[str]) -> tuple[list[str], list[str]]:
    """Reader terms back as ``(users, groups)``."""
    users = sorted(r[2:] for r in readers if r.startswith("u:"))
    groups = sorted(r[2:] for r in readers if r.startswith("g:"))
    return users, groups


def _invalid(message: str, **details: Any) -> errors.InvalidRequest:
    return errors.InvalidRequest(f"metadata sidecar: {message}", **details)


def _typed_value(key: str, value: Mapping[str, Any]) -> object:
    """Bedrock's ``{"type": "NUMBER", "numberValue": 3}`` as the plain value it stands for."""
    kind = value.get("type")
    name = _TYPED_FIELDS.get(kind) if isinstance(kind, str) else None
    if name is None or name not in value:
        raise _invalid(
            f"{key!r} has a typed value without a known type and its field"
            f" (types: {', '.join(_TYPED_FIELDS)})",
            key=key,
        )
    return value[name]


def _plain(key: str, value: object) -> object:
    if isinstance(value, Mapping):
        inner = value.get("value")
        if not isinstance(inner, Mapping):
            raise _invalid(f"{key!r} must be a value or {{'value': {{'type': ..., ...}}}}", key=key)
        return _typed_value(key, inner)
    return value


def parse_sidecar(data: bytes) -> MetadataInput:
    """A sidecar's bytes as the metadata it states; bad JSON or a bad shape is ``InvalidRequest``."""
    if len(data) > MAX_SIDECAR_BYTES:
        raise _invalid(f"larger than {MAX_SIDECAR_BYTES // 1024} KiB", limit=MAX_SIDECAR_BYTES)
    try:
        body = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _invalid(f"not valid JSON ({exc})") from None
    if not isinstance(body, dict) or set(body) - {"metadataAttributes", "access"}:
        raise _invalid('must be an object with "metadataAttributes" and optionally "access"')
    raw = body.get("metadataAttributes", {})
    if not isinstance(raw, dict):
        raise _invalid('"metadataAttributes" must be an object')
    access = body.get("access", {})
    if not isinstance(access, dict) or set(access) - {"users", "groups"}:
        raise _invalid('"access" must be an object with "users" and "groups" lists')
    users, groups = access.get("users", []), access.get("groups", [])
    if not isinstance(users, list) or not isinstance(groups, list):
        raise _invalid('"access" users and groups must be lists of strings')
    return MetadataInput({k: _plain(k, v) for k, v in raw.items()}, users, groups)


def sidecar_body(attributes: Mapping[str, AttributeValue], readers: Sequence[str]) -> bytes:
    """The sidecar Ragline writes for a document (the API's change of an S3 document's metadata)."""
    users, groups = access_of(readers)
    body: dict[str, Any] = {"metadataAttributes": dict(attributes)}
    if users or groups:
        body["access"] = {"users": users, "groups": groups}
    return json.dumps(body, ensure_ascii=False, indent=1).encode()
