"""The rehearsal's view of OpenSearch Serverless, broken on purpose without a full run: which data access
permission each request the store makes needs (AWS's table), requests outside the table refused, the
data access policy's matcher, and the SigV4 proxy scoped to one service."""

from __future__ import annotations

import json

import pytest

from tests.rehearsal.aoss import (
    COLLECTION_ARN,
    DataAccess,
    DataAccessPolicy,
    UnmappedRequest,
    collection_calls,
    permissions,
)
from tests.rehearsal.cloudformation import AwsCall
from tests.rehearsal.loopback import Answer, Request
from tests.rehearsal.signed_proxy import SignedProxy

pytestmark = pytest.mark.unit
READER = "arn:aws:iam::123456789012:role/reader"
WRITER = "arn:aws:iam::123456789012:role/writer"
POLICY = json.dumps(
    [
        {
            "Rules": [
                {
                    "ResourceType": "index",
                    "Resource": ["index/rl-dev-1/*"],
                    "Permission": ["aoss:CreateIndex", "aoss:DescribeIndex", "aoss:ReadDocument"],
                }
            ],
            "Principal": [READER],
        },
        {
            "Rules": [
                {
                    "ResourceType": "index",
                    "Resource": ["index/rl-dev-1/*"],
                    "Permission": ["aoss:CreateIndex", "aoss:ReadDocument", "aoss:WriteDocument"],
                }
            ],
            "Principal": [WRITER],
        },
    ]
)


def ndjson(*lines: dict[str, object]) -> bytes:
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


@pytest.mark.parametrize(
    ("method", "path", "expected"),
    [
        ("HEAD", "/rh-chunks", "aoss:DescribeIndex"),
        ("PUT", "/rh-chunks", "aoss:CreateIndex"),
        ("POST", "/rh-chunks/_search?routing=acme", "aoss:ReadDocument"),
        ("POST", "/rh-chunks/_count", "aoss:ReadDocument"),
        ("GET", "/rh-chunks/_doc/abc%2F1", "aoss:ReadDocument"),
        ("PUT", "/rh-chunks/_doc/abc", "aoss:WriteDocument"),
        ("DELETE", "/rh-chunks/_doc/abc", "aoss:WriteDocument"),
        ("PUT", "/rh-chunks/_mapping", "aoss:UpdateIndex"),
        ("DELETE", "/rh-chunks", "aoss:DeleteIndex"),
    ],
)
def test_a_request_on_an_index_needs_awss_permission_on_that_index(
    method: str, path: str, expected: str
) -> None:
    assert permissions(method, path, None) == [(expected, "rh-chunks")]


def test_index_less_requests_need_the_permission_on_every_index_their_body_names() -> None:
    bulk = ndjson(
        {"index": {"_index": "a", "_id": "1"}},
        {"text": "x"},
        {"delete": {"_index": "b", "_id": "2"}},
        {"create": {"_index": "c"}},
        {"text": "y"},
    )
    assert permissions("POST", "/_bulk", bulk) == [
        ("aoss:WriteDocument", "a"),
        ("aoss:WriteDocument", "b"),
        ("aoss:WriteDocument", "c"),
    ]
    msearch = ndjson({"index": "a"}, {"query": {}}, {"index": "b", "routing": "t"}, {"query": {}})
    assert permissions("POST", "/_msearch", msearch) == [
        ("aoss:ReadDocument", "a"),
        ("aoss:ReadDocument", "b"),
    ]
    mget = json.dumps({"docs": [{"_index": "a", "_id": "1"}, {"_index": "b", "_id": "2"}]}).encode()
    assert permissions("POST", "/_mget", mget) == [("aoss:ReadDocument", "a"), ("aoss:ReadDocument", "b")]
    assert permissions("POST", "/a,b/_search", None) == [
        ("aoss:ReadDocument", "a"),
        ("aoss:ReadDocument", "b"),
    ]


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/rh-chunks/_refresh"),
        ("POST", "/rh-chunks/_delete_by_query"),
        ("GET", "/_cluster/health"),
        ("PUT", "/_search/pipeline/p"),
        ("POST", "/_bulk/x"),
        ("GET", "/"),
    ],
)
def test_a_request_outside_awss_table_is_refused_not_guessed(method: str, path: str) -> None:
    with pytest.raises(UnmappedRequest):
        permissions(method, path, None)


