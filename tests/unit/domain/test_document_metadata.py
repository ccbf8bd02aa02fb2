"""Issue 29 #1: the S3 sidecar's shape (Bedrock Knowledge Bases' ``metadataAttributes`` plus Ragline's
``access``), read into what a document states, and written back the same way."""

from __future__ import annotations

import json

import pytest

from ragline import errors
from ragline.domain.document_metadata import (
    MAX_SIDECAR_BYTES,
    document_of,
    is_sidecar,
    parse_sidecar,
    sidecar_body,
    sidecar_of,
)

pytestmark = pytest.mark.unit


def test_plain_and_typed_bedrock_values_read_as_the_values_they_stand_for() -> None:
    given = parse_sidecar(
        json.dumps(
            {
                "metadataAttributes": {
                    "team": "ops",
                    "year": 2024,
                    "draft": True,
                    "tags": ["a", "b"],
                    "s": {"value": {"type": "STRING", "stringValue": "x"}},
                    "n": {"value": {"type": "NUMBER", "numberValue": 3.5}},
                    "b": {"value": {"type": "BOOLEAN", "booleanValue": False}},
                    "l": {"value": {"type": "STRING_LIST", "stringListValue": ["p"]}},
                },
                "access": {"users": ["ann"], "groups": ["hr"]},
            }
        ).encode()
    )
    assert dict(given.attributes) == {
        "team": "ops", "year": 2024, "draft": True, "tags": ["a", "b"],
        "s": "x", "n": 3.5, "b": False, "l": ["p"],
    }  # fmt: skip
    assert given.readers() == ("g:hr", "u:ann")


def test_a_sidecar_with_no_access_is_open_to_everyone() -> None:
    assert parse_sidecar(b'{"metadataAttributes": {"a": 1}}').readers() == ()
    assert dict(parse_sidecar(b"{}").attributes) == {}


@pytest.mark.parametrize(
    "body",
    [
        b"{not json",
        b"\xff\xfe",
        b"[]",
        b'{"metadataAttributes": [], "access": {}}',
        b'{"metadataAttributes": {}, "other": 1}',
        b'{"access": {"users": "ann"}}',
        b'{"access": {"roles": []}}',
        b'{"metadataAttributes": {"a": {"value": {"type": "DATE", "stringValue": "x"}}}}',
        b'{"metadataAttributes": {"a": {"value": {"type": "NUMBER"}}}}',
        b'{"metadataAttributes": {"a": {"v": 1}}}',
        b" " * (MAX_SIDECAR_BYTES + 1),
    ],
)
def test_a_bad_sidecar_is_an_invalid_request_naming_the_sidecar(body: bytes) -> None:
    with pytest.raises(errors.InvalidRequest) as raised:
        parse_sidecar(body)
    assert raised.value.message.startswith("metadata sidecar:")


def test_paths_and_the_written_form_round_trip() -> None:
    assert (
        is_sidecar("a/b.pdf.metadata.json") and not is_sidecar("a/b.pdf") and not is_sidecar(".metadata.json")
    )
    assert document_of(sidecar_of("a/b.pdf")) == "a/b.pdf"
    written = sidecar_body({"year": 2024.0, "tags": ["x"]}, ("g:hr", "u:ann"))
    again = parse_sidecar(written)
    assert dict(again.attributes) == {"year": 2024.0, "tags": ["x"]} and again.readers() == ("g:hr", "u:ann")
    assert json.loads(sidecar_body({}, ())) == {"metadataAttributes": {}}
