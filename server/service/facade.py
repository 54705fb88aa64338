"""What the transport may ask of the rooms: one narrow object instead of the service, the seats,
the upkeep, the store and the strategy tables one by one. The command handlers
(:mod:`server.transport.handlers`) see only this; the composition root builds it.
"""

from __future__ import annotations

from typing import Any

from server import game
from server.boundary import translate
from server.service import steps
from server.service.outcomes import Cached, Claimed, CreatedRoom, Outcome
from server.service.rooms import GameService
from server.service.seats import Seats
from server.service.upkeep import Upkeep
from server.solver import Table

__all__ = ["Rooms"]


class Rooms:
    """The rooms, as the command handlers use them (each method says what it delegates to)."""

    def __init__(self, service: GameService, seats: Seats, upkeep: Upkeep) -> None:
        self._service = service
        self._seats = seats
        self._upkeep = upkeep

    # -- reading -------------------------------------------------------------------------------

    def cached(self, room_id: str) -> Cached | None:
        """The room as this process last saw it (no round trip)."""
        return self._service.cached(room_id)

    async def view(self, room_id: str) -> Cached:
        """The room now (``room_not_found`` if there is none)."""
        return await self._service.view(room_id)

    async def exists(self, room_id: str) -> bool:
        """Whether the store holds ``room_id``."""
        return await self._service.store.load(room_id) is not None

    # -- creating ------------------------------------------------------------------------------

    def new_room_id(self) -> str:
        return steps.new_room_id()

    def new_invite(self) -> str:
        return steps.new_invite()

    async def reserve_create_key(self, key_hash: str, value: bytes) -> bytes | None:
        """Reserve a ``create_key``'s room; what an earlier use reserved, if any."""
        return await self._service.store.reserve_create_key(key_hash, value)

    async def create_room(self, **options: Any) -> CreatedRoom:
        """A new room (:meth:`GameService.create_room`): its id and invite code."""
        return await self._service.create_room(**options)

    # -- seats ---------------------------------------------------------------------------------

    async def join(self, room_id: str, name: str, invite: str | None, **seat: Any) -> Outcome:
        return await self._seats.join(room_id, name, invite, **seat)

    async def authenticate(self, room_id: str, token: str) -> str:
        return await self._seats.authenticate(room_id, token)

    async def claim_seat(self, room_id: str, player: str, conn_id: str) -> Claimed:
        return await self._seats.claim_seat(room_id, player, conn_id)

    async def leave(self, room_id: str, player: str, conn_id: str | None, key: str) -> Outcome:
        return await self._seats.leave(room_id, player, conn_id, key)

    async def add_computer(self, room_id: str, host: str, level: str, name: str | None,
                           conn_id: str | None, key: str) -> Outcome:  # fmt: skip
        return await self._seats.add_computer(room_id, host, level, name, conn_id, key)

    async def remove_computer(
        self, room_id: str, host: str, player: str, conn_id: str | None, key: str
    ) -> Outcome:
        return await self._seats.remove_computer(room_id, host, player, conn_id, key)

    async def offer_rematch(
        self, room_id: str, player: str, conn_id: str | None, identity: str | None
    ) -> Outcome:
        return await self._seats.offer_rematch(room_id, player, conn_id, identity)

    # -- play and presence ---------------------------------------------------------------------

    async def play(self, room_id: str, player: str, command: translate.PlayCommand,
                   *, conn_id: str | None, cache_key: str) -> Outcome:  # fmt: skip
        return await self._service.play(
            room_id, player, command, conn_id=conn_id, cache_key=cache_key
        )

    async def renew_lease(self, room_id: str, player: str, conn_id: str, lease_ms: int) -> bool:
        return await self._upkeep.renew_lease(room_id, player, conn_id, lease_ms)

    async def spectator_joined(self, room_id: str, conn_id: str, lease_ms: int) -> None:
        await self._upkeep.spectator_joined(room_id, conn_id, lease_ms)

    # -- the strategy tables -------------------------------------------------------------------

    def prepare_strategy(self, options: game.RuleOptions) -> None:
        """Start loading the strategy table of ``options`` (for computers and hints)."""
        self._upkeep.advisor.prepare(options)

    async def strategy_table(self, options: game.RuleOptions, within: float) -> Table | None:
        """The table of ``options``, waiting at most ``within`` seconds (else ``None``)."""
        return await self._upkeep.advisor.ready(options, within)