def test_every_request_needs_api_access_on_the_collection_and_its_index_permission() -> None:
    iam, data = collection_calls("SearchFunction", "POST", "/rh-chunks/_search", None, "rl-dev-1")
    assert iam == [AwsCall("SearchFunction", "aoss:APIAccessAll", COLLECTION_ARN)]
    assert data == [DataAccess("SearchFunction", "aoss:ReadDocument", "index/rl-dev-1/rh-chunks")]


def test_the_policy_grants_a_permission_only_to_its_principals_on_its_collection() -> None:
    policy = DataAccessPolicy(POLICY)
    assert policy.principals == {READER, WRITER}
    assert policy.allows(READER, "aoss:ReadDocument", "index/rl-dev-1/rh-chunks")
    assert not policy.allows(READER, "aoss:WriteDocument", "index/rl-dev-1/rh-chunks")
    assert policy.allows(WRITER, "aoss:WriteDocument", "index/rl-dev-1/rh-chunks")
    assert not policy.allows(WRITER, "aoss:DescribeIndex", "index/rl-dev-1/rh-chunks")
    assert not policy.allows(WRITER, "aoss:WriteDocument", "index/rl-prod-2/rh-chunks")  # another collection
    assert not policy.allows("arn:aws:iam::123456789012:role/other", "aoss:ReadDocument", "index/rl-dev-1/x")
    assert not policy.allows(READER, "aoss:ReadDocument", "collection/rl-dev-1")  # no collection rule


class Recorded(SignedProxy):
    """The proxy's decision alone: a let-through request is answered here instead of forwarded."""

    def forward(self, request: Request, *, drop: tuple[str, ...] = ()) -> Answer:
        return Answer(200, [], b"{}")


def signed(service: str) -> Request:
    auth = f"AWS4-HMAC-SHA256 Credential=AKIAFN/20261202/us-east-1/{service}/aws4_request, SignedHeaders=host"
    headers = {"authorization": auth, "x-amz-date": "20261202T000000Z"}
    return Request("POST", "/_bulk", headers, b"{}\n")


def test_the_proxy_lets_through_only_requests_signed_for_its_service() -> None:
    collection, domain = Recorded("http://unused", "aoss"), Recorded("http://unused")
    assert collection.answer(signed("es")).status == 403 and collection.refused == [("POST", "/_bulk")]
    assert collection.answer(signed("aoss")).status == 200
    assert [(c.key, c.method, c.path, c.body) for c in collection.calls] == [
        ("AKIAFN", "POST", "/_bulk", b"{}\n")
    ]
    assert domain.answer(signed("aoss")).status == 403 and domain.answer(signed("es")).status == 200


def test_the_domain_proxy_creates_a_faiss_field_as_lucenes_and_passes_everything_else() -> None:
    """The local node has no faiss library and the template deploys faiss on a domain: an index
    creation's faiss fields become Lucene's (the encoder dropped), the length follows the body; a
    collection's proxy and other requests are left as sent."""
    from ragline.adapters.opensearch import requests as rq

    class Kept(SignedProxy):
        def forward(self, request: Request, *, drop: tuple[str, ...] = ()) -> Answer:
            self.forwarded = request
            return Answer(200, [], b"{}")

    body = json.dumps(rq.index_body(8, engine="faiss")).encode()
    create = signed("es")._replace(method="PUT", path="/ragline-chunks-m-8-g1", body=body)
    domain = Kept("http://unused")
    domain.answer(create)
    sent = json.loads(domain.forwarded.body or b"")
    lucene = rq.index_body(8)
    assert sent["mappings"] == lucene["mappings"]
    assert sent["settings"]["index"]["knn.advanced.approximate_threshold"] == rq.FAISS_GRAPH_THRESHOLD
    assert domain.forwarded.headers["content-length"] == str(len(domain.forwarded.body or b""))
    domain.answer(signed("es"))  # a _bulk: as sent
    assert domain.forwarded.body == b"{}\n"
    collection = Kept("http://unused", "aoss")
    collection.answer(signed("aoss")._replace(method="PUT", path="/ragline-chunks-m-8-g1", body=body))
    assert collection.forwarded.body == body  # the AOSS proxy behind it does its own
