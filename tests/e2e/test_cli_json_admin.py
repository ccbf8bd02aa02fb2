"""``--json`` on the administration commands: tenants (the CLI's documented tenant body), keys (the
bodies of ``/v1/keys``: ``NewKeyView``, ``KeyList``, ``KeyView``), and the sources, webhooks and identity
provider, which print their route's body with or without ``--json``. One JSON document on stdout and
nothing else; a failure the API's error body, with the exit code it has without ``--json``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragline.cli.views import TenantDeleted, TenantView
from ragline.domain.api import IdentityProviderDeleted, IdentityProviderView, KeyList, KeyView, NewKeyView
from ragline.domain.source_api import SourceList, SourceView
from ragline.domain.webhook_api import NewWebhookView, WebhookList, WebhookView
from tests.e2e.test_cli import SAMPLES
from tests.e2e.test_cli_json import body, document, refused, run
from tests.support.web_site import Site, three_page_site

pytestmark = pytest.mark.e2e


def test_tenants_print_the_tenant_and_what_its_deletion_removed(tmp_path: Path) -> None:
    home = str(tmp_path)
    code, out = run("tenants", "create", "acme", "--name", "Acme", "--quota", "100", "--rps", "5",
                    "--home", home)  # fmt: skip
    assert code == 0, out
    acme = body(TenantView, out)
    assert (acme.tenant_id, acme.name, acme.status) == ("acme", "Acme", "active")
    assert acme.max_runs_per_period == 100
    assert document(out)["limits"]["requestsPerSecond"] == 5.0
    refused(("tenants", "create", "acme", "--home", home), "conflict")

    code, out = run("tenants", "limits", "acme", "--max-runs", "3", "--home", home)
    assert code == 0 and body(TenantView, out).limits.max_concurrent_runs == 3
    code, out = run("tenants", "limits", "acme", "--home", home)  # shown, not changed
    assert code == 0 and body(TenantView, out).limits.max_concurrent_runs == 3
    refused(("tenants", "limits", "acme", "--reset", "--rps", "1", "--home", home), "invalid_request")
    refused(("tenants", "limits", "nope", "--home", home), "not_found")

    code, out = run("tenants", "status", "acme", "suspended", "--home", home)
    assert code == 0 and body(TenantView, out).status == "suspended"
    refused(("tenants", "status", "acme", "paused", "--home", home), "invalid_request")

    code, out = run("ingest", str(SAMPLES / "faq.txt"), "-n", "docs", "--create", "--tenant", "acme",
                    "--home", home)  # fmt: skip
    assert code == 0, out
    code, out = run("tenants", "delete", "acme", "--home", home)
    assert code == 0, out
    purge = body(TenantDeleted, out)
    assert (purge.tenant_id, purge.status, purge.documents) == ("acme", "deleted", 1) and purge.chunks >= 1
    refused(("tenants", "status", "acme", "active", "--home", home), "conflict")
    assert run("tenants", "create", "globex", "--home", home)[0] == 0
    code, out = run("tenants", "status", "globex", "deleted", "--home", home)
    assert code == 0 and body(TenantDeleted, out).tenant_id == "globex"


def test_keys_print_the_bodies_of_the_keys_routes(tmp_path: Path) -> None:
    home = str(tmp_path)
    assert run("tenants", "create", "local", "--home", home)[0] == 0
    code, out = run("keys", "create", "--tenant", "local", "--scopes", "admin", "--home", home)
    assert code == 0, out
    admin = body(NewKeyView, out)
    assert document(out)["apiKey"].startswith("rl_") and admin.scopes == ["admin"] and not admin.revoked
    code, out = run("keys", "create", "--tenant", "local", "--scopes", "search", "--require-user",
                    "--rps", "2", "--name", "app", "--home", home)  # fmt: skip
    assert code == 0, out
    user = body(NewKeyView, out)
    assert (user.require_user, user.assert_user, user.name) == (True, True, "app")
    assert user.limits is not None and user.limits.requests_per_second == 2
    refused(("keys", "create", "--tenant", "nope", "--home", home), "not_found")
    refused(("keys", "create", "--tenant", "local", "--scopes", "root", "--home", home), "invalid_request")

    code, out = run("keys", "list", "--tenant", "local", "--home", home)
    assert code == 0, out
    listed = body(KeyList, out)
    assert {k.key_id for k in listed.keys} == {admin.key_id, user.key_id} and "apiKey" not in out
    code, out = run("keys", "revoke", user.key_id, "--tenant", "local", "--home", home)
    assert code == 0, out
    revoked = body(KeyView, out)
    assert (revoked.key_id, revoked.revoked) == (user.key_id, True) and "apiKey" not in document(out)
    refused(("keys", "revoke", "key_0000000000000000", "--tenant", "local", "--home", home), "not_found")


@pytest.fixture
def site() -> Iterator[Site]:
    s = three_page_site()
    yield s
    s.close()


def test_sources_print_the_bodies_of_the_sources_routes(
    site: Site, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGLINE_SOURCE_LOOPBACK_HTTP", "1")
    home = str(tmp_path)
    assert run("tenants", "create", "acme", "--home", home)[0] == 0
    assert run("namespaces", "create", "docs", "--tenant", "acme", "--home", home)[0] == 0
    code, out = run("sources", "add", "docs", "--tenant", "acme", "--seed", f"{site.url}/", "--home", home)
    assert code == 0, out  # the first sync ran here; its progress, if any, went to stderr
    added = body(SourceView, out)
    assert added.status == "idle" and added.counts.indexed == 3
    code, out = run("sources", "sync", "docs", added.source_id, "--tenant", "acme", "--home", home)
    assert code == 0 and body(SourceView, out).counts.unchanged == 3
    code, out = run("sources", "list", "docs", "--tenant", "acme", "--home", home)
    assert code == 0 and [s.source_id for s in body(SourceList, out).sources] == [added.source_id]
    code, out = run("sources", "show", "docs", added.source_id, "--tenant", "acme", "--home", home)
    assert code == 0 and body(SourceView, out).source_id == added.source_id
    code, out = run("sources", "update", "docs", added.source_id, "--tenant", "acme", "--name", "handbook",
                    "--home", home)  # fmt: skip
    assert code == 0 and body(SourceView, out).name == "handbook"
    code, out = run("sources", "remove", "docs", added.source_id, "--tenant", "acme", "--home", home)
    assert code == 0 and body(SourceView, out).source_id == added.source_id
    refused(("sources", "show", "docs", "src_0000000000000000", "--tenant", "acme", "--home", home),
            "not_found")  # fmt: skip
    refused(("sources", "add", "docs", "--tenant", "acme", "--seed", "ftp://example.com/", "--home", home),
            "invalid_request")  # fmt: skip
    refused(("sources", "add", "docs", "--tenant", "acme", "--kind", "confluence", "--settings", "{nope",
             "--home", home), "invalid_request")  # fmt: skip


def test_webhooks_print_the_bodies_of_the_webhooks_routes(tmp_path: Path) -> None:
    home = str(tmp_path)
    assert run("tenants", "create", "acme", "--home", home)[0] == 0
    url = "https://hooks.example.com/ragline"
    code, out = run("webhooks", "add", url, "--tenant", "acme", "--events", "document.failed", "--home", home)
    assert code == 0, out
    made = body(NewWebhookView, out)
    assert made.secret.startswith("whsec_") and made.event_types == ["document.failed"]
    code, out = run("webhooks", "list", "--tenant", "acme", "--home", home)
    assert code == 0 and [w.webhook_id for w in body(WebhookList, out).webhooks] == [made.webhook_id]
    assert "whsec_" not in out
    code, out = run("webhooks", "remove", made.webhook_id, "--tenant", "acme", "--home", home)
    assert code == 0 and body(WebhookView, out).webhook_id == made.webhook_id
    refused(("webhooks", "add", "http://10.0.0.1/x", "--tenant", "acme", "--home", home), "invalid_request")
    refused(("webhooks", "remove", made.webhook_id, "--tenant", "acme", "--home", home), "not_found")


def test_the_identity_provider_commands_print_the_bodies_of_its_route(tmp_path: Path) -> None:
    from tests.support.identity_tokens import SigningKey

    home = str(tmp_path)
    assert run("tenants", "create", "acme", "--home", home)[0] == 0
    provider = tmp_path / "idp.json"
    jwk = SigningKey("k1").jwk
    provider.write_text(json.dumps({"issuer": "https://idp.acme.test/", "audiences": ["app"], "jwks": [jwk]}))
    code, out = run("tenants", "identity-provider", "set", str(provider), "--tenant", "acme", "--home", home)
    assert code == 0 and body(IdentityProviderView, out).issuer == "https://idp.acme.test/", out
    code, out = run("tenants", "identity-provider", "show", "--tenant", "acme", "--home", home)
    assert code == 0 and body(IdentityProviderView, out).jwks == [jwk]
    code, out = run("tenants", "identity-provider", "delete", "--tenant", "acme", "--home", home)
    assert code == 0 and body(IdentityProviderDeleted, out).deleted
    provider.write_text(json.dumps({"issuer": "https://idp.acme.test/", "audiences": ["app"], "jwks": [jwk],
                                    "algorithms": ["HS256"]}))  # fmt: skip
    setting = ("tenants", "identity-provider", "set", str(provider), "--tenant", "acme", "--home", home)
    error = refused(setting, "invalid_request")
    assert "algorithms" in error.error.message
