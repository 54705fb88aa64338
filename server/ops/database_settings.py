"""The archive's and the identities' settings, read from the environment.

``DATABASE_URL`` names the PostgreSQL (``postgresql://user:password@host:5432/db``); unset, a
private embedded server is started (``server.ops.embedded_postgres``), unless
``YAHTZEE_DATABASE=off``: then nothing is archived and the player routes answer 503.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["ArchiveSettings"]

DEFAULT_ALGORITHMS = ("RS256", "ES256", "EdDSA")


@dataclass(frozen=True, slots=True)
class ArchiveSettings:
    database_url: str | None = None
    #: "embedded" (default: start one when DATABASE_URL is unset) or "off".
    database: str = "embedded"
    #: How often each process looks for finished rooms to archive.
    poll_seconds: float = 1.0
    #: How long one archiver holds a room it claimed before another may try it.
    lease_ms: int = 10_000
    #: How often each process scans Redis for rooms the pending set missed (rare).
    sweep_seconds: float = 300.0
    #: Most guest identities one address may create per hour.
    players_per_hour: int = 30
    max_name_length: int = 24
    min_name_length: int = 2
    #: JWTs of the operator's identity provider: a JWKS URL or a PEM public key, and the
    #: issuer and audience a token must name. Without either key, JWTs are refused.
    jwt_jwks_url: str | None = None
    jwt_public_key: str | None = None
    jwt_issuer: str | None = None
    jwt_audience: str | None = None
    jwt_algorithms: tuple[str, ...] = DEFAULT_ALGORITHMS
    jwt_leeway_seconds: int = 30
    jwt_refresh_cooldown_seconds: float = 30.0

    @property
    def enabled(self) -> bool:
        return self.database_url is not None or self.database != "off"

    @property
    def jwt_enabled(self) -> bool:
        return bool(self.jwt_jwks_url or self.jwt_public_key)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ArchiveSettings:
        env = os.environ if environ is None else environ

        def get(name: str) -> str | None:
            value = env.get(name)
            return value if value else None

        database = (get("YAHTZEE_DATABASE") or "embedded").lower()
        if database not in ("embedded", "off"):
            raise ValueError(f"YAHTZEE_DATABASE={database!r}: embedded or off")
        try:
            poll = float(get("YAHTZEE_ARCHIVE_POLL_SECONDS") or 1.0)
            sweep = float(get("YAHTZEE_ARCHIVE_SWEEP_SECONDS") or 300.0)
            per_hour = int(get("YAHTZEE_PLAYERS_PER_HOUR") or 30)
        except ValueError as exc:
            raise ValueError(f"archive setting: {exc}") from None
        if poll <= 0 or per_hour <= 0 or sweep <= 0:
            raise ValueError(
                "YAHTZEE_ARCHIVE_POLL_SECONDS, YAHTZEE_ARCHIVE_SWEEP_SECONDS and "
                "YAHTZEE_PLAYERS_PER_HOUR must be positive"
            )
        algorithms = get("YAHTZEE_JWT_ALGORITHMS")
        jwt_algorithms = tuple(algorithms.split(",")) if algorithms else DEFAULT_ALGORITHMS
        return cls(
            database_url=get("DATABASE_URL"),
            database=database,
            poll_seconds=poll,
            sweep_seconds=sweep,
            players_per_hour=per_hour,
            jwt_jwks_url=get("YAHTZEE_JWT_JWKS_URL"),
            jwt_public_key=get("YAHTZEE_JWT_PUBLIC_KEY"),
            jwt_issuer=get("YAHTZEE_JWT_ISSUER"),
            jwt_audience=get("YAHTZEE_JWT_AUDIENCE"),
            jwt_algorithms=jwt_algorithms,
        )
