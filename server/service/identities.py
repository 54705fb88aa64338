"""Remembered players: guest identities with a long-lived player token, and the subjects of an
operator's identity provider (JWTs), which a guest may link to.

A guest is made by ``POST /players`` {``name``}: the answer holds the identity's id and its
player token (``ypt_`` + 43 URL-safe characters), shown once; only its sha256 is stored. A
client presents a player token or a JWT as ``Authorization: Bearer ...`` on the WebSocket
handshake or as ``hello.player_token`` (protocol 1.3); every seat it then takes is linked to
the identity. Every refusal is an :class:`IdentityError` with a protocol error code.

Display names: 2..24 characters after NFC normalisation and trimming; Unicode letters, marks,
digits and single spaces between words; unique case-insensitively (NFKC + casefold).
"""

from __future__ import annotations

import asyncio
import hashlib
import secrets
import unicodedata
from dataclasses import dataclass
from typing import Any

import jwt
import psycopg
import psycopg.errors

from server.ops.database_settings import ArchiveSettings
from server.storage.postgres import Database

__all__ = [
    "TOKEN_PREFIX",
    "Identities",
    "Identity",
    "IdentityError",
    "JwtVerifier",
    "name_key",
    "validate_name",
]

TOKEN_PREFIX = "ypt_"


class IdentityError(Exception):
    """A refused credential or name, with its protocol error code and HTTP status."""

    def __init__(self, code: str, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status


@dataclass(frozen=True, slots=True)
class Identity:
    id: str
    name: str
    linked: bool = False


def validate_name(raw: str, min_length: int = 2, max_length: int = 24) -> str:
    """The display name as stored (NFC, trimmed), or ``invalid_name``."""
    name = unicodedata.normalize("NFC", raw).strip()
    if not min_length <= len(name) <= max_length:
        raise IdentityError("invalid_name", f"a name has {min_length}..{max_length} characters")
    previous = " "
    for char in name:
        category = unicodedata.category(char)
        if char == " ":
            if previous == " ":
                raise IdentityError("invalid_name", "one space between words, at most")
        elif category[0] == "M":
            if previous == " ":
                raise IdentityError("invalid_name", "a combining mark needs a letter before it")
        elif category[0] not in "LN":
            raise IdentityError(
                "invalid_name", "a name has only letters, digits and spaces between words"
            )
        previous = char
    return name


def name_key(name: str) -> str:
    """The form names are unique in: NFKC, case-folded."""
    return unicodedata.normalize("NFKC", name).casefold()


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_identity_id() -> str:
    return "u" + secrets.token_urlsafe(9).replace("-", "x").replace("_", "y")


def looks_like_jwt(credential: str) -> bool:
    return credential.count(".") == 2 and not credential.startswith(TOKEN_PREFIX)


class JwtVerifier:
    """Checks a JWT's signature, expiry, issuer and audience (PyJWT). Keys come from a JWKS URL
    (PyJWKClient: cached, fetched again for an unknown ``kid``, so the provider may rotate its
    keys) or from one PEM public key."""

    def __init__(self, settings: ArchiveSettings) -> None:
        self.settings = settings
        self._jwks = (
            jwt.PyJWKClient(
                settings.jwt_jwks_url,
                cache_keys=False,  # the set is cached (lifespan): a retired key goes with it
                lifespan=300,
                timeout=5,
                # an unknown kid fetches the set again at most this often (key rotation)
                cooldown_duration=settings.jwt_refresh_cooldown_seconds,
            )
            if settings.jwt_jwks_url
            else None
        )

    def _key(self, token: str) -> Any:
        if self._jwks is not None:
            return self._jwks.get_signing_key_from_jwt(token).key
        return self.settings.jwt_public_key

    def verify(self, token: str) -> dict[str, Any]:
        """The token's claims, or :class:`IdentityError` (``bad_jwt``, ``jwt_expired``,
        ``foreign_jwt``). Blocking (a JWKS fetch): call it in a thread."""
        s = self.settings
        if not s.jwt_enabled:
            raise IdentityError("bad_jwt", "this server accepts no JWTs", 401)
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                self._key(token),
                algorithms=list(s.jwt_algorithms),
                audience=s.jwt_audience,
                issuer=s.jwt_issuer,
                leeway=s.jwt_leeway_seconds,
                options={"require": ["exp", "sub", "iss"]},
            )
        except jwt.ExpiredSignatureError:
            raise IdentityError("jwt_expired", "the JWT has expired", 401) from None
        except (jwt.InvalidIssuerError, jwt.InvalidAudienceError):
            raise IdentityError(
                "foreign_jwt", "the JWT was issued by or for someone else", 401
            ) from None
        except (jwt.PyJWKClientError, jwt.InvalidTokenError) as exc:
            raise IdentityError("bad_jwt", f"the JWT is not valid: {exc}", 401) from None
        return claims


