"""SnapStart's init and hooks (ragline.snapstart): what init may hold, what each hook leaves behind.
The whole-process proof (two forked restores of a built function): tests/rehearsal/test_snapshot_safety.py.
"""

from __future__ import annotations

import random
import sys
from functools import cached_property
from typing import Any

import boto3
import pytest
import snapshot_restore_py

from ragline import snapstart, wiring
from ragline.adapters.boto import LazyClient
from ragline.config import Settings
from ragline.wiring import SERVICE_MODULES, Container
from tests.support.fakes import BowEmbedder

pytestmark = pytest.mark.unit


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh hook registry and default boto3 session, restored after the test."""
    monkeypatch.setattr(snapshot_restore_py, "_before_snapshot_registry", [])
    monkeypatch.setattr(snapshot_restore_py, "_after_restore_registry", [])
    monkeypatch.setattr(snapstart, "_registered", False)
    monkeypatch.setattr(boto3, "DEFAULT_SESSION", None)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "x")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")


def names(hooks: list[Any]) -> list[str]:
    return [func.__name__ for func, _, _ in hooks]


def access_key(client: Any) -> str:
    return str(client._request_signer._credentials.access_key)


def test_prepare_is_a_no_op_outside_a_snapstart_init(registry: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_LAMBDA_INITIALIZATION_TYPE", "on-demand")
    snapstart.prepare(container=False)
    assert snapshot_restore_py.get_before_snapshot() == snapshot_restore_py.get_after_restore() == []


def test_a_snapstart_init_registers_each_hook_by_name_once(
    registry: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_LAMBDA_INITIALIZATION_TYPE", "snap-start")
    snapstart.prepare(container=False)
    snapstart.prepare(container=False)
    assert names(snapshot_restore_py.get_before_snapshot()) == ["close_connections"]
    assert names(snapshot_restore_py.get_after_restore()) == [
        "reseed_random",
        "drop_pools",
        "renew_process_identity",
    ]


def test_init_resolves_no_credentials_and_a_restore_takes_the_fresh_ones(
    registry: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lambda gives a restored environment new credentials: the client built after the restore must
    sign with them, not with the init's (nor a priming request's) ones."""
    monkeypatch.setenv("AWS_LAMBDA_INITIALIZATION_TYPE", "snap-start")
    monkeypatch.setenv("RAGLINE_BACKEND", "aws")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAINIT")
    snapstart.prepare(container=False)  # parses the dynamodb model into boto3's default session
    assert boto3.DEFAULT_SESSION is not None

    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAPRIMING")
    lazy = LazyClient("dynamodb", region="us-east-1")
    assert access_key(lazy()) == "AKIAPRIMING"  # nothing of the init's credentials was kept

    snapstart.run_before_snapshot()
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIARESTORED")
    snapstart.run_after_restore()
    assert access_key(lazy()) == "AKIARESTORED"


def test_releasing_closes_built_clients_and_forgets_parts_but_not_overrides(tmp_path: Any) -> None:
    embedder = BowEmbedder()
    container = Container(Settings(home=tmp_path), embedder=embedder)
    first = container.namespaces
    injected = object()
    lazy, kept = LazyClient("s3", region="us-east-1"), LazyClient("s3", client=injected)
    built, closed = lazy(), []
    built.close = lambda: closed.append(built)  # what closing its connection pool would do
    wiring.release_connections()  # (the process's container was not built: clients only)
    container.release_connections()
    assert closed == [built]
    assert lazy() is not built and kept() is injected
    assert container.embedder is embedder
    assert container.namespaces is not first


def test_reseed_random_makes_two_copies_of_one_state_draw_differently() -> None:
    state = random.getstate()
    random.setstate(state)
    snapstart.reseed_random()
    one = [random.random() for _ in range(4)]
    random.setstate(state)
    snapstart.reseed_random()
    assert [random.random() for _ in range(4)] != one


def test_warming_imports_every_service_module_and_builds_no_part(tmp_path: Any) -> None:
    container = Container(Settings(home=tmp_path, chat_provider="bedrock"))
    assert all(isinstance(getattr(Container, part), cached_property) for part in SERVICE_MODULES)
    container.warm()
    built = [name for name in vars(container) if isinstance(getattr(Container, name, None), cached_property)]
    assert built == []
    assert "ragline.adapters.bedrock.chat" in sys.modules
    assert "bedrock-runtime" in container.aws_services()


def test_releasing_closes_the_chat_models_http_pool(tmp_path: Any) -> None:
    settings = Settings(
        home=tmp_path, chat_provider="openai", openai_api_key="sk-x", chat_model="m", reranker="none"
    )
    container = Container(settings)
    model = container.chat_model
    client = model.inner._client  # type: ignore[attr-defined]
    container.release_connections()
    assert client.is_closed()
    assert container.chat_model is not model
