"""The Bedrock boundary: its clients (see :mod:`ragline.adapters.boto`), and botocore errors → Ragline errors.

Errors are translated by AWS error *code* and exception type, never by message text. botocore and
boto3 are imported lazily: importing or constructing an adapter stays cheap (cold starts).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ragline import errors
from ragline.adapters.boto import LazyClient, error_code, http_status

THROTTLING_CODES = frozenset(
    {"ThrottlingException", "ServiceQuotaExceededException", "TooManyRequestsException"}
)
"""Slow down and retry later (Bedrock answers 429, or 400 for a quota)."""

UNAVAILABLE_CODES = frozenset(
    {
        "ServiceUnavailableException",
        "InternalServerException",
        "InternalFailure",
        "ModelNotReadyException",
        "ModelTimeoutException",
        "ModelErrorException",
        "DependencyFailedException",
        "BadGatewayException",
    }
)
"""The service or the model behind it is down, cold or slow: retryable."""

MISCONFIGURED_CODES = frozenset(
    {
        "AccessDeniedException",
        "ResourceNotFoundException",
        "UnrecognizedClientException",
        "InvalidSignatureException",
        "MissingAuthenticationTokenException",
    }
)
"""The deployment is wrong (no IAM permission or model access, a model id that does not exist)."""


def bedrock_client(
    service: str,
    *,
    client: Any = None,
    region: str | None = None,
    max_attempts: int = 3,
    connect_timeout_s: float = 3.0,
    read_timeout_s: float = 20.0,
    max_pool_connections: int = 10,
) -> LazyClient:
    """A Bedrock client built on first use: botocore's ``standard`` retries (throttling and 5xx, with
    backoff), timeouts instead of a hung Lambda, and a pool covering the callers' threads."""
    config = {
        "retries": {"mode": "standard", "max_attempts": max_attempts},
        "connect_timeout": connect_timeout_s,
        "read_timeout": read_timeout_s,
        "max_pool_connections": max_pool_connections,
    }
    return LazyClient(service, client=client, region=region, config=config)


def translate_client_error(
    exc: BaseException,
    *,
    action: str,
    rejected: type[errors.RaglineError] = errors.DependencyFailed,
    misconfigured: type[errors.RaglineError] = errors.ConfigurationError,
) -> errors.RaglineError:
    """A Bedrock ``ClientError`` as the Ragline error a caller can act on.

    Throttling → :class:`~ragline.errors.Throttled`; down, cold or timed-out models (and any 5xx) →
    :class:`~ragline.errors.DependencyUnavailable`; missing permission or model → ``misconfigured``;
    everything else (a request Bedrock refused as invalid) → ``rejected``.
    """
    code, status = error_code(exc), http_status(exc)
    details: dict[str, Any] = {"service": "Bedrock", "action": action, "aws_code": code, "status": status}
    if code in THROTTLING_CODES or (status == 429 and code not in UNAVAILABLE_CODES):
        return errors.Throttled(f"Bedrock throttled {action}", **details)
    if code in UNAVAILABLE_CODES or status >= 500:
        return errors.DependencyUnavailable(f"Bedrock was unavailable during {action}", **details)
    if code in MISCONFIGURED_CODES:
        return misconfigured(
            f"Bedrock refused {action} ({code}): check the model id, the model access granted in the "
            "Bedrock console and the IAM permission",
            **details,
        )
    return rejected(f"Bedrock rejected {action} ({code or status})", **details)


@contextmanager
def translate(
    action: str,
    *,
    rejected: type[errors.RaglineError] = errors.DependencyFailed,
    misconfigured: type[errors.RaglineError] = errors.ConfigurationError,
) -> Iterator[None]:
    """Raise every botocore error inside the block as a Ragline error (``raise … from exc``)."""
    from botocore.exceptions import (
        BotoCoreError,
        ClientError,
        HTTPClientError,
        NoCredentialsError,
        NoRegionError,
        PartialCredentialsError,
    )
    from botocore.exceptions import ConnectionError as BotoConnectionError

    try:
        yield
    except ClientError as exc:
        raise translate_client_error(
            exc, action=action, rejected=rejected, misconfigured=misconfigured
        ) from exc
    except (BotoConnectionError, HTTPClientError) as exc:  # refused, TLS, proxy, connect/read timeouts
        raise errors.DependencyUnavailable(
            f"Bedrock was unreachable during {action}", service="Bedrock", action=action
        ) from exc
    except (NoCredentialsError, PartialCredentialsError, NoRegionError) as exc:
        raise misconfigured(
            f"Bedrock call {action} has no credentials or region", service="Bedrock", action=action
        ) from exc
    except BotoCoreError as exc:  # parameter validation and the like: a request we built wrong
        raise rejected(f"Bedrock call {action} could not be made", service="Bedrock", action=action) from exc
