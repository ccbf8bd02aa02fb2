"""Identifiers and key hashes are matched whole: ``$`` also matches before a trailing newline, so
``"docs\\n"`` once passed as a namespace id and a digest plus ``"\\n"`` as a key hash."""

from __future__ import annotations

import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragline.domain.keys import hash_api_key, is_key_hash, require_key_hash
from ragline.domain.models import MAX_IDENTIFIER_LENGTH, TenantScope, check_identifier
from ragline.domain.tenancy import Namespace, Tenant

pytestmark = pytest.mark.unit
ID_CHARS = string.ascii_letters + string.digits + "_.-"
identifiers = st.builds(
    lambda head, tail: head + tail,
    st.sampled_from(string.ascii_letters + string.digits),
    st.text(ID_CHARS, max_size=MAX_IDENTIFIER_LENGTH - 1),
)


@given(identifiers)
def test_given_a_well_formed_id_then_it_is_accepted(value: str) -> None:
    assert check_identifier(value, "namespace_id") == value


@given(identifiers, st.characters(codec="utf-8").filter(lambda c: c not in ID_CHARS))
def test_given_any_other_character_anywhere_then_the_id_is_refused(value: str, odd: str) -> None:
    for candidate in (value + odd, odd + value, value[:1] + odd + value[1:]):
        with pytest.raises(ValueError, match="namespace_id"):
            check_identifier(candidate, "namespace_id")


BAD_IDS = {
    "trailing-newline": "docs\n",
    "crlf": "docs\r\n",
    "leading-newline": "\ndocs",
    "nul": "docs\x00",
    "tab": "do\tcs",
    "line-separator": "docs\u2028",
    "empty": "",
    "leading-dash": "-docs",
    "129-characters": "a" * 129,
}


@pytest.mark.parametrize("value", BAD_IDS.values(), ids=BAD_IDS.keys())
def test_given_control_characters_or_a_bad_length_then_the_id_is_refused(value: str) -> None:
    with pytest.raises(ValueError):
        check_identifier(value, "tenant_id")


def test_the_length_limit_is_128_characters() -> None:
    assert check_identifier("a" * 128, "tenant_id") == "a" * 128


def test_every_model_holding_an_id_refuses_a_trailing_newline() -> None:
    with pytest.raises(ValueError):
        TenantScope(tenant_id="acme", namespace_id="docs\n")
    with pytest.raises(ValueError):
        Namespace(tenant_id="acme\n", namespace_id="docs")
    with pytest.raises(ValueError):
        Tenant(tenant_id="acme\n")


def test_a_key_hash_followed_by_a_newline_is_no_key_hash() -> None:
    digest = hash_api_key("rl_example")
    assert is_key_hash(digest) and not is_key_hash(digest + "\n") and not is_key_hash("\n" + digest)
    with pytest.raises(ValueError):
        require_key_hash(digest + "\n", "key_1")
