"""The API's OpenAPI 3.1 document, generated from the code that serves it — never hand-written.

The REST routes come from the handlers themselves: each ``functions/<name>/app.py`` is a Powertools
resolver whose typed routes (pydantic request and response models) Powertools turns into paths and
schemas. The chat route is an ASGI app, so its operation is built here from the same models it parses
and streams (``ChatRequest``; the SSE events; ``ChatResponse`` for ``stream: false``). On top: the one
error shape for every error status the edge can answer (:data:`ragline.http.STATUS_BY_ERROR`, 401 from
the authorizer, 500), the bearer API key, and the ``Idempotency-Key`` header of the metered routes.
``make openapi`` writes it to ``docs/openapi.json``; a test fails when that file is stale.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, TypeAdapter

from ragline.agents.events import ChatResponse, RunAccepted, RunEvent, RunView
from ragline.cli.handlers import REST_ROUTES, load_function
from ragline.domain.api import ChatRequest, ErrorBody
from ragline.domain.conversation_api import ConversationList, ConversationView
from ragline.domain.evaluations import EvaluationList, EvaluationReport, EvaluationRequest, EvaluationView
from ragline.http import MAX_IDEMPOTENCY_KEY, STATUS_BY_ERROR

TITLE = "Ragline API"
VERSION = "1"
METERED = {
    ("post", "/v1/chat"),
    ("post", "/v1/namespaces/{namespace}/search"),
    ("post", "/v1/hosting-search"),
}
"""Operations that start a charged run and take an ``Idempotency-Key``."""
ERROR_STATUSES = sorted({*STATUS_BY_ERROR.values(), 401, 500})
REF = "#/components/schemas/"


def build_openapi(functions: Path) -> dict[str, Any]:
    paths: dict[str, Any] = {}
    schemas: dict[str, Any] = {}
    for name in REST_ROUTES:
        app = load_function(functions, name).app
        part = json.loads(app.get_openapi_json_schema(title=TITLE, version=VERSION))
        for path, item in part["paths"].items():
            paths.setdefault(path, {}).update(item)
        schemas.update(part.get("components", {}).get("schemas", {}))
    paths["/v1/chat"] = {"post": _chat_operation(schemas)}
    paths.update(_runs_operations(schemas))
    paths.update(_evaluation_operations(schemas))
    for name in ("HTTPValidationError", "ValidationError", "ResponseValidationError"):
        schemas.pop(name, None)  # Powertools' 422 shape: this API answers the one error shape instead
    _add(schemas, ErrorBody)
    for path, item in paths.items():
        for method, operation in item.items():
            _finish(method, path, operation)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": TITLE,
            "version": VERSION,
            "description": "Multi-tenant agentic retrieval: chat with cited sources, search, hosting search,"
            " documents and administration. Every body is camelCase; unknown fields are refused.",
        },
        "servers": [{"url": "/"}],
        "security": [{"apiKey": []}, {"identityToken": []}],
        "paths": dict(sorted(paths.items())),
        "components": {
            "schemas": dict(sorted(schemas.items())),
            "securitySchemes": {
                "apiKey": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "A Ragline API key (`rl_…`), as `Authorization: Bearer <key>`.",
                },
                "identityToken": {
                    "type": "http",
                    "scheme": "bearer",
                    "bearerFormat": "JWT",
                    "description": "A token of the tenant's own identity provider (PUT"
                    " /v1/tenant/identity-provider), as `Authorization: Bearer <JWT>`: the request acts"
                    " for the user it names, with the provider's scopes (chat, search) and namespaces.",
                },
            },
        },
    }


def _add(schemas: dict[str, Any], model: type[BaseModel]) -> dict[str, str]:
    """``model``'s JSON schema (and its nested models) among the components; a ``$ref`` to it."""
    schema = model.model_json_schema(by_alias=True, ref_template=REF + "{model}", mode="serialization")
    schemas.update(schema.pop("$defs", {}))
    schemas[model.__name__] = schema
    return {"$ref": REF + model.__name__}


