"""A test identity provider: signing keys, tokens (good and hostile) and a JWKS server on 127.0.0.1."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm


class SigningKey:
    """A private key and its public JWK (with ``kid``)."""

    def __init__(self, kid: str, kind: str = "RSA") -> None:
        self.kid = kid
        if kind == "RSA":
            self.private: Any = rsa.generate_private_key(public_exponent=65537, key_size=2048)
            self.jwk = json.loads(RSAAlgorithm.to_jwk(self.private.public_key())) | {"kid": kid}
        else:
            self.private = ec.generate_private_key(ec.SECP256R1())
            self.jwk = json.loads(ECAlgorithm.to_jwk(self.private.public_key())) | {"kid": kid}

    @property
    def public_pem(self) -> bytes:
        return bytes(
            self.private.public_key().public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
        )

    def token(
        self, claims: dict[str, Any], *, alg: str = "RS256", kid: str | None = "", **header: Any
    ) -> str:
        head = {**header, **({"kid": self.kid if kid == "" else kid} if kid is not None else {})}
        return jwt.encode(claims, self.private, algorithm=alg, headers=head)


def claims(
    issuer: str, *, audience: str = "app", user: str = "alice", lifetime: int = 600, **extra: Any
) -> dict[str, Any]:
    now = int(time.time())
    return {"iss": issuer, "aud": audience, "sub": user, "iat": now, "exp": now + lifetime, **extra}


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unsigned(header: dict[str, Any], payload: dict[str, Any], secret: bytes | None = None) -> str:
    """A token built by hand: ``alg: none`` with no signature, or HS256 over ``secret``."""
    signing_input = f"{_b64(json.dumps(header).encode())}.{_b64(json.dumps(payload).encode())}"
    if secret is None:
        return signing_input + "."
    signature = hmac.new(secret, signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{_b64(signature)}"


class JwksServer:
    """Serves ``{"keys": [...]}`` at ``/jwks`` on 127.0.0.1 and counts the fetches."""

    def __init__(self) -> None:
        self.keys: list[dict[str, Any]] = []
        self.fetches = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                outer.fetches += 1
                body = json.dumps({"keys": outer.keys}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.uri = f"http://127.0.0.1:{self._server.server_address[1]}/jwks"

    @contextmanager
    def running(self) -> Iterator[JwksServer]:
        thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._server.shutdown()
            self._server.server_close()
