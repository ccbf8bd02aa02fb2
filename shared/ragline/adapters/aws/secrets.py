"""Secrets Manager through Powertools Parameters. The container reads the LLM key once (it builds the
model client with it), so a rotated key takes effect in new containers."""

from __future__ import annotations

from typing import Any

from ragline import errors
from ragline.adapters.aws.errors import translate


class SecretsManagerSecret:
    """One secret's string value. A secret that is missing, empty or unreadable is a configuration
    error that names it — never a silent fallback to running without the key."""

    def __init__(self, secret_id: str, *, client: Any = None) -> None:
        self.secret_id = secret_id
        self._client = client

    def value(self) -> str:
        from aws_lambda_powertools.utilities import parameters

        try:
            with translate("SecretsManager", "GetSecretValue"):
                raw = parameters.SecretsProvider(boto3_client=self._client).get(self.secret_id)
        except parameters.exceptions.GetParameterError as exc:
            raise errors.ConfigurationError(
                f"the secret {self.secret_id!r} cannot be read", secret=self.secret_id
            ) from exc
        text = raw.decode() if isinstance(raw, bytes) else str(raw or "")
        if not text.strip():
            raise errors.ConfigurationError(
                f"the secret {self.secret_id!r} is empty: put the LLM API key in it", secret=self.secret_id
            )
        return text.strip()
