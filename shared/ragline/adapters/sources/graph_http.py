"""Microsoft Graph's requests for its connector (:mod:`ragline.adapters.sources.graph`): the app's token,
the retries, Graph's JSON answers and what its refusals mean.

- **Token**: ``POST {loginUrl}/{tenant}/oauth2/v2.0/token`` with the form ``client_id``,
  ``client_secret``, ``grant_type=client_credentials``, ``scope=https://graph.microsoft.com/.default``
  → ``{"access_token", "expires_in", "token_type"}``. The token is kept (per connector, that is per
  sync step) until :data:`TOKEN_MARGIN` before it expires; a ``401`` from Graph drops it and asks for a
  new one once, then the request fails (:class:`~ragline.errors.DependencyFailed`).
- **Requests** go through :func:`ragline.outbound.request` (public addresses only; loopback only with
  ``allow_loopback``; bounded bytes and time; redirects not followed), and the bearer token only ever to
  ``graphUrl`` (a link Graph returns elsewhere is refused). ``429`` and ``503`` wait ``Retry-After``
  (seconds or an HTTP date; else a backoff), other ``5xx`` back off, three attempts in all (the retries
  of :mod:`ragline.adapters.sources.http`, :data:`RETRIES`); a ``429``/``503`` wait past ``until`` (or
  over :data:`~ragline.adapters.sources.http.MAX_WAIT`) ends the listing call early with
  ``retry_after`` and a cursor that asks the refused link again (in ``fetch``/``permissions`` it fails
  the item, :class:`~ragline.errors.DependencyUnavailable`). Each listing call reads one Graph page
  (delta or ``children``) and the folder lookups it needs — even past ``until``: a call always makes
  progress. Other ``5xx`` after the last attempt are :class:`~ragline.errors.DependencyUnavailable`
  (the step fails and is retried from its cursor). ``401`` after a fresh token and ``403`` (the app
  lacks ``Files.Read.All`` or ``Sites.Read.All``) are :class:`~ragline.errors.DependencyFailed`, so is
  an answer that is not JSON of the documented shape. Credentials and tokens appear in no error, log or
  ``repr``.
- **Downloads**: the pre-authenticated URL a file's ``content`` redirects to is fetched without the
  bearer token and never named in an error or a log (it carries its own credential).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

from ragline import errors, outbound
from ragline.adapters.sources import http

GRAPH_SCOPE = "https://graph.microsoft.com/.default"
PREFER = (
    "deltashowremovedasdeleted, deltatraversepermissiongaps, deltashowsharingchanges, hierarchicalsharing"
)
MIN_SECONDS = 5.0
RETRIES = http.Retries(min_seconds=MIN_SECONDS)
"""An attempt has :data:`MIN_SECONDS` at least; a ``429`` left after the last attempt is a throttle, a
``503`` an answer (:class:`~ragline.errors.DependencyUnavailable`); another ``5xx`` is waited out
past ``until`` too."""
DOWNLOAD_SECONDS = 60.0
TOKEN_MARGIN = 300.0
"""A token is renewed this long before it expires (half its life when that is shorter)."""
MAX_JSON_BYTES = 16 * 1024 * 1024


class GraphClient:
    """Graph (``graph_url``) for an app registration: ``send``, ``json`` and ``download``, with the
    token they need; the client secret and the token appear in no ``repr``."""

    def __init__(
        self,
        graph_url: str,
        token_url: str,
        client_id: str,
        secret: str,
        *,
        fetch: http.Fetch,
        allow_loopback: bool,
        sleep: Callable[[float], None],
        monotonic: Callable[[], float],
    ) -> None:
        self.graph_url = graph_url
        self._token_url = token_url
        self._client_id = client_id
        self._secret = secret
        self._monotonic = monotonic
        self._http = http.Requester(
            fetch, RETRIES, allow_loopback=allow_loopback, sleep=sleep, monotonic=monotonic
        )
        self._token: str = ""
        self._token_until = 0.0

    def __repr__(self) -> str:
        return f"GraphClient({self.graph_url!r})"

    def ours(self, link: str) -> bool:
        return link.startswith(self.graph_url + "/")

    def link(self, link: object) -> str:
        """A link Graph returned: followed (with the bearer token) only when it is Graph's own."""
        if not isinstance(link, str) or not self.ours(link):
            raise errors.DependencyFailed("Microsoft Graph returned a link outside its own address")
        return link

    def json(
        self,
        url: str,
        until: float,
        *,
        delta: bool = False,
        expired_ok: bool = False,
        missing_ok: bool = False,
    ) -> dict[str, Any] | None:
        """A Graph GET's JSON object (None: 404 and ``missing_ok``)."""
        headers = {"accept": "application/json", **({"prefer": PREFER} if delta else {})}
        response = self.send("GET", url, until, auth=True, headers=headers, max_bytes=MAX_JSON_BYTES)
        if response.status == 200:
            return http.json_object(response.body, "Microsoft Graph answered with something")
        if response.status == 404 and missing_ok:
            return None
        if response.status == 410 and delta and expired_ok:
            raise errors.CursorExpired("Microsoft Graph no longer honours the delta token (resync required)")
        raise self.failure(response, "Microsoft Graph")

    @staticmethod
    def failure(response: outbound.Response, what: str) -> errors.RaglineError:
        status, code = response.status, error_code(response.body)
        if status == 401:
            return errors.DependencyFailed(
                "Microsoft Graph refused the app's token (401): check the app registration",
                status=status,
                code=code,
            )
        if status == 403:
            return errors.DependencyFailed(
                "Microsoft Graph refused access (403): the app needs the application permission "
                "Files.Read.All or Sites.Read.All, granted by an administrator",
                status=status, code=code,
            )  # fmt: skip
        if status >= 500 or status == 429:
            return errors.DependencyUnavailable(f"{what} answered {status}", status=status, code=code)
        return errors.DependencyFailed(f"{what} answered {status}", status=status, code=code)

    @staticmethod
    @contextmanager
    def unthrottled() -> Iterator[None]:
        """A request outside a listing: a wait past its deadline fails it (the item alone)."""
        try:
            yield
        except http.Throttled as wait:
            raise errors.DependencyUnavailable(
                f"Microsoft Graph asked to wait {wait.seconds:.0f} s", retry_after=wait.seconds
            ) from None

    def send(
        self,
        method: str,
        url: str,
        until: float,
        *,
        auth: bool,
        headers: Mapping[str, str] | None = None,
        body: bytes = b"",
        max_bytes: int = outbound.MAX_RESPONSE_BYTES,
        seconds: float = http.REQUEST_SECONDS,
    ) -> outbound.Response:
        """A request with :data:`RETRIES` (:class:`~ragline.adapters.sources.http.Throttled` when a wait
        cannot be made). With ``auth`` the bearer token goes along, renewed once on a ``401``. Each
        attempt takes at most ``seconds`` (at least :data:`MIN_SECONDS`, even past ``until``)."""
        return self._http.send(
            method, url, until, headers=headers, body=body, max_bytes=max_bytes, seconds=seconds,
            sign=(lambda: {"authorization": f"Bearer {self._access_token(until)}"}) if auth else None,
            renew=self._renew if auth else None,
        )  # fmt: skip

    def _renew(self, response: outbound.Response) -> bool:
        """A ``401``: the token is dropped, and the request sent again with a new one."""
        if response.status != 401:
            return False
        self._token, self._token_until = "", 0.0
        return True

    def _access_token(self, until: float) -> str:
        if self._token and self._monotonic() < self._token_until:
            return self._token
        form = urlencode(
            {
                "client_id": self._client_id,
                "client_secret": self._secret,
                "grant_type": "client_credentials",
                "scope": GRAPH_SCOPE,
            }
        ).encode()
        response = self.send(
            "POST", self._token_url, until, auth=False, body=form,
            headers={"content-type": "application/x-www-form-urlencoded", "accept": "application/json"},
        )  # fmt: skip
        if response.status != 200:
            code = error_code(response.body)
            if response.status >= 500:
                raise errors.DependencyUnavailable(
                    f"Microsoft Entra ID answered {response.status}", status=response.status
                )
            raise errors.DependencyFailed(
                f"Microsoft Entra ID refused the app's credentials ({response.status} {code or 'error'}): "
                "check the tenant, clientId and clientSecret",
                status=response.status, code=code,
            )  # fmt: skip
        try:
            value = json.loads(response.body)
            token, lifetime = value["access_token"], float(value.get("expires_in", 3600))
        except (ValueError, KeyError, TypeError, RecursionError):
            token, lifetime = None, 0.0
        if not isinstance(token, str) or not token:
            raise errors.DependencyFailed("Microsoft Entra ID answered a token request without a token")
        self._token = token
        self._token_until = self._monotonic() + max(0.0, lifetime - min(TOKEN_MARGIN, lifetime / 2))
        return token

    def download(self, item_id: str, location: str, deadline: float, *, max_bytes: int) -> bytes:
        """The pre-authenticated download URL, fetched without the bearer token; never named in an error."""
        if urlsplit(location).scheme not in ("http", "https"):
            raise errors.DependencyFailed("Microsoft Graph redirected the download nowhere", item_id=item_id)
        try:
            with self.unthrottled():
                response = self.send(
                    "GET", location, deadline, auth=False, max_bytes=max_bytes, seconds=DOWNLOAD_SECONDS
                )
        except errors.RaglineError as exc:  # outbound's messages name the URL: its credential stays here
            raise type(exc)(f"the download of {item_id} failed ({exc.code})", item_id=item_id) from None
        if response.status == 200:
            return response.body
        if response.status in (404, 410):
            raise errors.NotFound("the file is gone from the drive", item_id=item_id)
        raise errors.DependencyFailed(
            f"the download of {item_id} answered {response.status}", item_id=item_id, status=response.status
        )


def quote_id(item_id: str) -> str:
    """A drive item's id as a path segment."""
    return quote(item_id, safe="!")


def page_values(body: dict[str, Any]) -> list[dict[str, Any]]:
    """A Graph collection's objects (``value``)."""
    found = body.get("value")
    if not isinstance(found, list):
        raise errors.DependencyFailed("a Microsoft Graph collection without its value list")
    return [v for v in found if isinstance(v, dict)]


def error_code(body: bytes) -> str:
    """Graph's ``error.code`` or Entra's ``error`` (a short identifier, nothing more of the answer)."""
    try:
        value = json.loads(body)
    except (ValueError, RecursionError):
        return ""
    code = value.get("error") if isinstance(value, dict) else None
    if isinstance(code, dict):
        code = code.get("code")
    if not isinstance(code, str):
        return ""
    return "".join(c for c in code if c.isalnum() or c in "_-.")[:60]
