"""Where records, usage and objects live: the embedded backend (SQLite files and a folder under
``settings.home``) or the aws one (DynamoDB and S3), chosen once by :func:`backend_for`; and the
authorizer's key lookup on the same backend. Adapters are imported lazily, on first use; only the
composition root (:mod:`ragline.wiring`) uses this module.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

from ragline.environment import DEFAULT_HOME, env_values
from ragline.errors import ConfigurationError

if TYPE_CHECKING:  # importing this costs no pydantic (the authorizer's cold start)
    from ragline.config import Settings
    from ragline.ports import (
        ApiKeyLookup,
        ConversationStore,
        DocumentRegistry,
        ObjectStore,
        OnceMarks,
        RateLimiter,
        RunLog,
        SourceRegistry,
        SourceSecrets,
        SyncScheduler,
        TenantRegistry,
        UsageLedger,
        WebhookStore,
    )


class Backend(Protocol):
    """Where records, usage and objects live."""

    def registry(self) -> TenantRegistry: ...
    def documents(self) -> DocumentRegistry: ...
    def ledger(self) -> UsageLedger: ...
    def objects(self) -> ObjectStore: ...
    def limiter(self) -> RateLimiter: ...
    def webhooks(self) -> WebhookStore: ...
    def once_marks(self) -> OnceMarks: ...
    def sources(self) -> SourceRegistry: ...
    def source_secrets(self) -> SourceSecrets: ...
    def sync_scheduler(self) -> SyncScheduler: ...
    def run_log(self) -> RunLog: ...
    def conversations(self) -> ConversationStore: ...
    def evaluation_objects(self) -> ObjectStore: ...


class EmbeddedBackend:
    """SQLite files and a local folder under ``settings.home``: no servers."""

    def __init__(self, settings: Settings) -> None:
        self._home = settings.home

    def registry(self) -> TenantRegistry:
        from ragline.adapters.embedded.tenants import SqliteTenantRegistry

        return SqliteTenantRegistry(self._home / TENANTS_FILE)

    def documents(self) -> DocumentRegistry:
        from ragline.adapters.embedded.documents import SqliteDocumentRegistry

        return SqliteDocumentRegistry(self._home / "documents.sqlite")

    def ledger(self) -> UsageLedger:
        from ragline.adapters.embedded.ledger import SqliteUsageLedger

        return SqliteUsageLedger(self._home / "usage.sqlite")

    def objects(self) -> ObjectStore:
        from ragline.adapters.embedded.objects import LocalObjectStore

        return LocalObjectStore(self._home / "objects")

    def webhooks(self) -> WebhookStore:
        from ragline.adapters.embedded.webhooks import SqliteWebhookStore

        return SqliteWebhookStore(self._home / EVENTS_FILE)

    def once_marks(self) -> OnceMarks:
        from ragline.adapters.embedded.webhooks import SqliteOnceMarks

        return SqliteOnceMarks(self._home / EVENTS_FILE)

    def sources(self) -> SourceRegistry:
        from ragline.adapters.embedded.sources import SOURCES_FILE, SqliteSourceRegistry

        return SqliteSourceRegistry(self._home / SOURCES_FILE)

    def source_secrets(self) -> SourceSecrets:
        from ragline.adapters.embedded.source_secrets import FileSourceSecrets

        return FileSourceSecrets(self._home)

    def sync_scheduler(self) -> SyncScheduler:
        from ragline.adapters.embedded.sources import SOURCES_FILE
        from ragline.adapters.embedded.sync_scheduler import SqliteSyncScheduler

        return SqliteSyncScheduler(self._home / SOURCES_FILE)

    def run_log(self) -> RunLog:
        from ragline.adapters.embedded.runs import RUNS_FILE, SqliteRunLog

        return SqliteRunLog(self._home / RUNS_FILE)

    def conversations(self) -> ConversationStore:
        from ragline.adapters.embedded.runs import RUNS_FILE, SqliteConversationStore

        return SqliteConversationStore(self._home / RUNS_FILE)

    def evaluation_objects(self) -> ObjectStore:
        """Evaluation jobs and reports: files under ``evaluations/``."""
        from ragline.adapters.embedded.objects import LocalObjectStore

        return LocalObjectStore(self._home / "evaluations")

    def limiter(self) -> RateLimiter:
        from ragline.adapters.embedded.limits import SqliteRateLimiter

        return SqliteRateLimiter(self._home / "limits.sqlite")


class AwsBackend:
    """DynamoDB tables and the S3 documents bucket named by the settings."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings

    def registry(self) -> TenantRegistry:
        from ragline.adapters.aws.tenants import DynamoDbTenantRegistry

        return DynamoDbTenantRegistry(required("tenants_table", self._settings.tenants_table))

    def documents(self) -> DocumentRegistry:
        from ragline.adapters.aws.documents import DynamoDbDocumentRegistry

        return DynamoDbDocumentRegistry(required("documents_table", self._settings.documents_table))

    def ledger(self) -> UsageLedger:
        from ragline.adapters.aws.ledger import DynamoDbUsageLedger

        return DynamoDbUsageLedger(required("usage_table", self._settings.usage_table))

    def objects(self) -> ObjectStore:
        from ragline.adapters.aws.objects import S3ObjectStore

        return S3ObjectStore(required("documents_bucket", self._settings.documents_bucket))

    def webhooks(self) -> WebhookStore:
        from ragline.adapters.aws.webhooks import DynamoDbWebhookStore

        return DynamoDbWebhookStore(required("tenants_table", self._settings.tenants_table))

    def once_marks(self) -> OnceMarks:
        from ragline.adapters.aws.webhooks import DynamoDbOnceMarks

        return DynamoDbOnceMarks(required("usage_table", self._settings.usage_table))

    def sources(self) -> SourceRegistry:
        """Sources beside their tenant in the tenants table; their items in the documents table."""
        from ragline.adapters.aws.sources import DynamoDbSourceRegistry

        s = self._settings
        return DynamoDbSourceRegistry(
            required("tenants_table", s.tenants_table), required("documents_table", s.documents_table)
        )

    def source_secrets(self) -> SourceSecrets:
        from ragline.adapters.aws.source_secrets import SecretsManagerSourceSecrets

        return SecretsManagerSourceSecrets(
            required("source_secrets_prefix", self._settings.source_secrets_prefix)
        )

    def sync_scheduler(self) -> SyncScheduler:
        from ragline.adapters.aws.sync_scheduler import EventBridgeSyncScheduler

        s = self._settings
        return EventBridgeSyncScheduler(
            group=required("sync_schedule_group", s.sync_schedule_group),
            queue_arn=required("ingest_queue_arn", s.ingest_queue_arn),
            role_arn=required("sync_scheduler_role_arn", s.sync_scheduler_role_arn),
        )

    def run_log(self) -> RunLog:
        """Run logs in the usage table, under ``RUNLOG#`` keys of their own (its TTL expires them)."""
        from ragline.adapters.aws.runs import DynamoDbRunLog

        return DynamoDbRunLog(required("usage_table", self._settings.usage_table))

    def conversations(self) -> ConversationStore:
        """Conversations in the usage table, under ``CONV#<tenant>`` (its TTL expires them)."""
        from ragline.adapters.aws.runs import DynamoDbConversationStore

        return DynamoDbConversationStore(required("usage_table", self._settings.usage_table))

    def evaluation_objects(self) -> ObjectStore:
        """Evaluation jobs and reports in the evaluations bucket (not the documents bucket: nothing
        in it is ingested)."""
        from ragline.adapters.aws.objects import S3ObjectStore

        return S3ObjectStore(required("evaluations_bucket", self._settings.evaluations_bucket))

    def limiter(self) -> RateLimiter:
        """Buckets and run slots live in the usage table, under ``LIMIT#`` keys of their own."""
        from ragline.adapters.aws.limits import DynamoDbRateLimiter

        return DynamoDbRateLimiter(required("usage_table", self._settings.usage_table))


