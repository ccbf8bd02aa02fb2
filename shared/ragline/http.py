"""The edge's one table from error code to HTTP status, the JSON error body, and the rules every
request body passes before it is parsed (JSON media type, UTF-8, bounded nesting)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ragline import errors
from ragline.domain.json_depth import nests_deeper_than
from ragline.services.authentication import Principal

if TYPE_CHECKING:
    from aws_lambda_powertools import Logger

    from ragline.rest_resolver import PerRequestResolver as APIGatewayRestResolver
    from ragline.wiring import Container

STATUS_BY_ERROR: dict[type[errors.RaglineError], int] = {
    errors.InvalidRequest: 400,
    errors.Unauthorized: 401,
    errors.Forbidden: 403,
    errors.NotFound: 404,
    errors.MethodNotAllowed: 405,
    errors.Conflict: 409,
    errors.RunInProgress: 409,
    errors.DocumentTooLarge: 413,
    errors.UnsupportedMediaType: 415,
    errors.UnsupportedDocument: 422,
    errors.UnreadableDocument: 422,
    errors.EmptyDocument: 422,
    errors.IdempotencyKeyReused: 422,
    errors.QuotaExceeded: 429,
    errors.Throttled: 429,
    errors.DependencyUnavailable: 503,
    errors.DependencyFailed: 502,
    errors.ConfigurationError: 500,
}


def status_for(exc: errors.RaglineError) -> int:
    """Most specific class wins (``NamespaceNotFound`` maps through ``NotFound``)."""
    for cls in type(exc).__mro__:
        if cls in STATUS_BY_ERROR:
            return STATUS_BY_ERROR[cls]
    return 500


def error_body(exc: BaseException, **ids: str) -> tuple[int, dict[str, Any]]:
    """Status and body for any exception; unexpected ones never leak their text, only the ``ids``
    that find their trace in the logs (``request_id``, ``run_id``)."""
    from pydantic import ValidationError

    if isinstance(exc, ValidationError):
        problems = exc.errors(include_url=False, include_context=False, include_input=False)
        exc = errors.InvalidRequest("invalid request", problems=problems)
    if isinstance(exc, errors.RaglineError):
        return status_for(exc), exc.to_dict()
    return 500, errors.RaglineError("internal error", **ids).to_dict()


def count_refusal(exc: BaseException) -> None:
    """A quota refusal is counted (the ``QuotaExceeded`` metric the operators' alarm watches)."""
    if isinstance(exc, errors.QuotaExceeded):
        from ragline import telemetry

        telemetry.record_quota_exceeded()


def retry_headers(exc: BaseException) -> dict[str, str]:
    """A limit's refusal says when to come back: ``Retry-After`` (whole seconds, RFC 9110)."""
    return {"Retry-After": str(exc.retry_after)} if isinstance(exc, errors.RateLimited) else {}


def route_not_found(method: str, path: str) -> errors.NotFound:
    """No route has this path (the same error from every edge: handlers, chat, ``ragline serve``)."""
    return errors.NotFound("no such route", method=method, path=path)


def method_not_allowed(method: str, allowed: Iterable[str]) -> errors.MethodNotAllowed:
    return errors.MethodNotAllowed(f"{method} is not allowed here", allowed=sorted(allowed))


# -- request bodies --------------------------------------------------------------------------------

MAX_JSON_DEPTH = 32
"""Deepest nesting a request body may have; the API's own bodies nest three levels."""

NOT_UTF8 = "request body is not valid UTF-8"
NOT_JSON = "request bodies are JSON: send Content-Type: application/json"


def require_json(content_type: str | None) -> None:
    """Bodies are JSON. No ``Content-Type`` is read as JSON (clients and consoles often omit it, and
    the API reads nothing else); a declared other type is a 415, not a guess: the client said the
    bytes are something else. Parameters (``charset``) are ignored: JSON is UTF-8 (RFC 8259)."""
    media_type = media_type_of(content_type)
    suffixed = media_type.startswith("application/") and media_type.endswith("+json")  # merge-patch+json
    if media_type and media_type != "application/json" and not suffixed:
        raise errors.UnsupportedMediaType(NOT_JSON, content_type=media_type)


def media_type_of(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


def json_text(body: bytes | str) -> str:
    """A request body as JSON text that is safe to parse, else ``InvalidRequest``.

    Nesting is bounded *before* parsing: ``json`` and pydantic recurse once per level, so a body of
    ``[`` x 100k overflows the stack. Catching ``RecursionError`` instead would make the limit depend
    on how deep the stack already is where the parse happens, and an overflow can break code that
    never expected one (a ``finally`` cut short, a C extension mid-update) — so it is prevented by
    a linear scan, and one bound holds for every edge (REST handlers, chat, ``ragline serve``).

    API Gateway hands a body that is not UTF-8 to the function as text with every bad byte replaced
    by U+FFFD (no binary media types are configured), so a raw U+FFFD is refused as not UTF-8 too:
    accepting it would store and search silently mangled text. A client that means U+FFFD can send
    the escape ``\\ufffd`` (``json.dumps`` does by default).
    """
    if isinstance(body, bytes):
        try:
            body = body.decode("utf-8")
        except UnicodeDecodeError:
            raise errors.InvalidRequest(NOT_UTF8) from None
    if "\ufffd" in body:
        raise errors.InvalidRequest(NOT_UTF8)
    if nests_deeper_than(body, MAX_JSON_DEPTH):
        raise errors.InvalidRequest(
            f"request body nests deeper than {MAX_JSON_DEPTH} levels", max_depth=MAX_JSON_DEPTH
        )
    return body


def load_json(body: str) -> Any:
    """The REST resolver's JSON body parser: :func:`json_text`'s checks, then ``json.loads``."""
    return json.loads(json_text(body))


# -- the REST handlers' shared edge ----------------------------------------------------------------


def install_error_handlers(app: APIGatewayRestResolver, logger: Logger) -> None:
    """Give a Powertools resolver the one JSON error shape for every error: validation, a body that
    is not UTF-8 or not JSON, Powertools' own not-found (which it also answers for a known path
    with another method: told apart here as 405), and any unexpected error (500 ``internal_error``
    with the request's ids, its trace logged) — never API Gateway's 502 for a function that raised."""
    from aws_lambda_powertools.event_handler import Response
    from aws_lambda_powertools.event_handler.exceptions import NotFoundError
    from aws_lambda_powertools.event_handler.openapi.exceptions import (
        RequestUnsupportedContentType,
        RequestValidationError,
    )
    from pydantic import ValidationError

    def respond(exc: BaseException, headers: dict[str, str] | None = None) -> Response[str]:
        count_refusal(exc)
        status, body = error_body(exc)
        headers = {**(headers or {}), **retry_headers(exc)}
        return Response(status, "application/json", json.dumps(body), headers=headers or None)

    def invalid_body(exc: RequestValidationError) -> Response[str]:
        problems = [{k: v for k, v in e.items() if k in ("type", "loc", "msg")} for e in exc.errors()[:20]]
        return respond(errors.InvalidRequest("invalid request", problems=problems))

    def bad_value(exc: ValueError) -> Response[str]:
        return respond(errors.InvalidRequest(str(exc).splitlines()[-1].strip()))

    def no_route(_: NotFoundError) -> Response[str]:
        method, path = app.current_event.http_method.upper(), app.current_event.path
        allowed = route_methods(app, path)
        if allowed:
            return respond(method_not_allowed(method, allowed), {"Allow": ", ".join(allowed)})
        return respond(route_not_found(method, path))

    def not_json(_: RequestUnsupportedContentType) -> Response[str]:
        # Powertools' own check, reached only if the _json_bodies_only hook were lost in an upgrade.
        content_type = media_type_of(app.current_event.headers.get("content-type"))
        return respond(errors.UnsupportedMediaType(NOT_JSON, content_type=content_type))

    def unexpected(exc: Exception) -> Response[str]:
        ids = request_ids(app)
        logger.exception("request failed unexpectedly", extra=ids)
        status, body = error_body(exc, **ids)
        return Response(status, "application/json", json.dumps(body))

    app.exception_handler(Exception)(unexpected)  # the most specific handler wins: this one is last
    app.exception_handler(errors.RaglineError)(respond)
    app.exception_handler(ValidationError)(respond)
    app.exception_handler(RequestValidationError)(invalid_body)
    app.exception_handler(RequestUnsupportedContentType)(not_json)
    app.exception_handler(UnicodeDecodeError)(lambda _: respond(errors.InvalidRequest(NOT_UTF8)))
    app.exception_handler(ValueError)(bad_value)
    app.not_found(no_route)


def route_methods(app: APIGatewayRestResolver, path: str) -> list[str]:
    """The methods the resolver routes for ``path`` (none: an unknown path).

    Reads Powertools' route table (private, pinned by the version in pyproject.toml and by
    tests/unit/handlers/test_error_shape.py): it has no public way to tell 404 from 405.
    """
    routes = [*app._static_routes, *app._dynamic_routes]
    return sorted({route.method for route in routes if route.rule.match(path)})


def rest_app(logger: Logger) -> APIGatewayRestResolver:
    """A Powertools REST resolver that parses bodies into the API models and answers errors in the
    one shape, logging unexpected ones to the handler's ``logger``. Its request state is per request
    (:mod:`ragline.rest_resolver`). Handlers get the caller, the run id and the container through
    the functions below."""
    from ragline.rest_resolver import PerRequestResolver

    app = PerRequestResolver(enable_validation=True, json_body_deserializer=load_json)
    app._request_validation_middleware = _json_bodies_only()
    install_error_handlers(app, logger)
    return app


def _json_bodies_only() -> Any:
    """Powertools' request validation, reading every body as JSON under :func:`require_json`.

    Powertools parses form and multipart bodies too, and matches ``application/json`` by a
    case-sensitive prefix; the API reads JSON only, with the chat app's exact rule. The hook is
    private (pinned like :func:`route_methods`), but it runs after routing and only for routes that
    take a body, so 404/405 still come first and a DELETE's stray ``Content-Type`` is ignored.
    """
    from aws_lambda_powertools.event_handler.middlewares.openapi_validation import (
        OpenAPIRequestValidationMiddleware,
    )

    class JsonBodies(OpenAPIRequestValidationMiddleware):
        def _get_body(self, app: Any) -> dict[str, Any]:
            require_json(app.current_event.headers.get("content-type"))
            return self._parse_json_data(app)

    return JsonBodies()  # type: ignore[no-untyped-call]  # Powertools' __init__ is unannotated


def resolve(
    app: APIGatewayRestResolver, event: dict[str, Any], context: Any, container: Container | None = None
) -> dict[str, Any]:
    """Resolve one event with ``container`` (default: the process's one) in this request's context."""
    from ragline.wiring import container as default_container

    return app.resolve(event, context, container=container or default_container())


def services(app: APIGatewayRestResolver) -> Container:
    """The container :func:`resolve` put in the app's context for this event."""
    container: Container = app.context["container"]
    return container


def caller(app: APIGatewayRestResolver) -> Principal:
    """The principal the authorizer resolved; the only source of the tenant. Its tenant's status is
    checked again here (the authorizer's answer may be cached past a suspension or deletion), and the
    end user a key may assert is read from this request's headers."""
    event = app.current_event
    return services(app).tenant_gate.caller(event.request_context.authorizer.raw_event, event.headers)


MAX_IDEMPOTENCY_KEY = 255
"""Longest ``Idempotency-Key`` accepted (API Gateway passes far longer headers)."""


def checked_idempotency_key(key: str | None) -> str | None:
    """The client's key, refused with ``InvalidRequest`` (400) before any work when it is too long."""
    if key and len(key) > MAX_IDEMPOTENCY_KEY:
        raise errors.InvalidRequest(
            f"Idempotency-Key is longer than {MAX_IDEMPOTENCY_KEY} characters",
            max_length=MAX_IDEMPOTENCY_KEY,
            length=len(key),
        )
    return key or None


def run_id(app: APIGatewayRestResolver) -> str:
    """The client's ``Idempotency-Key`` (at most 255 characters), else the gateway's request id: a
    retry is charged once and replays the recorded result."""
    event = app.current_event
    key = event.headers.get("Idempotency-Key") or event.headers.get("idempotency-key")
    run = str(checked_idempotency_key(key) or event.request_context.request_id)
    app.context["run_id"] = run  # named by an unexpected error's answer
    return run


def request_ids(app: APIGatewayRestResolver) -> dict[str, str]:
    """The ids that find a request's lines in the logs: the gateway's request id, and the run id
    once the handler took one (an unexpected error's answer and log line carry both)."""
    ids = {"request_id": app.current_event.request_context.request_id or ""}
    if "run_id" in app.context:
        ids["run_id"] = app.context["run_id"]
    return {name: value for name, value in ids.items() if value}