def _chat_operation(schemas: dict[str, Any]) -> dict[str, Any]:
    request = ChatRequest.model_json_schema(by_alias=True, ref_template=REF + "{model}", mode="validation")
    schemas.update(request.pop("$defs", {}))
    schemas["ChatRequest"] = request
    events = TypeAdapter(RunEvent).json_schema(
        by_alias=True, ref_template=REF + "{model}", mode="serialization"
    )
    schemas.update(events.pop("$defs", {}))
    schemas["RunEvent"] = {**events, "title": "RunEvent", "description": "One Server-Sent Event's `data`."}
    schemas["ChatEvent"] = {  # (OpenAPI 3.1: a text/event-stream schema describes each event)
        "title": "ChatEvent",
        "description": "One Server-Sent Event: its `event` name is the `type` of its JSON `data`.",
        "type": "object",
        "required": ["event", "data"],
        "properties": {
            "id": {
                "type": "string",
                "description": "The event's sequence number in its run: send it back as `Last-Event-ID` to"
                " `GET /v1/runs/{runId}/events` to resume after it (absent on a replay's one event).",
            },
            "event": {"type": "string"},
            "data": {
                "type": "string",
                "contentMediaType": "application/json",
                "contentSchema": {"$ref": REF + "RunEvent"},
            },
        },
    }
    return {
        "summary": "Chat with the documents: an agent retrieves, answers and cites",
        "operationId": "chat",
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": {"$ref": REF + "ChatRequest"}}},
        },
        "responses": {
            "200": {
                "description": "`stream: true` (default): Server-Sent Events, each `event: <type>` with the"
                " event as JSON `data`, ending with `final`. `stream: false`: the whole run as one body.",
                "headers": {"Ragline-Run-Id": RUN_ID},
                "content": {
                    "text/event-stream": {"schema": {"$ref": REF + "ChatEvent"}},
                    "application/json": {"schema": _add(schemas, ChatResponse)},
                },
            },
            "202": {
                "description": "`background: true`: the run is queued and goes on without the client; read"
                " it at `/v1/runs/{runId}` and its events at `/v1/runs/{runId}/events`.",
                "headers": {"Ragline-Run-Id": RUN_ID},
                "content": {"application/json": {"schema": _add(schemas, RunAccepted)}},
            },
        },
    }


RUN_ID = {"description": "The run's id (its events' run).", "schema": {"type": "string"}}
RUN_PARAMETER = {"name": "run_id", "in": "path", "required": True, "schema": {"type": "string"}}
CONVERSATION_PARAMETER = {
    "name": "conversation_id", "in": "path", "required": True, "schema": {"type": "string"},
}  # fmt: skip


