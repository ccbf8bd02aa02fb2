"""Documents of a namespace: list, inspect (status, error, metadata, access), add text, change its
metadata or access, delete.

Document ids contain ``/`` (they are paths), so clients URL-encode them in the path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from aws_lambda_powertools.event_handler import Response

from ragline import snapstart, telemetry
from ragline.domain.api import (
    AddText,
    DocumentDeletion,
    DocumentLabels,
    DocumentList,
    DocumentUpdate,
    DocumentView,
)
from ragline.http import caller, resolve, rest_app, services

if TYPE_CHECKING:  # annotations only
    from aws_lambda_powertools.utilities.typing import LambdaContext

    from ragline.wiring import Container

logger = telemetry.handler_logger()
tracer = telemetry.handler_tracer()
app = rest_app(logger)
ROUTE = "/v1/namespaces/<namespace>/documents"


@app.get(ROUTE)
def list_documents(namespace: str) -> DocumentList:
    return services(app).document_service.list(caller(app), namespace)


@app.get(ROUTE + "/<document_id>")
def get_document(namespace: str, document_id: str) -> DocumentView:
    return services(app).document_service.get(caller(app), namespace, unquote(document_id))


@app.post(ROUTE, status_code=201)
def add_text(namespace: str, body: AddText) -> Response[DocumentView]:
    return Response(
        201, "application/json", services(app).document_service.add_text(caller(app), namespace, body)
    )


@app.patch(
    ROUTE + "/<document_id>",
    responses={
        200: {"description": "Re-labelled.", "content": {"application/json": {"model": DocumentUpdate}}},
        202: {
            "description": "An S3 document: its sidecar was written; its event re-labels the document.",
            "content": {"application/json": {"model": DocumentUpdate}},
        },
    },
)
def relabel_document(namespace: str, document_id: str, body: DocumentLabels) -> Response[DocumentUpdate]:
    done = services(app).document_service.relabel(caller(app), namespace, unquote(document_id), body)
    return Response(202 if done.status == "updating" else 200, "application/json", done)


@app.delete(
    ROUTE + "/<document_id>",
    responses={
        200: {"description": "Deleted.", "content": {"application/json": {"model": DocumentDeletion}}},
        202: {
            "description": "Deletion started (an S3-sourced document: its object is deleted, chunks follow).",
            "content": {"application/json": {"model": DocumentDeletion}},
        },
    },
)
def delete_document(namespace: str, document_id: str) -> Response[DocumentDeletion]:
    done = services(app).document_service.delete(caller(app), namespace, unquote(document_id))
    return Response(202 if done.status == "deleting" else 200, "application/json", done)


@logger.inject_lambda_context
@tracer.capture_lambda_handler(capture_response=False)
def lambda_handler(
    event: dict[str, Any], context: LambdaContext, *, container: Container | None = None
) -> Any:
    return resolve(app, event, context, container)


snapstart.prepare("document_service")  # a SnapStart init's warm-up and hooks; nothing otherwise
