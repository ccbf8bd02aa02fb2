"""Documents of a namespace: list, inspect (status, error), add text, delete.

Document ids contain ``/`` (they are paths), so clients URL-encode them in the path.
"""

from __future__ import annotations

from functools import cache
from typing import Any
from urllib.parse import unquote

from aws_lambda_powertools import Logger
from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel, Field

from ragline import errors
from ragline.config import load_settings
from ragline.domain.documents import DocumentRecord
from ragline.domain.models import TenantScope
from ragline.domain.tenancy import Scope
from ragline.http import install_error_handlers
from ragline.services.tenancy import Principal
from ragline.wiring import Container

logger = Logger()
app = APIGatewayRestResolver()
install_error_handlers(app)


class AddText(BaseModel):
    filename: str = Field(min_length=1, max_length=300, description="Name with extension, e.g. notes.md")
    text: str = Field(min_length=1)
    document_id: str | None = Field(default=None, alias="documentId")


@cache
def container() -> Container:
    return Container(load_settings())


def scope(namespace: str, *needs: Scope) -> TenantScope:
    """The caller's scope for ``namespace``, after checking the key may do ``needs`` there."""
    caller = Principal.from_context(app.current_event.request_context.authorizer.raw_event)
    caller.require_any(needs, namespace)
    return TenantScope(tenant_id=caller.tenant_id, namespace_id=namespace)


def public(r: DocumentRecord) -> dict[str, Any]:
    """What a tenant sees of a record (no tenant id, no internal generation)."""
    return {
        "documentId": r.document_id,
        "status": r.status,
        "source": r.source,
        "chunkCount": r.chunk_count,
        "pages": r.pages,
        "contentHash": r.content_hash,
        "versionId": r.version_id,
        "error": {"code": r.error_code, "message": r.error_message} if r.error_code else None,
        "attempts": r.attempts,
        "updatedAt": r.updated_at.isoformat(),
    }


def find(s: TenantScope, document_id: str) -> DocumentRecord:
    c = container()
    c.registry.get_namespace(s.tenant_id, s.namespace_id)
    record = c.documents.get(s.tenant_id, s.namespace_id, unquote(document_id))
    if record is None:
        raise errors.NotFound(f"no document {unquote(document_id)!r}", document_id=unquote(document_id))
    return record


@app.get("/v1/namespaces/<namespace>/documents")
def list_documents(namespace: str) -> dict[str, Any]:
    s = scope(namespace, "ingest", "search")
    container().registry.get_namespace(s.tenant_id, s.namespace_id)
    return {"documents": [public(r) for r in container().documents.list(s.tenant_id, s.namespace_id)]}


@app.get("/v1/namespaces/<namespace>/documents/<document_id>")
def get_document(namespace: str, document_id: str) -> dict[str, Any]:
    return public(find(scope(namespace, "ingest", "search"), document_id))


@app.post("/v1/namespaces/<namespace>/documents")
def add_text(namespace: str) -> Response[str]:
    s = scope(namespace, "ingest")
    body = AddText.model_validate(app.current_event.json_body or {})
    result = container().ingest.ingest(
        s, filename=body.filename, data=body.text.encode(), document_id=body.document_id, source="api:"
    )
    return Response(201, "application/json", body=_json(public(find(s, result.document_id))))


@app.delete("/v1/namespaces/<namespace>/documents/<document_id>")
def delete_document(namespace: str, document_id: str) -> Response[str]:
    s = scope(namespace, "ingest")
    record = find(s, document_id)
    if record.source.startswith("s3://"):
        # Removing the object is the delete: its ObjectRemoved event removes the chunks, in order.
        container().objects.delete(record.source.split("/", 3)[3])
        return Response(
            202, "application/json", body=_json({"documentId": record.document_id, "status": "deleting"})
        )
    container().ingest.remove(s, record.document_id)
    return Response(200, "application/json", body=_json(public(find(s, document_id))))


def _json(value: dict[str, Any]) -> str:
    import json

    return json.dumps(value)


@logger.inject_lambda_context
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