def _json(schemas: dict[str, Any], model: type[BaseModel], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": _add(schemas, model)}}}


def _runs_operations(schemas: dict[str, Any]) -> dict[str, Any]:
    """The chat function's other routes: runs (read, resume, cancel) and conversations."""
    resume = [
        RUN_PARAMETER,
        {"name": "Last-Event-ID", "in": "header", "required": False,
         "schema": {"type": "integer", "minimum": 0},
         "description": "Resume after this event (the `id` of the last event received); 0 or absent: from"
                        " the start."},
        {"name": "after", "in": "query", "required": False, "schema": {"type": "integer", "minimum": 0},
         "description": "The same as `Last-Event-ID`, for clients that cannot set the header."},
    ]  # fmt: skip
    return {
        "/v1/runs/{run_id}": {"get": {
            "summary": "Where a run stands; its final event once it ended", "operationId": "getRun",
            "parameters": [RUN_PARAMETER],
            "responses": {"200": _json(schemas, RunView, "The run.")},
        }},
        "/v1/runs/{run_id}/events": {"get": {
            "summary": "A run's events after Last-Event-ID, then its live tail until it ends",
            "operationId": "runEvents",
            "parameters": resume,
            "responses": {"200": {
                "description": "Server-Sent Events, each with its `id`, exactly those after `Last-Event-ID`.",
                "content": {"text/event-stream": {"schema": {"$ref": REF + "ChatEvent"}}},
            }},
        }},
        "/v1/runs/{run_id}/cancel": {"post": {
            "summary": "Stop a run: it ends `cancelled`, charged for what it spent",
            "operationId": "cancelRun",
            "parameters": [RUN_PARAMETER],
            "responses": {"200": _json(schemas, RunView, "The run as it stands.")},
        }},
        "/v1/conversations": {"get": {
            "summary": "The caller's conversations, most recent first", "operationId": "listConversations",
            "responses": {"200": _json(schemas, ConversationList, "The conversations.")},
        }},
        "/v1/conversations/{conversation_id}": {
            "get": {
                "summary": "A conversation's turns (answers whose documents changed since are withheld)",
                "operationId": "getConversation",
                "parameters": [CONVERSATION_PARAMETER],
                "responses": {"200": _json(schemas, ConversationView, "The conversation.")},
            },
            "delete": {
                "summary": "Delete a conversation", "operationId": "deleteConversation",
                "parameters": [CONVERSATION_PARAMETER],
                "responses": {"204": {"description": "Deleted."}},
            },
        },
    }  # fmt: skip


EVALUATION_PARAMETER = {
    "name": "evaluation_id", "in": "path", "required": True, "schema": {"type": "string"},
}  # fmt: skip


def _request(schemas: dict[str, Any], model: type[BaseModel]) -> dict[str, Any]:
    """A request body's schema (validation mode: what a client sends) among the components."""
    schema = model.model_json_schema(by_alias=True, ref_template=REF + "{model}", mode="validation")
    schemas.update(schema.pop("$defs", {}))
    schemas[model.__name__] = schema
    return {"required": True, "content": {"application/json": {"schema": {"$ref": REF + model.__name__}}}}


def _evaluation_operations(schemas: dict[str, Any]) -> dict[str, Any]:
    """Answer evaluation jobs (the chat function's): submit, list, read, report."""
    return {
        "/v1/evaluations": {
            "post": {
                "summary": "Run a question set through chat and score every answer (a job)",
                "operationId": "createEvaluation",
                "requestBody": _request(schemas, EvaluationRequest),
                "responses": {"202": _json(schemas, EvaluationView, "The job, queued.")},
            },
            "get": {
                "summary": "The caller's evaluation jobs, newest first", "operationId": "listEvaluations",
                "responses": {"200": _json(schemas, EvaluationList, "The jobs.")},
            },
        },
        "/v1/evaluations/{evaluation_id}": {"get": {
            "summary": "Where an evaluation job stands; its summary once completed",
            "operationId": "getEvaluation",
            "parameters": [EVALUATION_PARAMETER],
            "responses": {"200": _json(schemas, EvaluationView, "The job.")},
        }},
        "/v1/evaluations/{evaluation_id}/report": {"get": {
            "summary": "A completed job's report: one self-contained HTML page, or its JSON",
            "operationId": "getEvaluationReport",
            "parameters": [
                EVALUATION_PARAMETER,
                {"name": "format", "in": "query", "required": False,
                 "schema": {"type": "string", "enum": ["html", "json"], "default": "html"}},
            ],
            "responses": {"200": {
                "description": "The report (409 `evaluation_not_complete` before the job completes).",
                "content": {
                    "text/html": {"schema": {"type": "string"}},
                    "application/json": {"schema": _add(schemas, EvaluationReport)},
                },
            }},
        }},
    }  # fmt: skip


USER_HEADERS = [
    {
        "name": "Ragline-User-Id",
        "in": "header",
        "required": False,
        "description": "The end user this request acts for (documents' access lists apply). Only"
        " with a key created with `assertUser` (else 403); a key with `requireUser` must send it.",
        "schema": {"type": "string", "minLength": 1, "maxLength": 256},
    },
    {
        "name": "Ragline-User-Groups",
        "in": "header",
        "required": False,
        "description": "The end user's groups, comma-separated (at most 100), with Ragline-User-Id.",
        "schema": {"type": "string"},
    },
]
"""Every route takes them: the same rule holds on every path a document can leave by."""


RETRY_AFTER = {
    "description": "Whole seconds until the tenant's or key's limit admits a request again"
    " (`rate_limited`, `too_many_runs`); absent on a quota refusal.",
    "schema": {"type": "integer", "minimum": 1},
}


def _finish(method: str, path: str, operation: dict[str, Any]) -> None:
    """The one error shape for every error status, and the ``Idempotency-Key`` of metered routes."""
    responses = operation["responses"]
    responses.pop("422", None)
    for status in ERROR_STATUSES:
        responses[str(status)] = {
            "description": "An error, in the one shape (`error.code` says which).",
            "content": {"application/json": {"schema": {"$ref": REF + "ErrorBody"}}},
        }
    if "429" in responses:  # a limit's refusal (rate_limited, too_many_runs) says when to come back
        responses["429"]["headers"] = {"Retry-After": RETRY_AFTER}
    operation["responses"] = dict(sorted(responses.items()))
    operation.setdefault("parameters", []).extend(USER_HEADERS)
    if (method, path) in METERED:
        operation.setdefault("parameters", []).append(
            {
                "name": "Idempotency-Key",
                "in": "header",
                "required": False,
                "description": "Names the run: a retry with the same key and body replays the recorded"
                " result instead of running (and charging) again; another body is a 422.",
                "schema": {"type": "string", "minLength": 1, "maxLength": MAX_IDEMPOTENCY_KEY},
            }
        )


def render(functions: Path) -> str:
    """The document as ``docs/openapi.json`` holds it (stable key order, trailing newline)."""
    return json.dumps(build_openapi(functions), indent=2, ensure_ascii=False) + "\n"
