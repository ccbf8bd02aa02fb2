"""The edge's one table from error code to HTTP status, and the JSON error body."""

from __future__ import annotations

from typing import Any

from ragline import errors

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
    if isinstance(exc, errors.RaglineError):
        return status_for(exc), exc.to_dict()
    return 500, errors.RaglineError("internal error").to_dict()


def install_error_handlers(app: Any) -> None:
    """Give a Powertools resolver the one JSON error shape for every error, validation included."""
    import json

    from aws_lambda_powertools.event_handler import Response
    from pydantic import ValidationError

    def respond(exc: BaseException) -> Response[str]:
        status, body = error_body(exc)
        return Response(status_code=status, content_type="application/json", body=json.dumps(body))

    def invalid(exc: ValidationError) -> Response[str]:
        problems = exc.errors(include_url=False, include_context=False, include_input=False)
        return respond(errors.InvalidRequest("invalid request", problems=problems))

    def bad_value(exc: ValueError) -> Response[str]:
        return respond(errors.InvalidRequest(str(exc).splitlines()[-1].strip()))

    app.exception_handler(errors.RaglineError)(respond)
    app.exception_handler(ValidationError)(invalid)
    app.exception_handler(ValueError)(bad_value)
