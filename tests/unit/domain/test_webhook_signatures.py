"""The delivery signature (``t=<ts>,v1=<hmac>``) as a receiver checks it, and the URL rules."""

from __future__ import annotations

import hashlib
import hmac

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from ragline import errors
from ragline.domain.webhooks import check_url, sign, verify

SECRET = "whsec_test"
BODY = b'{"id":"evt_1","type":"document.indexed"}'


def test_the_signature_is_hmac_sha256_of_timestamp_dot_body() -> None:
    header = sign(SECRET, BODY, 1_700_000_000)
    expected = hmac.new(SECRET.encode(), b"1700000000." + BODY, hashlib.sha256).hexdigest()
    assert header == f"t=1700000000,v1={expected}"


def test_a_fresh_signature_verifies() -> None:
    assert verify(SECRET, BODY, sign(SECRET, BODY, 1000), now=1000 + 299)
    assert verify(SECRET, BODY, sign(SECRET, BODY, 1000), now=1000 - 299)


def test_a_replay_outside_the_tolerance_is_refused() -> None:
    assert not verify(SECRET, BODY, sign(SECRET, BODY, 1000), now=1000 + 301)


def test_another_secret_body_or_timestamp_is_refused() -> None:
    header = sign(SECRET, BODY, 1000)
    assert not verify("whsec_other", BODY, header, now=1000)
    assert not verify(SECRET, BODY + b" ", header, now=1000)
    forged = header.replace("t=1000", "t=1001")  # a new timestamp on the old signature
    assert not verify(SECRET, BODY, forged, now=1001)


@given(st.text(max_size=80))
@example("t=\u00b2,v1=00")  # "²".isdigit() is True, int("²") raises
@example("t=\u0661\u0660\u0660\u0660,v1=00")  # Arabic-Indic digits: not a timestamp either
def test_garbage_headers_never_verify_nor_raise(header: str) -> None:
    assert not verify(SECRET, BODY, header, now=1000)


@pytest.mark.parametrize(
    "url",
    [
        "http://hooks.example.com/x",
        "https://127.0.0.1/x",
        "https://10.0.0.5/x",
        "https://169.254.169.254/latest/meta-data",
        "https://[::1]/x",
        "https://localhost/x",
        "https://user:pw@hooks.example.com/x",
        "ftp://hooks.example.com/x",
        "https:///nohost",
    ],
)
def test_urls_refused(url: str) -> None:
    with pytest.raises(errors.InvalidRequest):
        check_url(url)


def test_loopback_http_only_where_allowed() -> None:
    assert check_url("https://hooks.example.com/ragline") == "https://hooks.example.com/ragline"
    assert check_url("http://127.0.0.1:8080/hook", loopback_http=True)
    with pytest.raises(errors.InvalidRequest):
        check_url("http://127.0.0.1:8080/hook")
    with pytest.raises(errors.InvalidRequest):
        check_url("http://10.0.0.5/hook", loopback_http=True)


@pytest.mark.parametrize(
    "url",
    [
        "https://127.1/x",  # the legacy IPv4 forms resolvers read as addresses
        "https://2130706433/x",
        "https://0x7f000001/x",
        "https://0177.0.0.1/x",
        "https://0/x",
        "https://169.254.169.254./latest",  # a trailing dot is the same address or name
        "https://localhost./x",
        "https://hooks.localhost./x",
        "https://:@hooks.example.com/x",  # empty credentials are credentials
    ],
)
def test_loopback_and_private_addresses_in_any_spelling_are_refused(url: str) -> None:
    with pytest.raises(errors.InvalidRequest, match=r"private, loopback|no credentials"):
        check_url(url)


@pytest.mark.parametrize(
    "url",
    [
        "https://bücher.example/x",  # a request cannot carry it: xn--bcher-kva.example can
        "https://hooks.example.com/café",
        "https://１２７.０.０.１/x",
        " https://hooks.example.com/x",
        "https://hooks.example.com/x\r\nX-Injected: 1",
        "https://hooks.example.com:99999/x",
        "https://hooks.example.com:abc/x",
        "https://hooks.example.com:0/x",
    ],
)
def test_urls_no_delivery_could_be_sent_to_are_refused(url: str) -> None:
    with pytest.raises(errors.InvalidRequest):
        check_url(url)


@pytest.mark.parametrize(
    "url",
    [
        "https://xn--bcher-kva.example/x",
        "https://8.8.8.8/x",
        "https://134744072/x",
        "https://hooks.example.com:8443/x",
    ],
)
def test_public_urls_in_any_spelling_are_kept(url: str) -> None:
    assert check_url(url) == url
