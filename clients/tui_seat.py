"""The terminal table for a kept seat: a tournament entry or a correspondence game.

:class:`SeatApp` is ``yahtzee play``'s table (:class:`clients.tui.TableScreen`) without the
lobby: it takes the seat back with ``rejoin`` and its token (:mod:`clients.seats`) and shows the
game. Quitting (``Ctrl+Q``) only closes the connection: the seat stays the player's, and the
same command comes back to it. ``Ctrl+L`` leaves the room for good (in a game: a forfeit).
"""

from __future__ import annotations

from pathlib import Path

from clients.client import ClientClosedError, CommandError
from clients.seats import KeptSeat
from clients.tui import PlayApp, TableScreen

__all__ = ["SeatApp"]


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
