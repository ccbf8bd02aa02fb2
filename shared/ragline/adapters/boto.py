"""What every boto3-backed adapter (the aws and bedrock backends) shares: clients built on first use,
and reading a ``ClientError``'s code and HTTP status. botocore is never imported here at import time."""

from __future__ import annotations

import sys
import threading
import weakref
from typing import Any

_BUILT: weakref.WeakSet[LazyClient] = weakref.WeakSet()
"""Every LazyClient of the process, so :func:`release_clients` reaches those outside a container too
(the authorizer's key lookup)."""


class LazyClient:
    """A boto3 client built on first call — never at import or construction — or the one injected.

    ``config`` (keyword arguments of ``botocore.config.Config``: retries, timeouts, pool size) applies
    to the client this builds, not to an injected one.
    """

    def __init__(
        self,
        service: str,
        *,
        client: Any = None,
        region: str | None = None,
        config: dict[str, Any] | None = None,
    ) -> None:
        self.service = service
        self.region = region
        self._client = client
        self._config = config
        self._lock = threading.Lock()
        self._built = False
        _BUILT.add(self)

    def __call__(self) -> Any:
        with self._lock:  # building boto3 clients concurrently from one session is not thread-safe
            if self._client is None:
                import boto3

                kwargs: dict[str, Any] = {"region_name": self.region}
                if self._config:
                    from botocore.config import Config

                    kwargs["config"] = Config(**self._config)
                self._client = boto3.client(self.service, **kwargs)
                self._built = True
            return self._client

    def release(self) -> None:
        """Close the client this built (its connection pool) and forget it: the next call builds a
        new one, with the credentials of that moment. An injected client is left alone."""
        with self._lock:
            if self._built and self._client is not None:
                self._client.close()
                self._client, self._built = None, False


def release_clients() -> None:
    """Release every built client, then give boto3's default session fresh credentials: a session
    keeps the first credentials it resolved, and a SnapStart restore must not reuse the snapshot's.
    Its data loader (the parsed service models: the cost of building a client) is kept."""
    for lazy in list(_BUILT):
        lazy.release()
    boto3: Any = sys.modules.get("boto3")  # not loaded: no session to renew
    if boto3 is not None and boto3.DEFAULT_SESSION is not None:
        import botocore.session

        loader = boto3.DEFAULT_SESSION._session.get_component("data_loader")
        fresh = botocore.session.get_session()
        fresh.register_component("data_loader", loader)
        boto3.setup_default_session(botocore_session=fresh)
        loader.search_paths[:] = list(dict.fromkeys(loader.search_paths))  # boto3 appended its own again


def warm_models(services: tuple[str, ...]) -> None:
    """Parse the service models, endpoint rules and partitions of ``services`` into boto3's default
    session's loader, so a client built later (after a SnapStart restore) is cheap. No client is
    built, no credential resolved, nothing sent."""
    import boto3

    if boto3.DEFAULT_SESSION is None:
        boto3.setup_default_session()
    session = boto3.DEFAULT_SESSION._session
    loader = session.get_component("data_loader")
    loader.load_data("endpoints")
    loader.load_data("partitions")
    loader.load_data("sdk-default-configuration")
    for service in services:
        session.get_service_model(service)
        loader.load_service_model(service, "endpoint-rule-set-1")


def error_code(exc: BaseException) -> str:
    """The AWS error code of a ``ClientError`` (``""`` for anything else)."""
    response = getattr(exc, "response", None)
    if not isinstance(response, dict):
        return ""
    return str((response.get("Error") or {}).get("Code") or "")


def http_status(exc: BaseException) -> int:
    response = getattr(exc, "response", None)
    if not isinstance(response, dict):
        return 0
    status = (response.get("ResponseMetadata") or {}).get("HTTPStatusCode")
    return status if isinstance(status, int) else 0
