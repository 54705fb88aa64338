"""Quick play in the Python client library against a real server with a real PostgreSQL:
two remembered players are matched and seated in one room, a cancel ends the wait, an
anonymous client is refused, and a lone player gets computers after the server's wait."""

from __future__ import annotations

import asyncio
import secrets

import pytest
from clients_live import LiveServer

from clients.client import Client, CommandError
from clients.players import create_guest

TIMEOUT = 60.0


async def remembered(server: LiveServer, prefix: str) -> Client:
    guest = await asyncio.to_thread(
        create_guest, server.http, f"{prefix} {secrets.randbelow(10**6)}"
    )
    client = Client(server.ws, player_token=guest.token)
    await client.connect()
    return client


async def test_two_players_are_matched_and_sit_in_the_same_room(db_server: LiveServer) -> None:
    ann, bob = await remembered(db_server, "Qp Ann"), await remembered(db_server, "Qp Bob")
    try:
        async with asyncio.timeout(TIMEOUT):
            a, b = await asyncio.gather(
                ann.quick_play(seats=2, computers=False), bob.quick_play(seats=2, computers=False)
            )
        assert a.room == b.room
        assert a.computers == b.computers == ()
        assert ann.quick_play_queued is not None
        assert ann.quick_play_queued.computers_after_ms is None
        # both are seated there: the room model names them
        async with asyncio.timeout(TIMEOUT):
            state = await ann.wait_for(lambda m: len(m.players) == 2)
        assert {p.player for p in state.players} == {a.player, b.player}
    finally:
        await ann.close()
        await bob.close()


async def test_a_lone_player_gets_computers_after_the_wait(db_server: LiveServer) -> None:
    ann = await remembered(db_server, "Qp Solo")
    try:
        async with asyncio.timeout(TIMEOUT):
            match = await ann.quick_play(seats=3)
        assert len(match.computers) == 2
        assert match.opponents == ()
    finally:
        await ann.close()


async def test_cancel_ends_the_wait_and_anonymous_is_refused(
    db_server: LiveServer,
) -> None:
    ann = await remembered(db_server, "Qp Cancel")
    anonymous = Client(db_server.ws)
    await anonymous.connect()
    try:
        waiting = asyncio.create_task(ann.quick_play(seats=4, computers=False))
        async with asyncio.timeout(TIMEOUT):
            # the library has no hook for the ack: its result is read (bounded) before cancel
            while ann.quick_play_queued is None:  # noqa: ASYNC110
                await asyncio.sleep(0.02)
            await ann.cancel_quick_play()
            with pytest.raises(CommandError) as cancelled:
                await waiting
        assert cancelled.value.code == "cancelled"
        with pytest.raises(CommandError) as refused:
            await anonymous.quick_play(seats=2)
        assert refused.value.code == "identity_required"
    finally:
        await ann.close()
        await anonymous.close()


def test_the_terminal_says_when_computers_filled_the_seats() -> None:
    from clients.tui import quick_match_text
    from protocol import ComputerSeat, Level, QuickPlayMatched

    people = QuickPlayMatched(room="r-1", invite_code="abcdef", player="p1", seat=0,
                              token="t" * 16, opponents=("Bob",), waited_ms=4_000)  # fmt: skip
    assert quick_match_text(people) == "Matched after 4 s with Bob"
    bots = QuickPlayMatched(
        room="r-1", invite_code="abcdef", player="p1", seat=0, token="t" * 16,
        computers=(ComputerSeat(level=Level.HARD, name="Ada"),), waited_ms=30_000,
    )  # fmt: skip
    assert quick_match_text(bots) == (
        "Matched after 30 s with nobody else; computers filled the open seats: Ada (hard)"
    )
