"""The server's one error shape read back into its typed errors (:mod:`ragline.errors`), so a client
catches ``errors.NamespaceNotFound`` exactly as the server raised it, with the HTTP ``status`` set."""

from __future__ import annotations

from typing import Any

from ragline import errors


def _error_classes() -> dict[str, type[errors.RaglineError]]:
    found: dict[str, type[errors.RaglineError]] = {}
    pending: list[type[errors.RaglineError]] = [errors.RaglineError]
    while pending:
        cls = pending.pop()
        found.setdefault(cls.code, cls)
        pending.extend(cls.__subclasses__())
    return found


def api_error(status: int, body: Any) -> errors.RaglineError:
    """The typed error of a response in the one error shape (or a generic one for any other body)."""
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        exc = errors.RaglineError(f"HTTP {status} without the error shape")
    else:
        cls = _error_classes().get(str(error.get("code")), errors.RaglineError)
        raw = error.get("details")
        details: dict[str, Any] = raw if isinstance(raw, dict) else {}
        exc = cls(str(error.get("message", "")), **details)
        if cls is errors.RaglineError:
            exc.code = str(error.get("code"))  # type: ignore[misc]  # an unknown code is kept as sent
    exc.status = status  # type: ignore[attr-defined]
    return exc
