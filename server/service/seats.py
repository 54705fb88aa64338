"""Seats: taking one, proving one holds it, connecting and disconnecting, giving it up.

Seat tokens are ``secrets.token_urlsafe(32)``, stored in Redis only as sha256 hashes
(``t:<hash>`` -> player, ``p:<player>`` -> the one valid hash), and returned only in the
``join`` ack. Every change is a transition of :class:`~server.service.rooms.GameService`.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping

from server import game
from server.domain import room
from server.domain.events import Occurred, occurred
from server.service.rooms import Cached, Change, GameService, Outcome, ServiceError

__all__ = ["Seats", "revoked"]


class Seats:
    """The seat commands, on top of the service."""

    def __init__(self, service: GameService) -> None:
        self.service = service

    # -- seats --------------------------------------------------------------------------------

    async def join(
        self,
        room_id: str,
        name: str,
        invite: str | None,
        *,
        conn_id: str | None = None,
        join_key: str | None = None,
        seed: str | None = None,
        cache_key: str = "",
    ) -> Outcome:
        """Take a seat. The result holds ``player``, ``seat``, the seat ``token`` (never stored)
        and ``previous`` (the connection that held the seat, for a repeated ``join_key``)."""
        if len(name) > self.service.settings.max_name_length:
            raise ServiceError("invalid_name", "name too long")
        token = secrets.token_urlsafe(32)
        token_hash = room.hash_secret(token)
        player_id = "p" + secrets.token_hex(6)
        key_hash = room.hash_secret(join_key) if join_key else None
        fields = await self.service.store.seat_fields(room_id) if key_hash else {}

        def step(cached: Cached) -> Change:
            record = cached.record
            if not room.invite_matches(record, invite):
                raise _invite_required()
            known = record.join_keys.get(key_hash) if key_hash else None
            seated = record.game.player(known) if known else None
            if known is not None and seated is not None and not seated.forfeited:
                return self._reissue(room_id, record, known, token_hash, conn_id, fields)
            if seed is not None:  # before the join's events are made: they show the seed
                record = record.replace(seeds={**record.seeds, player_id: seed})
            record, events = self.service.apply(room_id, record, [game.Join(player_id, name)])
            record, _back, _ = room.claim(record, player_id, conn_id)
            if key_hash is not None:
                record = record.replace(join_keys={**record.join_keys, key_hash: player_id})
            seats = {f"t:{token_hash}": player_id, f"p:{player_id}": token_hash}
            result = {"player": player_id, "seat": record.game.seat_of(player_id)}
            return Change(record, events, result, seats)

        outcome = await self.service.transact(room_id, step, cache_key)
        if outcome.cached:
            return outcome  # a retried join's token is stored nowhere: it cannot be resent
        return Outcome(outcome.seq, {**outcome.result, "token": token}, record=outcome.record)

    def _reissue(
        self,
        room_id: str,
        record: room.RoomRecord,
        player: str,
        token_hash: str,
        conn_id: str | None,
        fields: dict[str, str],
    ) -> Change:
        """A repeated ``join`` with the same ``join_key``: the same seat, a new token (the old
        one is revoked by the ``p:`` entry, which names the only valid token)."""
        record, back, previous = room.claim(record, player, conn_id)
        seats = {**revoked(fields, player), f"t:{token_hash}": player, f"p:{player}": token_hash}
        events = occurred(back, record.game)
        result = {"player": player, "seat": record.game.seat_of(player), "previous": previous}
        return Change(record, events, result, seats)

    async def authenticate(self, room_id: str, token: str) -> str:
        """The player id holding ``token`` in ``room_id``: ``room_not_found`` if there is no
        such room (SPEC.md 6.6), else ``bad_token``."""
        token_hash = room.hash_secret(token)
        fields = await self.service.store.seat_fields(room_id)
        player = fields.get(f"t:{token_hash}")
        if player is None or fields.get(f"p:{player}") != token_hash:
            await self.service.view(room_id)  # room_not_found when the room does not exist
            raise ServiceError("bad_token", "no seat with this token in this room")
        return player

    async def claim_seat(
        self, room_id: str, player_id: str, conn_id: str, *, reclaim: bool = False
    ) -> tuple[Outcome, str | None]:
        """Connection ``conn_id`` now holds the seat (``player_reconnected`` if it was marked
        disconnected). Returns the outcome and the connection that held it before, to be closed.
        With ``reclaim`` (a renewed lease that had been swept) nothing is taken from a newer
        owner. A player who left the game for good has no seat to claim (``bad_token``)."""
        previous: str | None = None

        def step(cached: Cached) -> Change | None:
            nonlocal previous
            record = cached.record
            owner = record.owners.get(player_id)
            if owner == conn_id and record.connected.get(player_id, False):
                return None
            if reclaim and owner not in (None, conn_id):
                return None
            seated = record.game.player(player_id)
            if seated is None or seated.forfeited:
                raise ServiceError("bad_token", "this seat was given up")
            record, back, previous = room.claim(record, player_id, conn_id)
            return Change(record, occurred(back, record.game))

        outcome = await self.service.transact(room_id, step)
        return outcome, previous

    async def release_seat(self, room_id: str, player_id: str, conn_id: str | None) -> None:
        """The connection ``conn_id`` of a player is gone: ``player_disconnected``, unless
        another connection holds the seat by now (or the player is already marked away)."""

        def step(cached: Cached) -> Change | None:
            released = room.release(cached.record, player_id, conn_id, self.service.clock())
            if released is None:
                return None
            record, away = released
            return Change(record, occurred(away, record.game))

        await self.service.if_exists(self.service.transact(room_id, step))

    async def leave(
        self, room_id: str, player_id: str, conn_id: str | None, cache_key: str = ""
    ) -> Outcome:
        """Give the seat up for good (a forfeit during a game) and revoke its token."""
        fields = await self.service.store.seat_fields(room_id)

        def step(cached: Cached) -> Change:
            record = cached.record
            room.require_owner(record, player_id, conn_id)
            events: list[Occurred] = []
            if record.game.phase != game.Phase.FINISHED:  # after game over nothing to forfeit
                record, events = self.service.apply(room_id, record, [game.Leave(player_id)])
            return Change(room.forget(record, player_id), events, seats=revoked(fields, player_id))

        return await self.service.transact(room_id, step, cache_key)

    async def add_computer(
        self,
        room_id: str,
        host: str,
        level: str,
        name: str | None,
        conn_id: str | None,
        cache_key: str = "",
    ) -> Outcome:
        """Seat a computer player (the host, in the lobby). The result: ``player``, ``seat``."""

        def step(cached: Cached) -> Change:
            record = cached.record
            room.require_owner(record, host, conn_id)
            _require_host_in_lobby(record, host)
            return self.service.seat_computer(room_id, record, level, name)

        return await self.service.transact(room_id, step, cache_key)

    async def remove_computer(
        self, room_id: str, host: str, player: str, conn_id: str | None, cache_key: str = ""
    ) -> Outcome:
        """Free a computer player's seat (the host, in the lobby)."""

        def step(cached: Cached) -> Change:
            record = cached.record
            room.require_owner(record, host, conn_id)
            _require_host_in_lobby(record, host)
            seat = record.game.player(player)
            if seat is None or seat.computer is None:
                raise ServiceError("invalid_field", f"{player!r} is not a computer in this room")
            record, events = self.service.apply(room_id, record, [game.Leave(player)])
            record = record.replace(connected=_without(record.connected, player))
            return Change(record, events)

        return await self.service.transact(room_id, step, cache_key)


def _without(mapping: Mapping[str, bool], key: str) -> dict[str, bool]:
    return {k: v for k, v in mapping.items() if k != key}


def _require_host_in_lobby(record: room.RoomRecord, player: str) -> None:
    state = record.game
    if state.host != player:
        raise game.NotHostError(f"only the host {state.host!r} may seat or remove computers")
    if state.phase != game.Phase.LOBBY:
        raise game.GameAlreadyStartedError("computers are seated in the lobby only")


def _invite_required() -> ServiceError:
    return ServiceError("invite_required", "this room is private: a valid invite is needed")


def revoked(fields: dict[str, str], player: str) -> dict[str, str]:
    """Seat-field changes that make ``player``'s token invalid: the ``p:`` entry (it names the
    one valid token hash) and that token's ``t:`` entry are deleted."""
    changes = {f"p:{player}": ""}
    token_hash = fields.get(f"p:{player}")
    if token_hash:
        changes[f"t:{token_hash}"] = ""
    return changes
