"""The archive's and the identities' settings, read from the environment.

``DATABASE_URL`` names the PostgreSQL (``postgresql://user:password@host:5432/db``); unset, a
private embedded server is started (``server.ops.embedded_postgres``), unless
``YAHTZEE_DATABASE=off``: then nothing is archived and the player routes answer 503.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

import msgspec

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
        """The settings of the environment's variables (:data:`_ENV`), each converted to its
        field's type by msgspec; unset or empty keeps the default."""
        env = os.environ if environ is None else environ
        raw: dict[str, object] = {}
        for field_name, variable in _ENV.items():
            text = env.get(variable)
            if text:
                raw[field_name] = text.split(",") if field_name == "jwt_algorithms" else text
        if "database" in raw:
            raw["database"] = str(raw["database"]).lower()
        try:
            settings = msgspec.convert(raw, cls, strict=False)
        except msgspec.ValidationError as exc:
            field_name = str(exc).rsplit("$.", 1)[-1].rstrip("`")
            raise ValueError(f"{_ENV.get(field_name, field_name)}: {exc}") from None
        settings.check()
        return settings

    def check(self) -> None:
        """Raise ``ValueError`` for a value outside its range."""
        if self.database not in ("embedded", "off"):
            raise ValueError(f"YAHTZEE_DATABASE={self.database!r}: embedded or off")
        if self.poll_seconds <= 0 or self.players_per_hour <= 0 or self.sweep_seconds <= 0:
            raise ValueError(
                "YAHTZEE_ARCHIVE_POLL_SECONDS, YAHTZEE_ARCHIVE_SWEEP_SECONDS and "
                "YAHTZEE_PLAYERS_PER_HOUR must be positive"
            )


#: Each field read from the environment, and its variable.
_ENV = {
    "database_url": "DATABASE_URL",
    "database": "YAHTZEE_DATABASE",
    "poll_seconds": "YAHTZEE_ARCHIVE_POLL_SECONDS",
    "sweep_seconds": "YAHTZEE_ARCHIVE_SWEEP_SECONDS",
    "players_per_hour": "YAHTZEE_PLAYERS_PER_HOUR",
    "jwt_jwks_url": "YAHTZEE_JWT_JWKS_URL",
    "jwt_public_key": "YAHTZEE_JWT_PUBLIC_KEY",
    "jwt_issuer": "YAHTZEE_JWT_ISSUER",
    "jwt_audience": "YAHTZEE_JWT_AUDIENCE",
    "jwt_algorithms": "YAHTZEE_JWT_ALGORITHMS",
}
