"""``RaglineClient``: the API from Python, typed with the same models the server uses.

    from ragline.client import RaglineClient

    with RaglineClient("https://api.example.com", api_key="rl_...") as rl:
        hits = rl.search("docs", "frame warranty").hits
        for event in rl.chat("How long is the frame warranty?", namespaces=["docs"]):
            if event.type == "text":
                print(event.text, end="")

Errors arrive as the server's own typed errors (:mod:`ragline.errors`: ``NamespaceNotFound``,
``Forbidden``, ``QuotaExceeded``…), each with the HTTP ``status`` set, parsed from the one error shape.
Requests are retried with exponential backoff (honouring ``Retry-After``) on connection failures, 429
and 502/503/504 — but only when a retry cannot do the work twice: GET, PATCH and DELETE, and the
metered POSTs (chat, search, hosting search), which always carry an ``Idempotency-Key`` (yours, or one
made per call), so a retry replays the recorded run instead of running and charging it again. A
stream is retried before its first event; one that drops later is resumed from its last event's id.
Only ``httpx`` and ``pydantic`` are needed.

End users: a key created with ``assert_user=True`` acts for the user its client names
(``rl.for_user("u-42", ["hr"])``: the ``Ragline-User-Id`` / ``Ragline-User-Groups`` headers); a
tenant identity provider's token is passed as ``api_key`` (it is sent as the same bearer token).
Every run takes ``filter=`` (the JSON filter of the README's Filters), applied inside the store.

The client is one class over the API's resources, one module each: :mod:`.runs` (runs, their
events, conversations), :mod:`.documents` (documents, data sources), :mod:`.evaluations`,
:mod:`.admin` (namespaces, keys, identity provider, webhooks, usage), all on :mod:`.transport`
(requests and retries), :mod:`.api_errors` (the error shape) and :mod:`.sse` (the event stream).
"""

from __future__ import annotations

import copy

# ``ragline.client.time`` stays reachable: the retry backoff sleeps through ``time.sleep`` (in
# :mod:`.transport`), and tests replace that to retry without waiting.
import time as time
from collections.abc import Sequence

from .admin import AdminRequests
from .api_errors import api_error
from .documents import DocumentRequests
from .evaluations import EvaluationRequests
from .runs import Message, RunRequests
from .transport import MAX_RETRY_WAIT_S, RETRY_STATUSES, M

__all__ = ["MAX_RETRY_WAIT_S", "RETRY_STATUSES", "M", "Message", "RaglineClient", "api_error"]


class RaglineClient(RunRequests, DocumentRequests, EvaluationRequests, AdminRequests):
    """The whole API (see the module docstring): ``RaglineClient(base_url, api_key, *, timeout=120.0,
    max_retries=3, backoff_s=0.5, transport=None)``, a context manager that closes its connections."""

    def for_user(self, user_id: str, groups: Sequence[str] = ()) -> RaglineClient:
        """This client acting for an end user (its key needs ``assertUser``). It shares this client's
        connections: close either one, and both are closed."""
        other = copy.copy(self)
        other._user = {"Ragline-User-Id": user_id}
        if groups:
            other._user["Ragline-User-Groups"] = ",".join(groups)
        return other

    def __enter__(self) -> RaglineClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()
