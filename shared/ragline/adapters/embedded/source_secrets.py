"""Embedded source credentials: one JSON file per source under ``<home>/secrets/`` (mode 0600 in a
0700 folder). The home folder is the operator's own; on AWS the credentials live in Secrets Manager."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path

from ragline import errors

SECRETS_DIR = "secrets"


class FileSourceSecrets:
    def __init__(self, home: Path | str) -> None:
        self._dir = Path(home) / SECRETS_DIR

    def _path(self, tenant_id: str, namespace_id: str, source_id: str) -> Path:
        tenant = hashlib.sha256(tenant_id.encode()).hexdigest()[:32]
        name = hashlib.sha256(f"{namespace_id}\x00{source_id}".encode()).hexdigest()[:32]
        return self._dir / tenant / f"{name}.json"

    def put(self, tenant_id: str, namespace_id: str, source_id: str, values: Mapping[str, str]) -> None:
        path = self._path(tenant_id, namespace_id, source_id)
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        temporary = path.with_suffix(".tmp")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w") as file:
            json.dump(dict(values), file)
        temporary.replace(path)

    def get(self, tenant_id: str, namespace_id: str, source_id: str) -> dict[str, str]:
        try:
            value = json.loads(self._path(tenant_id, namespace_id, source_id).read_text())
        except FileNotFoundError:
            raise errors.NotFound("the source has no credentials", source_id=source_id) from None
        return {str(k): str(v) for k, v in value.items()}

    def delete(self, tenant_id: str, namespace_id: str, source_id: str) -> None:
        self._path(tenant_id, namespace_id, source_id).unlink(missing_ok=True)

    def purge_tenant(self, tenant_id: str) -> int:
        folder = self._path(tenant_id, "", "").parent
        files = list(folder.glob("*.json")) if folder.is_dir() else []
        for file in files:
            file.unlink(missing_ok=True)
        return len(files)
