"""An index made before chunks carried filter fields gets them once, and a caller that may not change
the mapping (an AOSS reader) still starts."""

from __future__ import annotations

from typing import Any

import pytest
from opensearchpy.exceptions import AuthorizationException

from ragline.adapters.opensearch.filtering import FIELDS, ensure_fields


class Indices:
    def __init__(self, properties: dict[str, Any], *, may_update: bool = True) -> None:
        self.properties = properties
        self.may_update = may_update
        self.puts: list[dict[str, Any]] = []

    def get_mapping(self, index: str) -> dict[str, Any]:
        return {index: {"mappings": {"properties": dict(self.properties)}}}

    def put_mapping(self, index: str, body: dict[str, Any]) -> None:
        if not self.may_update:
            raise AuthorizationException(403, "security_exception", {})
        self.puts.append(body)
        self.properties.update(body["properties"])


class Client:
    def __init__(self, indices: Indices) -> None:
        self.indices = indices


def test_an_old_index_gets_the_fields_once() -> None:
    indices = Indices({"text": {"type": "text"}})
    ensure_fields(Client(indices), "chunks")  # type: ignore[arg-type]
    ensure_fields(Client(indices), "chunks")  # type: ignore[arg-type]
    assert indices.puts == [{"properties": FIELDS}]


def test_a_caller_without_the_right_to_update_the_mapping_carries_on() -> None:
    indices = Indices({"text": {"type": "text"}}, may_update=False)
    ensure_fields(Client(indices), "chunks")  # type: ignore[arg-type]
    assert indices.puts == []


def test_other_errors_are_not_swallowed() -> None:
    class Broken(Indices):
        def put_mapping(self, index: str, body: dict[str, Any]) -> None:
            raise RuntimeError("node down")

    with pytest.raises(RuntimeError):
        ensure_fields(Client(Broken({})), "chunks")  # type: ignore[arg-type]
