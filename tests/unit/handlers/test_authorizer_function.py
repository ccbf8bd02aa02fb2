"""The authorizer Lambda handler as AWS runs it: no container, the key read through the backend's
ApiKeyLookup; and the import that every cold start pays, which must stay free of heavy modules."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ragline.cli.serve import LambdaContext
from ragline.config import Settings
from ragline.services.authentication import Principal
from ragline.services.namespaces import new_namespace
from ragline.wiring import Container
from tests.support.lambda_harness import FUNCTIONS, load_handler

pytestmark = pytest.mark.unit
ARN = "arn:aws:execute-api:us-east-1:123456789012:abc123/dev/POST/v1/namespaces/docs/search"
ROOT = Path(__file__).parents[3]


def event(authorization: str | None) -> dict[str, Any]:
    headers = {} if authorization is None else {"Authorization": authorization}
    return {"type": "REQUEST", "methodArn": ARN, "headers": headers}


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Container, dict[str, str]]:
    """Given a home with two tenants' keys, and the function's environment pointing at it."""
    c = Container(Settings(home=tmp_path))
    c.tenancy.create_tenant("acme")
    c.tenancy.create_tenant("globex")
    c.registry.create_namespace(new_namespace("acme", "docs"))
    keys = {
        "admin": c.tenancy.create_key("acme", scopes=["admin", "chat"])[0],
        "reader": c.tenancy.create_key("acme", scopes=["search"], namespaces=["docs"])[0],
        "globex": c.tenancy.create_key("globex", scopes=["chat"])[0],
    }
    revoked, record = c.tenancy.create_key("acme", scopes=["chat"])
    c.tenancy.revoke_key("acme", record.key_id)
    keys["revoked"] = revoked
    monkeypatch.setenv("RAGLINE_BACKEND", "embedded")
    monkeypatch.setenv("RAGLINE_HOME", str(tmp_path))
    return c, keys


def test_a_valid_key_becomes_its_principal_for_the_whole_stage(
    world: tuple[Container, dict[str, str]],
) -> None:
    container, keys = world
    authorizer = load_handler("authorizer")
    policy = authorizer.lambda_handler(event(f"Bearer {keys['reader']}"), LambdaContext())
    assert policy["principalId"] == "acme"
    statement = policy["policyDocument"]["Statement"][0]
    assert statement["Effect"] == "Allow"
    assert statement["Resource"] == "arn:aws:execute-api:us-east-1:123456789012:abc123/dev/*"
    principal = Principal.from_context(policy["context"])
    assert (principal.scopes, principal.namespaces) == (frozenset({"search"}), frozenset({"docs"}))
    # the same answer as through the container's registry (the tests' and the local server's way)
    with_container = authorizer.lambda_handler(event(f"Bearer {keys['reader']}"), LambdaContext(), container)
    assert with_container == policy


@pytest.mark.parametrize("which", ["revoked", "malformed", "unknown", "missing", "basic", "suspended"])
def test_anything_but_an_active_tenants_live_key_is_unauthorized(
    world: tuple[Container, dict[str, str]], which: str
) -> None:
    container, keys = world
    container.tenancy.set_status("globex", "suspended")
    header = {
        "revoked": f"Bearer {keys['revoked']}",
        "malformed": "Bearer rl_short",
        "unknown": "Bearer rl_" + "x" * 43,
        "missing": None,
        "basic": f"Basic {keys['admin']}",
        "suspended": f"Bearer {keys['globex']}",
    }[which]
    with pytest.raises(Exception, match=r"^Unauthorized$"):
        load_handler("authorizer").lambda_handler(event(header), LambdaContext())


def test_a_valid_key_records_its_last_use(world: tuple[Container, dict[str, str]]) -> None:
    container, keys = world
    load_handler("authorizer").lambda_handler(event(f"Bearer {keys['admin']}"), LambdaContext())
    [admin] = [k for k in container.tenancy.list_keys("acme") if "admin" in k.scopes]
    assert admin.last_used_at is not None


def test_an_unknown_backend_is_a_configuration_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGLINE_BACKEND", "dynamo")
    with pytest.raises(Exception, match="RAGLINE_BACKEND"):
        load_handler("authorizer").lambda_handler(event("Bearer rl_" + "x" * 43), LambdaContext())


def test_importing_the_authorizer_loads_no_pydantic_powertools_or_sdk() -> None:
    """Its cold start: a fresh interpreter imports the handler as Lambda does."""
    code = (
        "import json, runpy, sys; runpy.run_path(sys.argv[1]);"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "shared"), str(ROOT)])}
    out = subprocess.run(
        [sys.executable, "-c", code, str(FUNCTIONS / "authorizer" / "app.py")],
        env=env, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    loaded = set(json.loads(out))
    heavy = {
        "pydantic",
        "pydantic_core",
        "aws_lambda_powertools",
        "boto3",
        "botocore",
        "numpy",
        "dataclasses",
        "jwt",  # loaded by the first identity token, never by a key's request
        "cryptography",
    }
    assert not loaded & heavy, loaded & heavy


def test_a_tenant_identity_providers_token_is_read_through_the_backends_lookup(
    world: tuple[Container, dict[str, str]],
) -> None:
    """As deployed (no container): the provider is found by the token's issuer in the tenants store."""
    from ragline.domain.access import UserContext
    from ragline.domain.identity import IdentityProvider
    from tests.support.identity_tokens import SigningKey, claims

    container, _ = world
    signer = SigningKey("k1")
    issuer = "https://idp.acme.test/"
    container.registry.put_identity_provider(
        "acme", IdentityProvider(issuer=issuer, audiences=("app",), jwks=(signer.jwk,), scopes=("search",))
    )
    policy = load_handler("authorizer").lambda_handler(
        event(f"Bearer {signer.token(claims(issuer, user='dana'))}"), LambdaContext()
    )
    principal = Principal.from_context(policy["context"])
    assert (principal.tenant_id, principal.scopes, principal.user) == (
        "acme", frozenset({"search"}), UserContext("dana"),
    )  # fmt: skip
    with pytest.raises(Exception, match=r"^Unauthorized$"):
        load_handler("authorizer").lambda_handler(
            event(f"Bearer {signer.token(claims(issuer, audience='other'))}"), LambdaContext()
        )
