"""The terminal table for a kept seat: a tournament entry or a correspondence game.

:class:`CorrespondenceApp` (``yahtzee play --correspondence HOURS``) creates a correspondence
room, sits down and keeps the seat (:mod:`clients.seats`) to come back with ``yahtzee turns
--play ROOM``; the game starts by itself once every seat is taken.

:class:`SeatApp` is ``yahtzee play``'s table (:class:`clients.tui.TableScreen`) without the
lobby: it takes the seat back with ``rejoin`` and its token (:mod:`clients.seats`) and shows the
game. Quitting (``Ctrl+Q``) only closes the connection: the seat stays the player's, and the
same command comes back to it. ``Ctrl+L`` leaves the room for good (in a game: a forfeit).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from clients.client import ClientClosedError, CommandError
from clients.seats import KeptSeat
from clients.tui import LobbyScreen, PlayApp, TableScreen
from protocol import RoomOptions, Toggle

__all__ = ["CorrespondenceApp", "CorrespondenceGame", "SeatApp"]


@dataclass(frozen=True)
class CorrespondenceGame:
    """A correspondence room to create: seats, hours per move, rule options, listed or not."""

    seats: int
    hours: int
    options: RoomOptions
    public: bool = True


class SeatApp(PlayApp):
    """The table of one kept seat, taken back with its token."""

    TITLE = "Yahtzee"

    def __init__(
        self, url: str, *, seat: KeptSeat, name: str = "Player", player_file: Path | None = None
    ) -> None:
        super().__init__(url, name=name, player_file=player_file)
        self.seat = seat

    async def begin(self) -> None:
        """Connect, take the seat back, show the table (no lobby)."""
        if not await self._connect():
            return
        try:
            await self.client.rejoin(self.seat.room, self.seat.token)
        except (CommandError, ClientClosedError) as exc:
            # str(exc) is the server's code and message: it never holds the token
            self.exit(
                return_code=1, message=f"cannot take the seat in {self.seat.room} back: {exc}"
            )
            return
        await self.push_screen(TableScreen(self.seat.room, spectator=False))


class CorrespondenceApp(PlayApp):
    """A new correspondence room: created, joined (the seat kept), its table shown."""

    def __init__(
        self,
        url: str,
        *,
        game: CorrespondenceGame,
        name: str = "Player",
        player_file: Path | None = None,
    ) -> None:
        super().__init__(url, name=name, player_file=player_file)
        self.game = game

    async def begin(self) -> None:
        """Connect and show the lobby (PlayApp), then create the room and sit down."""
        await super().begin()
        if not isinstance(self.screen, LobbyScreen):
            return  # no connection: PlayApp.begin has exited
        if self.guest is None:
            # the turn lists and the kept seat are the remembered player's
            self.exit(return_code=1, message="a correspondence game needs a remembered player: "
                      "a server with a database, and no --anonymous")  # fmt: skip
            return
        o = self.game.options
        try:
            created = await self.client.create_room(
                seats=self.game.seats,
                public=self.game.public,
                rules=o.rules,
                extra_yahtzees=o.extra_yahtzees,
                joker=o.joker,
                first_player=o.first_player,
                upper_first=o.upper_first is Toggle.ON,
                auto_start=True,  # the players sit down days apart: the last one starts it
                correspondence_seconds=self.game.hours * 3600,
            )
        except (CommandError, ClientClosedError) as exc:
            self.exit(return_code=1, message=f"cannot create a correspondence game: {exc}")
            return
        # joins, keeps the seat (a correspondence room) and shows the table
        await self._enter_room(created.room, name=self.player_name, invite_code=created.invite_code)
