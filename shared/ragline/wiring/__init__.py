"""The composition root: the only package (with :mod:`ragline.backends`) that imports adapters.
Everything is built lazily.

``embedded`` (default) wires SQLite files under ``settings.home`` and offline models; ``aws`` wires
DynamoDB and S3 (and OpenSearch as the store). The backend is chosen once, in :func:`backend_for`; a
model endpoint (``OPENAI_API_KEY``/``OPENAI_BASE_URL``) replaces the offline extractive chat model in
either. Tests and benchmarks swap any part with ``Container(settings, embedder=..., stores=...)``.

:class:`Container` is one class built in layers, one module per concern, each building on those
below it: :mod:`.models` (embedders, chat model, reranker, grounding, OCR), :mod:`.storage` (the
backend's stores, vector stores), :mod:`.events` (publisher, announcer, webhooks), :mod:`.services`
(what a request calls), :mod:`.work` (the queues and the services they carry), :mod:`.container`
(overrides and the container's life in a process). Importing the wiring imports no SDK and no
pydantic (the authorizer imports only this package): every adapter is imported where it is built.

This module holds the process's one container: :func:`container` is looked up here by name (a
benchmark replaces it), so :func:`release_connections` reads it from here too.
"""

from __future__ import annotations

from functools import cache

from ragline.backends import api_key_lookup
from ragline.environment import env_values

from .container import EXIT_EVENT_GRACE_SECONDS, GROUNDING_MODULES, SERVICE_MODULES, Container

__all__ = [
    "EXIT_EVENT_GRACE_SECONDS",
    "GROUNDING_MODULES",
    "SERVICE_MODULES",
    "Container",
    "api_key_lookup",
    "container",
    "release_connections",
    "warm_key_lookup",
]


def release_connections() -> None:
    """Close and forget every connection pool and AWS client of the process: the container's parts
    (when it was built) and any other boto3 client (the authorizer's key lookup). Idempotent."""
    from ragline.adapters.boto import release_clients

    if container.cache_info().currsize:
        container().release_connections()  # its parts, then every client
    else:
        release_clients()


def warm_key_lookup() -> None:
    """The authorizer's SnapStart init: the key lookup's AWS model, without the settings model."""
    if env_values(("backend",)).get("backend") == "aws":
        from ragline.adapters.boto import warm_models

        warm_models(("dynamodb",))


@cache
def container() -> Container:
    """The process's one container (a Lambda container keeps it across invocations)."""
    from ragline.config import load_settings

    return Container(load_settings())
