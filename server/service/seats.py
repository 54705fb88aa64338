"""Seats: taking one, proving one holds it, connecting and disconnecting, giving it up.

Seat tokens are ``secrets.token_urlsafe(32)``, stored in Redis only as sha256 hashes
(``t:<hash>`` -> player, ``p:<player>`` -> the one valid hash), and returned only in the
``join`` ack. Every change is a transition of :class:`~server.service.rooms.GameService`.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping

import msgspec

from protocol.errors import ErrorCode
from server import game
from server.domain import room
from server.domain.events import Occurred, occurred
from server.service import steps
from server.service.outcomes import (
    Cached,
    Change,
    Claimed,
    Outcome,
    RematchMade,
    Seated,
    ServiceError,
    seat_result,
)
from server.service.rooms import GameService

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
        present: bool = True,
        identity: str | None = None,
    ) -> Outcome:
        """Take a seat (linked to ``identity``, a remembered player, when given). The result
        holds ``player``, ``seat``, the seat ``token`` (never stored) and ``previous`` (the
        connection that held the seat, for a repeated ``join_key``). Without ``present`` the seat
        is taken for a player who is not connected yet (a rematch): it shows as disconnected until
        its ``rejoin``."""
        if len(name) > self.service.settings.max_name_length:
            raise ServiceError(ErrorCode.INVALID_NAME, "name too long")
        token = secrets.token_urlsafe(32)
        token_hash = room.hash_secret(token)
        player_id = "p" + secrets.token_hex(6)
        key_hash = room.hash_secret(join_key) if join_key else None
        fields = await self.service.store.seat_fields(room_id) if key_hash else {}

        def step(cached: Cached) -> Change:
            record = cached.record
            if not room.invite_matches(record, invite):
                raise _invite_required()
            if record.meta.rated and identity is None:
                raise ServiceError(
                    ErrorCode.IDENTITY_REQUIRED, "a rated room seats remembered players only"
                )
            known = record.join_keys.get(key_hash) if key_hash else None
            seated = record.game.player(known) if known else None
            if known is not None and seated is not None and not seated.forfeited:
                if not present:
                    seats = {
                        **revoked(fields, known),
                        f"t:{token_hash}": known,
                        f"p:{known}": token_hash,
                    }
                    return Change(record, [], seat_result(record.game, known), seats)
                return self._reissue(room_id, record, known, token_hash, conn_id, fields)
            if seed is not None:  # before the join's events are made: they show the seed
                record = record.replace(seeds={**record.seeds, player_id: seed})
            record, events = self.service.apply(room_id, record, [game.Join(player_id, name)])
            if present:
                record, _back, _ = room.claim(record, player_id, conn_id)
            else:
                record, away = self._away(record, player_id)
                events = events + occurred(away, record.game)
            if key_hash is not None:
                record = record.replace(join_keys={**record.join_keys, key_hash: player_id})
            seats = {f"t:{token_hash}": player_id, f"p:{player_id}": token_hash}
            if identity is not None:  # read by the archive (server.storage.archive)
                seats[f"i:{player_id}"] = identity
            result = seat_result(record.game, player_id)
            return Change(record, events, result, seats)

        outcome = await self.service.transact(room_id, step, cache_key)
        if outcome.cached:
            return outcome  # a retried join's token is stored nowhere: it cannot be resent
        assert isinstance(outcome.result, Seated)
        seated = msgspec.structs.replace(outcome.result, token=token)
        return Outcome(outcome.seq, seated, record=outcome.record)

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
        result = seat_result(record.game, player, previous)
        return Change(record, events, result, seats)

    def _away(
        self, record: room.RoomRecord, player: str
    ) -> tuple[room.RoomRecord, list[room.RoomEvent]]:
        """``player``'s seat, just taken, marked disconnected (nobody holds it yet)."""
        record = record.replace(connected={**record.connected, player: True})
        grace = self.service.settings.absent_turn_seconds
        released = room.release(record, player, None, self.service.clock(), grace)
        assert released is not None
        return released

    async def offer_rematch(
        self, room_id: str, player_id: str, conn_id: str | None, identity: str | None = None
    ) -> Outcome:
        """Offer a rematch of a finished game (a player of the room): the first offer creates
        the rematch room (:meth:`_create_rematch`) and records it in this room with a
        ``rematch_offered`` event; every offer seats ``player_id`` there under the same name,
        not yet connected (a repeated offer: the same seat, a new token). The result: ``room``,
        ``invite_code`` and the seat's ``player``, ``seat`` and ``token`` (``None`` each when
        no seat is free there any more). ``seq`` is this room's."""
        service = self.service
        current = await service.view(room_id)
        name = _check_offer(current.record, player_id, conn_id)
        rematch = current.record.rematch
        seq = current.seq
        if rematch is None:
            created = await self._create_rematch(room_id, current.record)

            def step(cached: Cached) -> Change | None:
                record = cached.record
                _check_offer(record, player_id, conn_id)
                if record.rematch is not None:
                    return None
                record = record.replace(rematch=created)
                offer = room.RematchOffer(player_id, created.room, created.invite)
                return Change(record, occurred([offer], record.game))

            out = await service.transact(room_id, step)
            seq = out.seq
            rematch = created
            if out.record is not None and out.record.rematch is not None:
                rematch = out.record.rematch
        result = RematchMade(rematch.room, rematch.invite)
        try:
            seated = await self.join(
                rematch.room,
                name,
                rematch.invite,
                join_key=f"{rematch.key}:{player_id}",
                present=False,
                identity=identity,
            )
        except (game.GameError, ServiceError) as exc:
            if exc.code not in _NO_SEAT:
                raise
        else:
            assert isinstance(seated.result, Seated)
            seat = seated.result
            result = msgspec.structs.replace(
                result, player=seat.player, seat=seat.seat, token=seat.token
            )
        return Outcome(seq, result)

    async def _create_rematch(self, room_id: str, record: room.RoomRecord) -> room.Rematch:
        """The rematch room of a finished room, created once however many offer it at once:
        its id, invite code and key are reserved under a key of the old room first (whoever
        reserves first names them; creating it again is a no-op)."""
        service = self.service
        meta = record.meta
        invite = None if meta.public else steps.new_invite()
        proposal: list[str | None] = [steps.new_room_id(), invite, secrets.token_hex(16)]
        # "rematch-..." is no sha256 hex digest: no client's create_key can reserve it first
        key = "rematch-" + room.hash_secret(room_id)
        earlier = await service.store.reserve_create_key(key, json.dumps(proposal).encode())
        new_id, invite, secret = json.loads(earlier) if earlier is not None else proposal
        assert isinstance(new_id, str)
        assert isinstance(secret, str)
        state = record.game
        await service.create_room(
            options=state.options,
            seats=state.max_seats,
            public=meta.public,
            turn_seconds=0 if meta.correspondence else meta.turn_seconds,
            correspondence_seconds=meta.turn_seconds if meta.correspondence else None,
            room_id=new_id,
            invite=invite,
            hints=meta.hints,
            computer_delay_ms=meta.computer_delay_ms,
            computers=[(p.computer, p.name) for p in state.players if p.computer is not None],
            auto_start=True,
            rated=meta.rated,
        )
        return room.Rematch(new_id, invite, secret)

    async def authenticate(self, room_id: str, token: str) -> str:
        """The player id holding ``token`` in ``room_id``: ``room_not_found`` if there is no
        such room (SPEC.md 6.6), else ``bad_token``."""
        token_hash = room.hash_secret(token)
        fields = await self.service.store.seat_fields(room_id)
        player = fields.get(f"t:{token_hash}")
        if player is None or fields.get(f"p:{player}") != token_hash:
            await self.service.view(room_id)  # room_not_found when the room does not exist
            raise ServiceError(ErrorCode.BAD_TOKEN, "no seat with this token in this room")
        return player

    async def claim_seat(
        self, room_id: str, player_id: str, conn_id: str, *, reclaim: bool = False
    ) -> Claimed:
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
                raise ServiceError(ErrorCode.BAD_TOKEN, "this seat was given up")
            record, back, previous = room.claim(record, player_id, conn_id)
            return Change(record, occurred(back, record.game))

        outcome = await self.service.transact(room_id, step)
        return Claimed(outcome, previous)

    async def release_seat(self, room_id: str, player_id: str, conn_id: str | None) -> None:
        """The connection ``conn_id`` of a player is gone: ``player_disconnected``, unless
        another connection holds the seat by now (or the player is already marked away)."""

        def step(cached: Cached) -> Change | None:
            grace = self.service.settings.absent_turn_seconds
            released = room.release(cached.record, player_id, conn_id, self.service.clock(), grace)
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
                raise ServiceError(
                    ErrorCode.INVALID_FIELD, f"{player!r} is not a computer in this room"
                )
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


_NO_SEAT = frozenset({"room_full", "game_already_started", "game_over", "room_not_found"})
"""Refusals of a rematch seat that still answer the offer (with the room, without a seat)."""


def _check_offer(record: room.RoomRecord, player: str, conn_id: str | None) -> str:
    """The name of ``player``, who may offer a rematch of this room (else a refusal)."""
    room.require_owner(record, player, conn_id)
    seat = record.game.player(player)
    if seat is None or seat.forfeited:
        raise ServiceError("not_in_room", "only a player of this game may offer a rematch")
    if record.game.phase != game.Phase.FINISHED:
        raise game.WrongPhaseError("a rematch is offered once the game is over")
    return seat.name


def _invite_required() -> ServiceError:
    return ServiceError(ErrorCode.INVITE_REQUIRED, "this room is private: a valid invite is needed")


def revoked(fields: dict[str, str], player: str) -> dict[str, str]:
    """Seat-field changes that make ``player``'s token invalid: the ``p:`` entry (it names the
    one valid token hash) and that token's ``t:`` entry are deleted."""
    changes = {f"p:{player}": ""}
    token_hash = fields.get(f"p:{player}")
    if token_hash:
        changes[f"t:{token_hash}"] = ""
    return changes
