"""Vendor errors become Ragline errors in one place (:func:`ragline.adapters.opensearch.client.translate`),
by exception type and status."""

from __future__ import annotations

import pytest
from opensearchpy import exceptions as ex

from ragline import errors
from ragline.adapters.opensearch.client import translate

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("raised", "expected"),
    [
        (ex.ConflictError(409, "version_conflict_engine_exception", {}), errors.Conflict),
        (ex.NotFoundError(404, "index_not_found_exception", {}), errors.NotFound),
        (ex.TransportError(429, "rejected_execution_exception", {}), errors.Throttled),
        (ex.TransportError(503, "unavailable", {}), errors.DependencyUnavailable),
        (ex.ConnectionError("N/A", "refused", OSError()), errors.DependencyUnavailable),
        (ex.RequestError(400, "illegal_argument_exception", {}), errors.DependencyFailed),
    ],
)
def test_each_vendor_error_has_one_ragline_error(
    raised: Exception, expected: type[errors.RaglineError]
) -> None:
    with pytest.raises(expected) as caught, translate("a test"):
        raise raised
    assert type(caught.value) is expected
    assert caught.value.__cause__ is raised


def test_a_lost_compare_and_set_is_a_conflict_the_caller_can_retry_not_a_dependency_failure() -> None:
    with (
        pytest.raises(errors.Conflict, match="a concurrent change during placement write"),
        translate("placement write"),
    ):
        raise ex.ConflictError(409, "version_conflict_engine_exception", {})
