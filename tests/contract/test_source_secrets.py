"""The SourceSecrets contract on local files and on Secrets Manager (moto server)."""

from __future__ import annotations

import stat
import uuid
from pathlib import Path

import pytest

from ragline import errors
from ragline.adapters.aws.source_secrets import SecretsManagerSourceSecrets
from ragline.adapters.embedded.source_secrets import FileSourceSecrets
from ragline.ports import SourceSecrets

pytestmark = pytest.mark.contract


class SourceSecretsContract:
    @pytest.fixture
    def secrets(self) -> SourceSecrets:
        raise NotImplementedError

    def test_put_then_get_returns_the_values(self, secrets: SourceSecrets) -> None:
        secrets.put("acme", "docs", "src_1", {"email": "a@example.com", "apiToken": "t0k3n"})
        assert secrets.get("acme", "docs", "src_1") == {"email": "a@example.com", "apiToken": "t0k3n"}

    def test_put_replaces_the_values_whole(self, secrets: SourceSecrets) -> None:
        secrets.put("acme", "docs", "src_1", {"a": "1", "b": "2"})
        secrets.put("acme", "docs", "src_1", {"a": "3"})
        assert secrets.get("acme", "docs", "src_1") == {"a": "3"}

    def test_sources_and_tenants_do_not_share_credentials(self, secrets: SourceSecrets) -> None:
        secrets.put("acme", "docs", "src_1", {"a": "acme"})
        secrets.put("beta", "docs", "src_1", {"a": "beta"})
        secrets.put("acme", "other", "src_1", {"a": "other"})
        assert secrets.get("acme", "docs", "src_1") == {"a": "acme"}
        assert secrets.get("beta", "docs", "src_1") == {"a": "beta"}
        with pytest.raises(errors.NotFound):
            secrets.get("acme", "docs", "src_2")

    def test_delete_removes_them_and_is_idempotent(self, secrets: SourceSecrets) -> None:
        secrets.put("acme", "docs", "src_1", {"a": "1"})
        secrets.delete("acme", "docs", "src_1")
        secrets.delete("acme", "docs", "src_1")
        with pytest.raises(errors.NotFound):
            secrets.get("acme", "docs", "src_1")
        secrets.put("acme", "docs", "src_1", {"a": "again"})  # a deleted name can be used again
        assert secrets.get("acme", "docs", "src_1") == {"a": "again"}

    def test_purge_tenant_removes_only_that_tenants(self, secrets: SourceSecrets) -> None:
        secrets.put("acme", "docs", "src_1", {"a": "1"})
        secrets.put("acme", "other", "src_2", {"a": "2"})
        secrets.put("acmeco", "docs", "src_3", {"a": "3"})
        assert secrets.purge_tenant("acme") == 2
        with pytest.raises(errors.NotFound):
            secrets.get("acme", "other", "src_2")
        assert secrets.get("acmeco", "docs", "src_3") == {"a": "3"}


class TestFileSourceSecrets(SourceSecretsContract):
    @pytest.fixture
    def secrets(self, tmp_path: Path) -> FileSourceSecrets:
        return FileSourceSecrets(tmp_path)

    def test_files_are_readable_by_the_owner_only(self, tmp_path: Path) -> None:
        FileSourceSecrets(tmp_path).put("acme", "docs", "src_1", {"a": "1"})
        files = list((tmp_path / "secrets").rglob("*.json"))
        assert len(files) == 1
        assert stat.S_IMODE(files[0].stat().st_mode) == 0o600
        assert stat.S_IMODE(files[0].parent.stat().st_mode) == 0o700


class TestSecretsManagerSourceSecrets(SourceSecretsContract):
    @pytest.fixture
    def secrets(self, moto_endpoint: str, moto_aws_env: dict[str, str]) -> SecretsManagerSourceSecrets:
        import boto3

        client = boto3.client("secretsmanager", region_name="us-east-1", endpoint_url=moto_endpoint)
        return SecretsManagerSourceSecrets(f"ragline-test-{uuid.uuid4().hex[:8]}/sources", client=client)