EVENTS_FILE = "events.sqlite"
"""The embedded webhook subscriptions, once-marks and event outbox under ``settings.home``."""
TENANTS_FILE = "tenants.sqlite"
"""The embedded tenant registry's file under ``settings.home``."""


def required(name: str, value: str) -> str:
    """An aws backend setting that has no default (a table, the bucket)."""
    if not value:
        raise ConfigurationError(f"RAGLINE_{name.upper()} must be set for the aws backend")
    return value


def backend_for(settings: Settings) -> Backend:
    return AwsBackend(settings) if settings.backend == "aws" else EmbeddedBackend(settings)


def api_key_lookup(environ: Mapping[str, str] | None = None) -> ApiKeyLookup:
    """The authorizer's key reads on the configured backend's tenant store, built from the three
    values it needs: not from :class:`~ragline.config.Settings`, whose pydantic import would be
    most of the authorizer's cold start. Reads what :meth:`Container.registry` writes."""
    env = env_values(("backend", "tenants_table", "home"), environ)
    backend = env.get("backend", "embedded")
    if backend == "aws":
        from ragline.adapters.aws.api_keys import DynamoDbApiKeyLookup

        return DynamoDbApiKeyLookup(required("tenants_table", env.get("tenants_table", "")))
    if backend != "embedded":
        raise ConfigurationError(f"RAGLINE_BACKEND must be embedded or aws, not {backend!r}")
    from ragline.adapters.embedded.api_keys import SqliteApiKeyLookup

    return SqliteApiKeyLookup(os.path.join(env.get("home", DEFAULT_HOME), TENANTS_FILE))
