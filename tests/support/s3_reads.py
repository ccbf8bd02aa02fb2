"""An S3 client whose ``GetObject`` bodies count the bytes handed out: how much a read really read."""

from __future__ import annotations

from typing import Any


class CountingBody:
    def __init__(self, inner: Any, counter: list[int]) -> None:
        self._inner, self._counter = inner, counter

    def read(self, amt: int | None = None) -> bytes:
        data: bytes = self._inner.read(amt)
        self._counter.append(len(data))
        return data

    def close(self) -> None:
        self._inner.close()


class CountingClient:
    """The real (moto) client; ``read`` lists the sizes of the body reads, ``requests`` the GetObjects."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.read: list[int] = []
        self.requests: list[dict[str, Any]] = []

    def get_object(self, **request: Any) -> dict[str, Any]:
        self.requests.append(request)
        response: dict[str, Any] = self._inner.get_object(**request)
        return response | {"Body": CountingBody(response["Body"], self.read)}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)
