"""Whole games through real server processes, real WebSocket clients and a real Redis."""

from __future__ import annotations

from gameplay import assert_gap_free, play_game, replay, token_free, totals_of
from procs import BOTH_BACKENDS, StartServer
from wsclient import WsClient, get_json

from server import game


@BOTH_BACKENDS
async def test_four_players_two_spectators(start_server: StartServer) -> None:
    server = start_server()
    encodings = ["json", "msgpack", "json", "msgpack"]
    players = [await WsClient(server.ws, enc, f"P{i}").connect() for i, enc in enumerate(encodings)]
    early = await WsClient(server.ws, "msgpack", "S1").connect()
    late = await WsClient(server.ws, "json", "S2").connect()
    try:
        created = await players[0].ok("create_room", seats=4, public=True)
        room = created["result"]["room"]
        assert created["result"]["invite_code"] is None
        await early.ok("spectate", room=room, last_seq=0)
        for i, client in enumerate(players):
            reply = await client.join(room, f"Player {i}")
            assert reply["result"]["seat"] == i
        await players[0].ok("start")
        by_id = {c.player: c for c in players if c.player}

        # the late spectator arrives mid-game: snapshot, then live events
        first = await early.wait_event(lambda e: e["type"] == "turn_changed")
        await by_id[first["player"]].ok("roll")
        await late.ok("spectate", room=room)
        await late.wait_for(lambda: late.snapshots)
        # the spectator count is coalesced: announced within a flush period
        await early.wait_event(lambda e: e["type"] == "spectators" and e["count"] == 2)
        game_over = await play_game(by_id, early)

        final_seq = game_over["seq"]
        for client in [*players, early, late]:
            await client.wait_for(lambda c=client: c.last_seq() >= final_seq)
        # every stream gap-free; all streams agree on every seq they share
        assert early.snapshots == []
        assert_gap_free(early.events, 0)
        for client in [*players, late]:
            assert_gap_free(client.events, client.snapshots[0]["seq"])
        reference = {e["seq"]: e for e in early.events}
        for client in [*players, late]:
            for event in client.events:
                assert event == reference[event["seq"]]
        # final totals agree with the rules engine replaying the log
        state = replay(early.events, game.RuleOptions(), 4)
        assert state.phase == game.Phase.FINISHED
        expected = {pid: game.totals(state, pid).grand for pid in by_id}
        assert totals_of(game_over) == expected
        snap = await get_json(f"{server.http}/rooms/{room}")
        assert {p["player"]: p["totals"]["grand"] for p in snap["state"]["players"]} == expected
        log = await get_json(f"{server.http}/rooms/{room}/events")
        assert log["events"] == early.events[: len(log["events"])]
        assert any(e["type"] == "spectators" and e["count"] == 2 for e in early.events)
        # seat tokens: only in the owner's join ack, never in a spectator frame
        tokens = [c.token for c in players if c.token]
        assert len(set(tokens)) == 4
        assert token_free(early.frames, tokens)
        assert token_free(late.frames, tokens)
        for client in players:
            others = [t for t in tokens if t != client.token]
            assert token_free(client.frames, others)
    finally:
        for client in [*players, early, late]:
            await client.close()


async def test_a_game_with_compression_negotiated(start_server: StartServer) -> None:
    """With permessage-deflate on (YAHTZEE_DEFLATE), frames are sent through the protocol's
    own compressing path, not as the frame built once for every connection."""
    server = start_server(env={"YAHTZEE_DEFLATE": "1"})
    player = await WsClient(server.ws, "msgpack", "P").connect()
    watcher = await WsClient(server.ws, "json", "W").connect()
    try:
        assert player.ws is not None
        assert "permessage-deflate" in (
            player.ws.response.headers.get("Sec-WebSocket-Extensions") or ""
        )  # type: ignore[union-attr]
        room = (await player.ok("create_room", seats=1, public=True))["result"]["room"]
        await watcher.ok("spectate", room=room, last_seq=0)
        await player.join(room, "Pat")
        await player.ok("start")
        rolled = await player.ok("roll")
        await watcher.wait_for(lambda: watcher.last_seq() >= rolled["seq"])
        assert_gap_free(watcher.events, 0)
        assert [e["seq"] for e in player.events][-1] == rolled["seq"]
    finally:
        await player.close()
        await watcher.close()
