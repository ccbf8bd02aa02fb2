"""Namespaces of the caller's tenant: read with any scope (filtered by the key's allow-list),
create, change and delete with ``admin`` — the service checks both."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.event_handler import Response

from ragline import snapstart, telemetry
from ragline.domain import api
from ragline.http import caller, resolve, rest_app, services

if TYPE_CHECKING:  # annotations only
    from aws_lambda_powertools.utilities.typing import LambdaContext

    from ragline.wiring import Container

logger = telemetry.handler_logger()
tracer = telemetry.handler_tracer()
app = rest_app(logger)


@app.get("/v1/namespaces")
def list_namespaces() -> api.NamespaceList:
    return services(app).namespaces.list(caller(app))


@app.post("/v1/namespaces", status_code=201)
def create_namespace(body: api.NewNamespace) -> Response[api.NamespaceView]:
    return Response(201, "application/json", services(app).namespaces.create(caller(app), body))


@app.get("/v1/namespaces/<namespace>")
def get_namespace(namespace: str) -> api.NamespaceView:
    return services(app).namespaces.get(caller(app), namespace)


@app.patch("/v1/namespaces/<namespace>")
def update_namespace(namespace: str, body: api.NamespacePatch) -> api.NamespaceView:
    return services(app).namespaces.update(caller(app), namespace, body)


@app.post("/v1/namespaces/<namespace>/reindex", status_code=202)
def reindex_namespace(namespace: str, body: api.ReindexRequest) -> Response[api.NamespaceView]:
    """Start rebuilding the namespace (another model or chunking); it serves as it is meanwhile."""
    return Response(202, "application/json", services(app).reindex.start(caller(app), namespace, body))


@app.delete("/v1/namespaces/<namespace>")
def delete_namespace(namespace: str) -> api.NamespaceDeleted:
    return services(app).namespaces.delete(caller(app), namespace)


@logger.inject_lambda_context
@tracer.capture_lambda_handler(capture_response=False)
def lambda_handler(
    event: dict[str, Any], context: LambdaContext, *, container: Container | None = None
) -> Any:
    return resolve(app, event, context, container)


snapstart.prepare("namespaces")  # a SnapStart init's warm-up and hooks; nothing otherwise
