"""The :class:`Container` itself: the top of the container's layers, with what concerns its life in
a process — overrides by name, closing and releasing connections (SnapStart), delivering pending
events before a local command exits, and warming modules and AWS service models at init.
"""

from __future__ import annotations

import importlib
from functools import cached_property
from typing import TYPE_CHECKING, Any

from .work import WorkParts

if TYPE_CHECKING:
    from ragline.config import Settings

EXIT_EVENT_GRACE_SECONDS = 10.0
"""How long a local command's end may spend delivering its webhook events (a POST begun then may take
its own 10 s more)."""

GROUNDING_MODULES: dict[str, list[str]] = {
    "none": [],
    "verifier": ["ragline.adapters.grounding.verifier", "snowballstemmer"],
    "overlap": ["ragline.adapters.grounding.overlap", "snowballstemmer"],
    "judge": ["ragline.adapters.grounding.judge"],
    "bedrock": ["ragline.adapters.bedrock.guardrail"],
}
"""The grounding scorer's modules, by ``settings.resolved_grounding``."""

SERVICE_MODULES: dict[str, tuple[str, ...]] = {
    "search": ("ragline.services.search",),
    "hosting_search": ("ragline.services.hosting_search", "ragline.agents.planners"),
    "chat": ("ragline.services.chat", "ragline.agents.planners", "ragline.services.grounding"),
    "document_service": ("ragline.services.documents", "ragline.services.ingest"),
    "ingest": ("ragline.services.ingest",),
    "namespaces": ("ragline.services.namespaces", "ragline.services.reindex"),
    "tenancy": ("ragline.services.tenancy",),
    "metering": ("ragline.services.metering",),
    "identity_providers": ("ragline.services.identity_providers",),
    "webhooks": ("ragline.services.webhooks", "ragline.domain.webhook_api"),
    "webhook_delivery": ("ragline.services.webhooks", "ragline.adapters.webhook_http"),
}
"""The modules a container service's construction and first use import (SnapStart's init warms them)."""


class Container(WorkParts):
    """Builds each part on first use. ``Container(settings, **overrides)`` replaces parts by name
    (any port or service below), so a test swaps the embedder without touching internals."""

    def __init__(self, settings: Settings, **overrides: Any) -> None:
        self.settings = settings
        self._overrides = frozenset(overrides)
        for name, value in overrides.items():
            if not isinstance(getattr(type(self), name, None), cached_property):
                raise TypeError(f"Container has no part named {name!r}")
            self.__dict__[name] = value  # what cached_property would have stored

    def close(self) -> None:
        if "stores" in self.__dict__:
            self.stores.close()

    def deliver_pending_events(self, seconds: float = EXIT_EVENT_GRACE_SECONDS) -> int:
        """Before a local process exits: the outbox's due events delivered, starting none after
        ``seconds`` (the relay thread dies with the process). Only where this container built the
        outbox (it published, or could have); on AWS the bus delivers: nothing to do."""
        from ragline.adapters.embedded.events import SqliteEventOutbox

        outbox = self.__dict__.get("event_publisher")
        return outbox.drain(seconds) if isinstance(outbox, SqliteEventOutbox) else 0

    def release_connections(self) -> None:
        """Close every connection pool this container's parts hold and forget the parts (overrides
        excepted): each is rebuilt on its next use, so no socket, client or credential outlives a
        SnapStart snapshot. The modules, models and parsed service models they used stay loaded."""
        from ragline.adapters.boto import release_clients

        for name in ("stores", "chat_model", "embedder", "reranker"):
            part = self.__dict__.get(name)
            for holder in (part, getattr(part, "inner", None)):  # a wrapper's model (ContextFitting)
                close = getattr(holder, "close", None)
                if callable(close):
                    close()
        for name in [n for n in self.__dict__ if isinstance(getattr(type(self), n, None), cached_property)]:
            if name not in self._overrides:
                del self.__dict__[name]
        release_clients()

    def aws_services(self) -> tuple[str, ...]:
        """The AWS services this configuration calls (their models are worth parsing at init)."""
        s = self.settings
        services = ["dynamodb", "s3"] if s.backend == "aws" else []
        if "bedrock" in (s.embedding_provider, s.chat_backend, s.resolved_grounding):
            services.append("bedrock-runtime")
        if s.reranker == "bedrock":
            services.append("bedrock-agent-runtime")
        if s.chat_backend == "openai" and s.llm_api_key_secret:
            services.append("secretsmanager")
        return tuple(services)

    def warm(self, parts: tuple[str, ...] = ()) -> None:
        """SnapStart's init (:func:`ragline.snapstart.prepare`): import the modules of ``parts`` (the
        services a handler uses; all when none is named) and of the configured adapters, and parse
        their AWS service models — building no part: no client, no credential, no connection (the LLM
        key would be read from Secrets Manager; SigV4 would resolve credentials)."""
        from ragline.adapters.boto import warm_models

        s = self.settings
        modules = [m for part in parts or tuple(SERVICE_MODULES) for m in SERVICE_MODULES[part]]
        backend = "aws" if s.backend == "aws" else "embedded"
        adapters = ("tenants", "documents", "ledger", "objects", "limits")
        modules += [f"ragline.adapters.{backend}.{m}" for m in adapters]
        if s.resolved_store == "opensearch" and s.opensearch_service == "aoss":
            modules += [
                "ragline.adapters.opensearch.serverless",
                "ragline.adapters.opensearch.serverless_store",
            ]
        elif s.resolved_store == "opensearch":
            modules.append("ragline.adapters.opensearch.store")
        else:  # with the stemmer its keyword index loads on first use
            modules += ["ragline.adapters.embedded.store", "snowballstemmer"]
        if "bedrock" in (s.embedding_provider, s.reranker):
            modules += ["ragline.adapters.bedrock.embedder", "ragline.adapters.bedrock.reranker"]
        if s.chat_backend in ("bedrock", "openai"):
            modules += [f"ragline.adapters.{s.chat_backend}.chat", "ragline.agents.fitting"]
        if s.llm_configured:
            modules.append("ragline.adapters.rerank")
        modules += GROUNDING_MODULES[s.resolved_grounding]
        for module in ["ragline.services.tenant_gate", "ragline.services.limits", *modules]:
            importlib.import_module(module)
        warm_models(self.aws_services())
