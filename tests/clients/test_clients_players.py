"""Remembered players in the Python client library (``clients/players.py``, ``Client(...,
player_token=...)``) against real server processes: one with a real PostgreSQL (``db_server``)
and the session's server without a database (``live_server``)."""

from __future__ import annotations

import asyncio
import secrets

import pytest
from clients_live import LiveServer

from clients.client import Client, CommandError
from clients.players import PlayersError, create_guest, fetch_game, fetch_games, fetch_profile
from clients.strategy import decide

TIMEOUT = 60.0


def guest_name(prefix: str) -> str:
    return f"{prefix} {secrets.randbelow(10**6)}"


async def play_solo(client: Client, name: str) -> str:
    """A 1-seat public game played to its end; the room."""
    created = await client.create_room(seats=1, first_player="seat_order")
    await client.join(created.room, name)
    await client.start()
    while True:
        state = await client.wait_for(
            lambda m: m.status == "finished" or (m.current_player == client.player)
        )
        if state.status == "finished":
            return created.room
        if state.phase == "awaiting_roll":
            await client.roll()
            continue
        move = decide(state.dice, state.rolls_left, state.preview)
        if move.score:
            await client.score(move.score)
        else:
            await client.roll(keep=move.keep)


async def archived(base: str, game: str, token: str | None = None) -> dict[str, object]:
    """``GET /games/{id}`` once the archiver wrote the game (polled, bounded)."""
    async with asyncio.timeout(TIMEOUT):
        while True:
            try:
                return await asyncio.to_thread(fetch_game, base, game, token=token)
            except PlayersError as exc:
                if exc.code != "game_not_found":
                    raise
            await asyncio.sleep(0.1)  # polling interval of a bounded wait


async def test_a_guest_plays_and_reads_its_profile_history_and_game(db_server: LiveServer) -> None:
    name = guest_name("Py Guest")
    guest = await asyncio.to_thread(create_guest, db_server.http, name)
    assert guest.name == name
    assert guest.token.startswith("ypt_")
    assert guest.token not in repr(guest)

    async with Client(db_server.ws, player_token=guest.token) as client:
        assert client.remembered is not None
        assert (client.remembered.player, client.remembered.name) == (guest.player, name)
        room = await play_solo(client, "Seat Name")

    game = await archived(db_server.http, room)
    assert game["game"] == f"{room}.1"
    players = game["players"]
    assert isinstance(players, list)
    assert players[0]["identity"] == guest.player
    assert players[0]["name"] == "Seat Name"

    profile = await asyncio.to_thread(fetch_profile, db_server.http, guest.player)
    assert profile["player"] == guest.player
    assert profile["games"] == 1
    assert profile["best_score"] == players[0]["total"]
    history = await asyncio.to_thread(fetch_games, db_server.http, guest.player, limit=5)
    assert [g["room"] for g in history["games"]] == [room]
    assert history["next_before"] is None


async def test_a_refused_token_and_a_taken_name(db_server: LiveServer) -> None:
    with pytest.raises(CommandError) as refused:
        async with Client(db_server.ws, player_token="ypt_" + "x" * 43):
            pass
    assert refused.value.code == "bad_player_token"

    name = guest_name("Taken")
    await asyncio.to_thread(create_guest, db_server.http, name)
    with pytest.raises(PlayersError) as taken:
        await asyncio.to_thread(create_guest, db_server.http, name.upper())
    assert (taken.value.code, taken.value.status) == ("name_taken", 409)
    with pytest.raises(PlayersError) as unknown:
        await asyncio.to_thread(fetch_profile, db_server.http, "uNobodyAtAll")
    assert unknown.value.code == "player_not_found"


async def test_without_a_database_guests_are_unavailable(live_server: LiveServer) -> None:
    with pytest.raises(PlayersError) as refused:
        await asyncio.to_thread(create_guest, live_server.http, "Nobody Here")
    assert (refused.value.code, refused.value.status) == ("unavailable", 503)
    # anonymous play is unchanged
    async with Client(live_server.ws) as client:
        assert client.remembered is None
