"""A moto server for the whole test session, and boto3 clients pointed at it.

Registered as a pytest plugin (``pytest_plugins = ["tests.support.moto_server"]`` in
``tests/conftest.py``), so any test can ask for:

- ``moto_endpoint`` (session): ``http://127.0.0.1:<free port>`` of one in-process moto server, stopped
  at session end. It listens on loopback only.
- ``moto_aws_env`` (function): the environment for code that builds its own boto3 clients
  (``AWS_ENDPOINT_URL``, dummy credentials, region), set for one test and restored afterwards.
- ``dynamodb_client`` (function): a DynamoDB client with ``endpoint_url`` and credentials set
  explicitly. Tests create their own uniquely named tables (moto slows down as tables grow).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

REGION = "us-east-1"
CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
}


def start_server() -> Any:
    """Start a moto server on ``127.0.0.1:<free port>`` that handles one request at a time.

    Moto's backends keep no locks: a conditional write checks, then writes, and concurrent requests
    interleave (seen here: two first claims both passing ``attribute_not_exists``). Real DynamoDB
    applies writes to one item one at a time, so this server serialises requests; the clients still
    race each other, as concurrent Lambdas would. moto is imported here, not at plugin import (~0.8 s).
    """
    from moto.moto_server.threaded_moto_server import ThreadedMotoServer
    from moto.moto_server.werkzeug_app import (
        DomainDispatcherApplication,
        MotoRequestHandler,
        create_backend_app,
    )
    from werkzeug.serving import make_server

    lock = threading.Lock()

    def serialised(app: Any) -> Any:
        def serial_app(environ: Any, start_response: Any) -> list[bytes]:
            with lock:
                return list(app(environ, start_response))

        return serial_app

    class SerialisedMotoServer(ThreadedMotoServer):
        # ThreadedMotoServer._server_entry of moto 5.2.x (pinned), with the app wrapped in the lock.
        def _server_entry(self) -> None:
            app = DomainDispatcherApplication(create_backend_app)
            self._server = make_server(
                self._ip_address, self._port, serialised(app), True, request_handler=MotoRequestHandler
            )
            self._server_ready_event.set()
            self._server.serve_forever()

    server = SerialisedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    return server


def aws_env(endpoint: str) -> dict[str, str]:
    """Environment that sends every boto3 client to ``endpoint`` with dummy credentials, no proxy."""
    return {
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_DEFAULT_REGION": REGION,
        "AWS_REGION": REGION,
        "AWS_EC2_METADATA_DISABLED": "true",
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
        **CREDENTIALS,
    }


@pytest.fixture(scope="session")
def moto_endpoint() -> Iterator[str]:
    server = start_server()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


@pytest.fixture
def moto_aws_env(moto_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    env = aws_env(moto_endpoint)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    for name in ("AWS_PROFILE", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE"):
        monkeypatch.delenv(name, raising=False)
    return env


@pytest.fixture
def dynamodb_client(moto_endpoint: str, moto_aws_env: dict[str, str]) -> Any:
    """A fresh session's client (boto3's default session is not thread-safe and caches credentials)."""
    import boto3
    from botocore.config import Config

    return boto3.session.Session().client(
        "dynamodb",
        endpoint_url=moto_endpoint,
        region_name=REGION,
        aws_access_key_id=CREDENTIALS["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
        aws_session_token=CREDENTIALS["AWS_SESSION_TOKEN"],
        config=Config(retries={"max_attempts": 2, "mode": "standard"}, max_pool_connections=16),
    )