class Identities:
    """Identities in the database (see the module docstring)."""

    def __init__(self, db: Database, settings: ArchiveSettings) -> None:
        self.db = db
        self.settings = settings
        self.jwt = JwtVerifier(settings)

    def validate(self, raw: str) -> str:
        return validate_name(raw, self.settings.min_name_length, self.settings.max_name_length)

    async def create_guest(self, raw_name: str) -> tuple[Identity, str]:
        """A new guest identity and its player token (the only time the token is seen)."""
        name = self.validate(raw_name)
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        identity = Identity(new_identity_id(), name)
        try:
            async with self.db.connection() as conn:
                await conn.execute(
                    "INSERT INTO identities (id, display_name, name_key, token_hash)"
                    " VALUES (%s, %s, %s, %s)",
                    (identity.id, name, name_key(name), token_hash(token)),
                )
        except psycopg.errors.UniqueViolation:
            raise IdentityError("name_taken", f"the name {name!r} is taken", 409) from None
        return identity, token

    async def by_token(self, token: str) -> Identity:
        """The identity of a player token (``bad_player_token`` / ``player_token_revoked``)."""
        async with self.db.connection() as conn:
            cur = await conn.execute(
                "SELECT id, display_name, revoked_at, jwt_subject IS NOT NULL FROM identities"
                " WHERE token_hash = %s",
                (token_hash(token),),
            )
            row = await cur.fetchone()
        if row is None:
            raise IdentityError("bad_player_token", "no player has this token", 401)
        if row[2] is not None:  # type: ignore[index]
            raise IdentityError("player_token_revoked", "this player token was revoked", 401)
        return Identity(str(row[0]), str(row[1]), bool(row[3]))  # type: ignore[index]

    async def claims(self, token: str) -> dict[str, Any]:
        return await asyncio.to_thread(self.jwt.verify, token)

    async def by_jwt(self, token: str) -> Identity:
        """The identity of a JWT's subject, made on first sight (its name from the claims)."""
        claims = await self.claims(token)
        issuer, subject = str(claims["iss"]), str(claims["sub"])
        found = await self._by_subject(issuer, subject)
        if found is not None:
            return found
        wanted = str(claims.get("preferred_username") or claims.get("name") or "player")
        for attempt in range(8):
            try:
                name = self.validate(wanted if attempt == 0 else f"{wanted[:18]} {attempt}")
            except IdentityError:
                name = f"player {secrets.randbelow(10**6)}"
            try:
                async with self.db.connection() as conn:
                    await conn.execute(
                        "INSERT INTO identities (id, display_name, name_key, jwt_issuer,"
                        " jwt_subject) VALUES (%s, %s, %s, %s, %s)",
                        (new_identity_id(), name, name_key(name), issuer, subject),
                    )
            except psycopg.errors.UniqueViolation:
                found = await self._by_subject(issuer, subject)  # made by a parallel request
                if found is not None:
                    return found
                continue
            made = await self._by_subject(issuer, subject)
            assert made is not None
            return made
        raise IdentityError("name_taken", "no free name for this identity", 409)

    async def _by_subject(self, issuer: str, subject: str) -> Identity | None:
        async with self.db.connection() as conn:
            cur = await conn.execute(
                "SELECT id, display_name FROM identities WHERE jwt_issuer = %s"
                " AND jwt_subject = %s",
                (issuer, subject),
            )
            row = await cur.fetchone()
        return None if row is None else Identity(str(row[0]), str(row[1]), True)  # type: ignore[index]

    async def resolve(self, credential: str) -> Identity:
        """The identity of a player token or a JWT."""
        if looks_like_jwt(credential):
            return await self.by_jwt(credential)
        return await self.by_token(credential)

    async def link(self, guest_token: str, jwt_token: str) -> Identity:
        """Link a guest to a JWT's subject: from then on the JWT names the same identity (its
        games stay). ``identity_linked`` when the guest or the subject is linked already."""
        guest = await self.by_token(guest_token)
        claims = await self.claims(jwt_token)
        issuer, subject = str(claims["iss"]), str(claims["sub"])
        try:
            async with self.db.connection() as conn:
                cur = await conn.execute(
                    "UPDATE identities SET jwt_issuer = %s, jwt_subject = %s"
                    " WHERE id = %s AND jwt_subject IS NULL RETURNING id",
                    (issuer, subject, guest.id),
                )
                row = await cur.fetchone()
        except psycopg.errors.UniqueViolation:
            raise IdentityError(
                "identity_linked", "this JWT's subject is linked to another player", 409
            ) from None
        if row is None:
            raise IdentityError("identity_linked", "this player is linked to a JWT already", 409)
        return Identity(guest.id, guest.name, True)

    async def revoke(self, token: str) -> Identity:
        """Revoke a player token (the identity and its games stay)."""
        identity = await self.by_token(token)
        async with self.db.connection() as conn:
            await conn.execute(
                "UPDATE identities SET revoked_at = now() WHERE id = %s", (identity.id,)
            )
        return identity
