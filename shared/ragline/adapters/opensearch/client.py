"""The OpenSearch client and the one place vendor errors become Ragline errors."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NoReturn

from ragline import errors
from ragline.config import Settings

if TYPE_CHECKING:
    from opensearchpy import OpenSearch


@contextmanager
def translate(action: str) -> Iterator[None]:
    """Vendor errors → Ragline errors, by exception type and HTTP status, never by message text."""
    from opensearchpy import exceptions as ex
    from opensearchpy.helpers import BulkIndexError

    try:
        yield
    except (ex.ConnectionTimeout, ex.ConnectionError) as exc:
        raise errors.DependencyUnavailable(f"OpenSearch unreachable during {action}") from exc
    except BulkIndexError as exc:
        statuses = {next(iter(e.values())).get("status") for e in exc.errors}
        if statuses & {429}:
            raise errors.Throttled(f"OpenSearch throttled {action}") from exc
        raise errors.DependencyFailed(f"OpenSearch rejected {action}", failed=len(exc.errors)) from exc
    except ex.NotFoundError as exc:
        raise errors.NotFound(f"OpenSearch: not found during {action}") from exc
    except ex.ConflictError as exc:  # 409: a compare-and-set or a create lost to a concurrent write
        raise errors.Conflict(f"OpenSearch: a concurrent change during {action}") from exc
    except ex.TransportError as exc:
        status = exc.status_code if isinstance(exc.status_code, int) else 0
        if status == 429:
            raise errors.Throttled(f"OpenSearch throttled {action}") from exc
        if status >= 500 or status == 0:
            raise errors.DependencyUnavailable(f"OpenSearch failed during {action}", status=status) from exc
        raise errors.DependencyFailed(f"OpenSearch rejected {action}", status=status) from exc


NO_URL = "RAGLINE_OPENSEARCH_URL is required for the OpenSearch store"


class StoreNotDeployed:
    """The store of a function deployed without ``RAGLINE_OPENSEARCH_URL``: the template gives the URL
    only to the functions that use the store, so that the others (the authorizer, namespaces, keys,
    webhook delivery) are not created after the domain (15-30 minutes). A path that needs a model's
    space but not its store (a reindex's start: the embedder's dimension) works; any use of the store
    is the :class:`~ragline.errors.ConfigurationError` that :func:`build_client` raises."""

    def scoped(self, scope: object, view: object = None) -> NoReturn:
        raise errors.ConfigurationError(NO_URL)

    def purge_tenant(self, tenant_id: str) -> NoReturn:
        raise errors.ConfigurationError(NO_URL)

    def close(self) -> None:
        """Nothing was opened."""


def hosts(url: str) -> list[str]:
    """The nodes ``RAGLINE_OPENSEARCH_URL`` names: one endpoint (a domain's, a collection's) or several
    comma-separated node URLs (a self-managed cluster without a load balancer)."""
    return [u.strip() for u in url.split(",") if u.strip()]


def build_client(settings: Settings) -> OpenSearch:
    """A client spreading requests over :func:`hosts` in turn. A request whose node cannot be reached
    (refused, reset, timed out) or answers 502/503/504 is sent again, to the next node when there are
    several: a connection error also sets that node aside for a minute. ``max_retries`` 3 reaches every
    node of a 3-node cluster after one is lost; the node itself sends a shard's read to another copy."""
    from opensearchpy import OpenSearch, Urllib3HttpConnection

    if not hosts(settings.opensearch_url):
        raise errors.ConfigurationError(NO_URL)
    kwargs: dict[str, Any] = {
        "hosts": hosts(settings.opensearch_url),
        "connection_class": Urllib3HttpConnection,
        "timeout": 30,
        "max_retries": 3,
        "retry_on_timeout": True,
        "retry_on_status": (502, 503, 504),
        # No request compression: level-9 gzip of a bulk body (mostly vector digits) cost more CPU
        # than the whole write on the server, and responses are small (ids, scores, a few chunks).
        "http_compress": False,
    }
    if settings.opensearch_auth == "basic":
        kwargs["http_auth"] = (settings.opensearch_username, settings.opensearch_password.get_secret_value())
    elif settings.opensearch_auth == "sigv4":
        import boto3
        from opensearchpy import Urllib3AWSV4SignerAuth

        credentials = boto3.Session().get_credentials()
        kwargs["http_auth"] = Urllib3AWSV4SignerAuth(
            credentials, settings.aws_region, settings.opensearch_service
        )
    return OpenSearch(**kwargs)
