"""The LLM key from Secrets Manager (moto over real HTTP): read once, empty or missing names the secret."""

from __future__ import annotations

import uuid
from typing import Any

import boto3
import pytest

from ragline import errors
from ragline.adapters.aws.secrets import SecretsManagerSecret
from ragline.config import Settings
from ragline.wiring import Container

pytestmark = pytest.mark.integration


@pytest.fixture
def secrets(moto_endpoint: str) -> Any:
    return boto3.client(
        "secretsmanager",
        endpoint_url=moto_endpoint,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )


def test_a_stored_key_is_read_and_trimmed(secrets: Any) -> None:
    name = f"llm-{uuid.uuid4().hex[:8]}"
    arn = secrets.create_secret(Name=name, SecretString=" sk-test-123\n")["ARN"]
    assert SecretsManagerSecret(arn, client=secrets).value() == "sk-test-123"


def test_an_empty_secret_is_a_configuration_error_naming_it(secrets: Any) -> None:
    name = f"llm-{uuid.uuid4().hex[:8]}"
    secrets.create_secret(Name=name, SecretString="  ")
    with pytest.raises(errors.ConfigurationError) as caught:
        SecretsManagerSecret(name, client=secrets).value()
    assert caught.value.details == {"secret": name}


def test_a_missing_secret_is_a_configuration_error(secrets: Any) -> None:
    with pytest.raises(errors.ConfigurationError):
        SecretsManagerSecret(f"missing-{uuid.uuid4().hex[:8]}", client=secrets).value()


def test_the_container_fills_the_llm_key_from_the_named_secret(
    secrets: Any, moto_aws_env: None, tmp_path: Any
) -> None:
    name = f"llm-{uuid.uuid4().hex[:8]}"
    secrets.create_secret(Name=name, SecretString="sk-from-secret")
    c = Container(Settings(home=tmp_path, llm_api_key_secret=name, openai_base_url="http://127.0.0.1:9"))
    assert c.settings.llm_configured
    assert c.llm_settings.openai_api_key.get_secret_value() == "sk-from-secret"
