"""Namespaces of the caller's tenant: read with any scope (filtered by the key's allow-list),
create, change and delete with ``admin`` — the service checks both. And a namespace's data sources
(``admin``, never for an end user): added, listed, changed, synced on request, removed with their
documents."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.event_handler import Response

from ragline import snapstart, telemetry
from ragline.domain import api, source_api
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


@app.get("/v1/namespaces/<namespace>/sources")
def list_sources(namespace: str) -> source_api.SourceList:
    return services(app).source_service.list(caller(app), namespace)


@app.post("/v1/namespaces/<namespace>/sources", status_code=201)
def create_source(namespace: str, body: source_api.NewSource) -> Response[source_api.SourceView]:
    """Add a data source; its first sync is queued at once (and then on its schedule)."""
    return Response(
        201, "application/json", services(app).source_service.create(caller(app), namespace, body)
    )


@app.get("/v1/namespaces/<namespace>/sources/<source_id>")
def get_source(namespace: str, source_id: str) -> source_api.SourceView:
    return services(app).source_service.get(caller(app), namespace, source_id)


@app.patch("/v1/namespaces/<namespace>/sources/<source_id>")
def update_source(namespace: str, source_id: str, body: source_api.SourcePatch) -> source_api.SourceView:
    return services(app).source_service.update(caller(app), namespace, source_id, body)


@app.post("/v1/namespaces/<namespace>/sources/<source_id>/sync", status_code=202)
def sync_source(
    namespace: str, source_id: str, body: source_api.SyncRequest
) -> Response[source_api.SourceView]:
    """Queue a sync now (a sync already running is the one asked for)."""
    view = services(app).source_service.sync(caller(app), namespace, source_id, body)
    return Response(202, "application/json", view)


@app.delete("/v1/namespaces/<namespace>/sources/<source_id>", status_code=202)
def delete_source(namespace: str, source_id: str) -> Response[source_api.SourceView]:
    """Remove the source: its credentials and schedule now, its documents in steps, then it."""
    view = services(app).source_service.delete(caller(app), namespace, source_id)
    return Response(202, "application/json", view)


@logger.inject_lambda_context
@tracer.capture_lambda_handler(capture_response=False)
def lambda_handler(
    event: dict[str, Any], context: LambdaContext, *, container: Container | None = None
) -> Any:
    return resolve(app, event, context, container)


snapstart.prepare("namespaces")  # a SnapStart init's warm-up and hooks; nothing otherwise
