"""Botocore errors → Ragline errors, by error code and exception type, never by message text.

botocore is imported lazily (it costs tens of milliseconds): importing an adapter must stay cheap.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ragline import errors
from ragline.adapters.boto import error_code, http_status

CONDITION_FAILED = "ConditionalCheckFailedException"
THROTTLING_CODES = frozenset(
    {"ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded"}
)
UNAVAILABLE_CODES = frozenset({"InternalServerError", "ServiceUnavailable", "InternalFailure"})


def translate_client_error(exc: BaseException, *, service: str, action: str) -> errors.RaglineError:
    """A ``ClientError`` as the Ragline error a caller can act on (retry or not)."""
    code = error_code(exc)
    details: dict[str, Any] = {"service": service, "action": action, "aws_code": code}
    if code in THROTTLING_CODES:
        return errors.Throttled(f"{service} throttled {action}", **details)
    if code in UNAVAILABLE_CODES or http_status(exc) >= 500:
        return errors.DependencyUnavailable(f"{service} failed during {action}", **details)
    return errors.DependencyFailed(f"{service} rejected {action}", **details)


@contextmanager
def translate(service: str, action: str) -> Iterator[None]:
    """Raise every botocore error inside the block as a Ragline error (``raise … from exc``).

    Callers that expect a specific code (a failed condition) catch ``ClientError`` themselves first.
    """
    from botocore.exceptions import BotoCoreError, ClientError, HTTPClientError
    from botocore.exceptions import ConnectionError as BotoConnectionError

    try:
        yield
    except ClientError as exc:
        raise translate_client_error(exc, service=service, action=action) from exc
    except (BotoConnectionError, HTTPClientError) as exc:  # endpoint/proxy/TLS, timeouts, closed socket
        raise errors.DependencyUnavailable(
            f"{service} unreachable during {action}", service=service, action=action
        ) from exc
    except BotoCoreError as exc:  # no credentials, bad parameters: our misconfiguration
        raise errors.DependencyFailed(
            f"{service} call {action} could not be made", service=service, action=action
        ) from exc


def call(
    client: Any,
    action: str,
    request: dict[str, Any],
    domain_error: Callable[[Any], BaseException | None],
    *,
    service: str = "DynamoDB",
) -> dict[str, Any]:
    """One SDK call: ``domain_error`` may turn a ``ClientError`` into an adapter-specific exception
    (a failed condition, a cancelled transaction); everything else is translated by :func:`translate`."""
    from botocore.exceptions import ClientError

    with translate(service, action):
        try:
            response: dict[str, Any] = getattr(client, action)(**request)
        except ClientError as exc:
            mapped = domain_error(exc)
            if mapped is not None:
                raise mapped from exc
            raise
    return response


class Missing(Exception):
    """The named resource does not exist (a secret, a schedule): the caller creates it, or is done."""


class AlreadyExists(Exception):
    """The resource was created meanwhile (a concurrent create): the caller updates it instead."""


def missing_or_exists(not_found: str, exists: str) -> Callable[[Any], BaseException | None]:
    """A :func:`call` ``domain_error`` for a service's own codes of those two outcomes."""

    def domain_error(exc: Any) -> BaseException | None:
        code = error_code(exc)
        if code == not_found:
            return Missing()
        if code == exists:
            return AlreadyExists()
        return None

    return domain_error
