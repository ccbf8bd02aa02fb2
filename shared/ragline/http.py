"""The edge's one table from error code to HTTP status, and the JSON error body."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ragline import errors
from ragline.services.tenancy import Principal

if TYPE_CHECKING:
    from aws_lambda_powertools.event_handler import APIGatewayRestResolver

    from ragline.wiring import Container

STATUS_BY_ERROR: dict[type[errors.RaglineError], int] = {
    errors.InvalidRequest: 400,
    errors.Unauthorized: 401,
    errors.Forbidden: 403,
    errors.NotFound: 404,
    errors.Conflict: 409,
    errors.DocumentTooLarge: 413,
    errors.UnsupportedDocument: 422,
    errors.UnreadableDocument: 422,
    errors.EmptyDocument: 422,
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


def error_body(exc: BaseException) -> tuple[int, dict[str, Any]]:
    """Status and body for any exception; unexpected ones never leak their text."""
    from pydantic import ValidationError

    if isinstance(exc, ValidationError):
        problems = exc.errors(include_url=False, include_context=False, include_input=False)
        exc = errors.InvalidRequest("invalid request", problems=problems)
    if isinstance(exc, errors.RaglineError):
        return status_for(exc), exc.to_dict()
    return 500, errors.RaglineError("internal error").to_dict()


def install_error_handlers(app: Any) -> None:
    """Give a Powertools resolver the one JSON error shape for every error, validation included."""
    import json

    from aws_lambda_powertools.event_handler import Response
    from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
    from pydantic import ValidationError

    def respond(exc: BaseException) -> Response[str]:
        status, body = error_body(exc)
        return Response(status_code=status, content_type="application/json", body=json.dumps(body))

    def invalid_body(exc: RequestValidationError) -> Response[str]:
        problems = [{k: v for k, v in e.items() if k in ("type", "loc", "msg")} for e in exc.errors()[:20]]
        return respond(errors.InvalidRequest("invalid request", problems=problems))

    def bad_value(exc: ValueError) -> Response[str]:
        return respond(errors.InvalidRequest(str(exc).splitlines()[-1].strip()))

    app.exception_handler(errors.RaglineError)(respond)
    app.exception_handler(ValidationError)(respond)
    app.exception_handler(RequestValidationError)(invalid_body)
    app.exception_handler(ValueError)(bad_value)


# -- the REST handlers' shared edge ----------------------------------------------------------------


def rest_app() -> APIGatewayRestResolver:
    """A Powertools REST resolver that parses bodies into the API models and answers errors in the
    one shape. Handlers get the caller, the run id and the container through the functions below."""
    from aws_lambda_powertools.event_handler import APIGatewayRestResolver

    app = APIGatewayRestResolver(enable_validation=True)
    install_error_handlers(app)
    return app


def resolve(
    app: APIGatewayRestResolver, event: dict[str, Any], context: Any, container: Container | None = None
) -> dict[str, Any]:
    """Resolve one event with ``container`` (default: the process's one) in the app's context."""
    from ragline.wiring import container as default_container

    app.context["container"] = container or default_container()  # cleared by resolve when done
    result: dict[str, Any] = app.resolve(event, context)
    return result


def services(app: APIGatewayRestResolver) -> Container:
    """The container :func:`resolve` put in the app's context for this event."""
    container: Container = app.context["container"]
    return container


def caller(app: APIGatewayRestResolver) -> Principal:
    """The principal the authorizer resolved; the only source of the tenant."""
    return Principal.from_context(app.current_event.request_context.authorizer.raw_event)


def run_id(app: APIGatewayRestResolver) -> str:
    """The client's ``Idempotency-Key``, else the gateway's request id: a retry is charged once."""
    event = app.current_event
    key = event.headers.get("Idempotency-Key") or event.headers.get("idempotency-key")
    return str(key or event.request_context.request_id)
