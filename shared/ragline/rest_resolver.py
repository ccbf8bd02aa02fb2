"""A Powertools REST resolver whose per-request state belongs to the request that set it.

Powertools' ``resolve`` stores the current event and Lambda context on the *class* ``BaseRouter``
(shared by every resolver of the process) and the route's context in one dict per resolver, cleared
when any request ends. One request at a time per process (Lambda, ``ragline serve`` today) never
notices; two requests resolved at once in threads of one process read each other's event — and so
each other's tenant. Here all of that state lives in a :class:`~contextvars.ContextVar` set by
:meth:`PerRequestResolver.resolve` for exactly one request: every read Powertools and the handlers
make (``current_event``, ``lambda_context``, ``context``) goes through properties to the state of
the request running in this thread (or task), and outside a request there is none to read.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from aws_lambda_powertools.event_handler import APIGatewayRestResolver

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.data_classes import APIGatewayProxyEvent
    from aws_lambda_powertools.utilities.typing import LambdaContext


@dataclass
class _Request:
    event: APIGatewayProxyEvent
    lambda_context: LambdaContext
    context: dict[str, Any] = field(default_factory=dict)
    stack_frames: list[str] = field(default_factory=list)


_REQUEST: ContextVar[_Request] = ContextVar("ragline_rest_request")


def _request() -> _Request:
    """The request being resolved in this thread or task; ``LookupError`` outside one."""
    return _REQUEST.get()


def _outside_request(value: Any) -> None:
    """Powertools' constructor assigns empty per-request state before any request: nothing to keep.
    Anything else assigned outside a request would be shared by every request, so it is refused."""
    if value:
        raise RuntimeError("per-request state is set by resolve(), for one request")


class PerRequestResolver(APIGatewayRestResolver):
    """``APIGatewayRestResolver`` with the current event, Lambda context and route context per request."""

    def resolve(self, event: Mapping[str, Any], context: LambdaContext, **values: Any) -> dict[str, Any]:
        """Resolve ``event`` with ``values`` in its context (read back with ``app.context[...]``)."""
        # Powertools' own conversion: it gives the event the resolver's JSON body parser.
        proxy_event = cast("APIGatewayProxyEvent", self._to_proxy_event(dict(event)))
        token = _REQUEST.set(_Request(proxy_event, context, dict(values)))
        try:
            return super().resolve(event, context)
        finally:
            _REQUEST.reset(token)

    @property  # type: ignore[override]
    def current_event(self) -> APIGatewayProxyEvent:
        return _request().event

    @current_event.setter
    def current_event(self, value: APIGatewayProxyEvent) -> None:
        _request().event = value

    @property
    def lambda_context(self) -> LambdaContext:
        return _request().lambda_context

    @lambda_context.setter
    def lambda_context(self, value: LambdaContext) -> None:
        _request().lambda_context = value

    @property
    def context(self) -> dict[str, Any]:
        return _request().context

    @context.setter
    def context(self, value: dict[str, Any]) -> None:
        if _REQUEST.get(None) is None:
            _outside_request(value)
        else:
            _request().context = value

    @property
    def processed_stack_frames(self) -> list[str]:
        return _request().stack_frames

    @processed_stack_frames.setter
    def processed_stack_frames(self, value: list[str]) -> None:
        if _REQUEST.get(None) is None:
            _outside_request(value)
        else:
            _request().stack_frames = value
