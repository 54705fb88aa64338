"""JWTs of an operator's identity provider: signature, expiry, issuer and audience checked;
keys from a JWKS URL that rotates; a guest linked to a JWT's subject; typed refusals."""

from __future__ import annotations

import http.server
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from procs import StartServer
from wsclient import WsClient

from server.ops.database_settings import ArchiveSettings
from server.service.identities import IdentityError, JwtVerifier

ISSUER = "https://id.example.test/"
AUDIENCE = "yahtzee"


def new_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def public_pem(key: rsa.RSAPrivateKey) -> str:
    return (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )


def token(key: rsa.RSAPrivateKey, kid: str | None = None, **claims: Any) -> str:
    now = int(time.time())
    body = {"iss": ISSUER, "aud": AUDIENCE, "sub": "user-1", "iat": now, "exp": now + 600}
    body.update(claims)
    headers = {"kid": kid} if kid else None
    return jwt.encode(body, key, algorithm="RS256", headers=headers)


class Jwks:
    """A JWKS endpoint on the loopback: serves whatever keys the test sets."""

    def __init__(self) -> None:
        self.keys: dict[str, rsa.RSAPrivateKey] = {}
        self.fetches = 0
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                owner.fetches += 1
                keys = []
                for kid, key in owner.keys.items():
                    jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
                    keys.append({**jwk, "kid": kid, "use": "sig", "alg": "RS256"})
                body = json.dumps({"keys": keys}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/jwks.json"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def jwks() -> Iterator[Jwks]:
    served = Jwks()
    yield served
    served.close()


def test_jwks_keys_rotate_and_every_check_has_its_code(jwks: Jwks) -> None:
    old, new = new_key(), new_key()
    jwks.keys = {"k1": old}
    verifier = JwtVerifier(
        ArchiveSettings(
            jwt_jwks_url=jwks.url,
            jwt_issuer=ISSUER,
            jwt_audience=AUDIENCE,
            jwt_refresh_cooldown_seconds=0,
        )
    )
    assert verifier.verify(token(old, "k1"))["sub"] == "user-1"
    jwks.keys = {"k2": new}  # the provider rotated: k1 retired, k2 new
    assert verifier.verify(token(new, "k2", sub="user-2"))["sub"] == "user-2"
    assert jwks.fetches == 2  # fetched again for the unknown kid, not for every token

    def code(credential: str) -> str:
        with pytest.raises(IdentityError) as refused:
            verifier.verify(credential)
        return refused.value.code

    assert code(token(old, "k1")) == "bad_jwt"  # a retired key
    assert code(token(new, "k2", exp=int(time.time()) - 3600)) == "jwt_expired"
    assert code(token(new, "k2", iss="https://other.test/")) == "foreign_jwt"
    assert code(token(new, "k2", aud="another-app")) == "foreign_jwt"
    assert code(token(old, "k2")) == "bad_jwt"  # signed by the wrong key
    assert code("not.a.jwt") == "bad_jwt"
    assert code(jwt.encode({"sub": "x"}, "s" * 32, algorithm="HS256")) == "bad_jwt"


def test_without_a_key_no_jwt_is_accepted() -> None:
    with pytest.raises(IdentityError) as refused:
        JwtVerifier(ArchiveSettings()).verify(token(new_key()))
    assert refused.value.code == "bad_jwt"


async def test_a_jwt_names_a_player_and_a_guest_links_to_it(start_server: StartServer) -> None:
    key = new_key()
    server = start_server(
        env={
            "YAHTZEE_JWT_PUBLIC_KEY": public_pem(key),
            "YAHTZEE_JWT_ISSUER": ISSUER,
            "YAHTZEE_JWT_AUDIENCE": AUDIENCE,
        }
    )
    async with httpx.AsyncClient(base_url=server.http, timeout=30) as http:
        first = token(key, sub="alice", preferred_username="Alice")
        client = await WsClient(server.ws, "json", "a").connect()
        try:
            hello = await client.ok("hello", player_token=first)
            alice = hello["result"]["player"]
            assert alice["name"] == "Alice"
            again = await client.ok("hello", player_token=token(key, sub="alice"))
            assert again["result"]["player"] == alice  # the same subject, the same player
            expired = await client.call(
                "hello", player_token=token(key, sub="alice", exp=int(time.time()) - 3600)
            )
            assert expired["code"] == "jwt_expired"
            foreign = await client.call("hello", player_token=token(key, iss="https://x.test/"))
            assert foreign["code"] == "foreign_jwt"
        finally:
            await client.close()

        guest = (await http.post("/players", json={"name": "Gus"})).json()
        bearer = {"Authorization": f"Bearer {guest['token']}"}
        linked = await http.post(
            "/players/me/link", headers=bearer, json={"jwt": token(key, sub="gus")}
        )
        assert linked.json() == {"player": guest["player"], "name": "Gus", "linked": True}
        me = await http.get(
            "/players/me", headers={"Authorization": f"Bearer {token(key, sub='gus')}"}
        )
        assert me.json()["player"] == guest["player"]
        twice = await http.post(
            "/players/me/link", headers=bearer, json={"jwt": token(key, sub="gus2")}
        )
        assert (twice.status_code, twice.json()["code"]) == (409, "identity_linked")
        other = (await http.post("/players", json={"name": "Otto"})).json()
        taken = await http.post(
            "/players/me/link",
            headers={"Authorization": f"Bearer {other['token']}"},
            json={"jwt": token(key, sub="alice")},
        )
        assert taken.json()["code"] == "identity_linked"
