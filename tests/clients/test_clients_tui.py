"""The terminal clients driven by textual's pilot against a real server.

Waiting is on conditions (the client's model, the screen on top), checked each time the app has
processed its pending messages, with a deadline; never a fixed sleep.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

from clients_live import LiveServer
from test_clients_model import lobby_snapshot
from textual.app import App
from textual.pilot import Pilot
from textual.widgets import Checkbox, DataTable, Input, RichLog, Select, Static

from clients.bot import BotConfig, run_bots
from clients.client import Client
from clients.model import RoomModel
from clients.tui import (
    CSS,
    ComputerGame,
    ConfirmScreen,
    LobbyScreen,
    PlayApp,
    TableScreen,
    WatchApp,
    analysis_text,
    describe,
    score_cell,
)
from protocol import (
    BonusTaken,
    Box,
    FirstPlayer,
    GameStarted,
    Level,
    Phase,
    PlayerJoined,
    PreviewEntry,
    RematchOffered,
    Rolled,
    RoomOptions,
    RoomStatus,
    Scored,
    TurnChanged,
)

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
DEADLINE = 30.0


async def until(pilot: Pilot[None], condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + DEADLINE
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause()


def text_of(widget: Static) -> str:
    return str(widget.render())


async def play_turn(
    pilot: Pilot[None], app: PlayApp, table: TableScreen, me: str, turn: int, *, ask: bool
) -> bool:
    """Play one turn with the keyboard; returns True if the 0-point question was asked."""
    client = app.client
    await until(
        pilot,
        lambda: (
            client.model is not None
            and client.model.current_player == me
            and client.model.phase is Phase.AWAITING_ROLL
        ),
        f"turn {turn}",
    )
    model = client.model
    assert model is not None
    turn_text = table.query_one("#turn", Static)
    await until(pilot, lambda: "Your turn" in text_of(turn_text), "your turn")
    await pilot.press("r")
    await until(pilot, lambda: model.phase is Phase.ROLLED, "the roll")
    if turn == 1:
        # Hold the first die (key 1) and roll again: it keeps its face.
        first = model.dice[0]
        await pilot.press("1")
        await until(pilot, lambda: model.held == [0], "the hold")
        await until(pilot, lambda: table.query_one("#die-0").has_class("held"), "held")
        await pilot.press("r")
        await until(pilot, lambda: model.roll_number == 2, "the second roll")
        assert model.dice[0] == first
    allowed = [e for e in model.preview if e.allowed]
    best = max(allowed, key=lambda e: e.points)
    zeros = [e for e in allowed if e.points == 0]
    asked = False
    if ask and zeros and best.points > 0:
        # A 0 while another box scores more: the table asks first; say no.
        table.choose_box(str(zeros[0].box))
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question")
        # Cancel has the focus, so a second Enter does not score the 0.
        await until(pilot, lambda: app.focused is not None and app.focused.id == "no", "focus")
        await pilot.press("n")
        await until(pilot, lambda: app.screen is table, "the table again")
        asked = True
    if turn == 5:
        ARTIFACTS.mkdir(exist_ok=True)
        app.save_screenshot("tui-table.svg", str(ARTIFACTS))
    scorecard = table.query_one("#scorecard", DataTable)
    scorecard.move_cursor(row=list(model.boxes).index(best.box))
    await pilot.press("enter")
    player = model.player(me)
    assert player is not None
    await until(pilot, lambda: player.scorecard[best.box] is not None, "the score")
    assert player.scorecard[best.box] == best.points
    if turn < 13:
        # The cursor has left the box just filled: the next Enter lands on an open box.
        await until(
            pilot,
            lambda: player.scorecard[model.boxes[scorecard.cursor_row]] is None,
            "the cursor on an open box",
        )
    return asked


async def test_a_whole_solo_game_in_the_terminal(live_server: LiveServer) -> None:
    name = "Tess [bold]x[/bold]"
    app = PlayApp(live_server.ws, name=name)
    async with app.run_test(size=(150, 60)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, LobbyScreen), "the lobby")
        lobby = app.screen
        lobby.query_one("#seats", Input).value = "1"
        lobby.query_one("#first-player", Select).value = "seat_order"
        await pilot.click("#create")
        await until(pilot, lambda: isinstance(app.screen, TableScreen), "the table")
        client = app.client
        await until(pilot, lambda: client.model is not None, "the snapshot")
        table = app.screen
        assert isinstance(table, TableScreen)
        await until(pilot, lambda: table.query_one("#start").display, "the start button")
        await pilot.press("s")

        me = client.player
        assert me is not None
        asked = False
        for turn in range(1, 14):
            asked = await play_turn(pilot, app, table, me, turn, ask=not asked) or asked
        assert asked
        model = client.model
        assert model is not None
        await until(pilot, lambda: model.status is RoomStatus.FINISHED, "the end")
        standings = table.query_one("#standings", Static)
        await until(pilot, lambda: "Final standings" in text_of(standings), "standings")
        player = model.player(me)
        assert player is not None
        assert f"1. {name}: {player.grand}" in text_of(standings)
        assert "Game over" in text_of(table.query_one("#turn", Static))
        # The header no longer says "(playing)" once the game is over.
        header = text_of(table.query_one("#header", Static))
        assert "(game over)" in header
        assert "(playing)" not in header
        ARTIFACTS.mkdir(exist_ok=True)
        app.save_screenshot("tui-final.svg", str(ARTIFACTS))


async def test_watching_a_bot_game(live_server: LiveServer) -> None:
    async with Client(live_server.ws) as host:
        created = await host.create_room(seats=2, first_player="roll_off")
    app = WatchApp(live_server.ws, room=created.room)
    async with app.run_test(size=(150, 50)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, TableScreen), "the table")
        await until(pilot, lambda: app.client.model is not None, "the snapshot")
        table = app.screen
        header = table.query_one("#header", Static)
        await until(pilot, lambda: "1 watching" in text_of(header), "the spectator count")
        bots = asyncio.create_task(
            run_bots(BotConfig(url=live_server.ws, room=created.room, bots=2))
        )
        results = await bots
        model = app.client.model
        assert model is not None
        await until(pilot, lambda: model.status is RoomStatus.FINISHED, "the end")
        standings = table.query_one("#standings", Static)
        await until(pilot, lambda: "Final standings" in text_of(standings), "standings")
        for s in results:
            assert f"{s.place}. {s.name}: {s.total}" in text_of(standings)
        scorecard = table.query_one("#scorecard", DataTable)
        totals = [str(cell) for cell in scorecard.get_row("total")[1:]]
        by_seat = sorted(model.players, key=lambda p: p.seat)
        assert totals == [str(p.grand) for p in by_seat]
        assert table.query_one("#roll").display is False


def rolled_model() -> tuple[RoomModel, str]:
    """Ann on turn after rolling five fours with Fours open: the forced Joker allows only Fours."""
    model = RoomModel.from_snapshot(lobby_snapshot())
    model.apply(PlayerJoined(room="r1", seq=1, player="pa", name="Ann", seat=0))
    model.apply(GameStarted(room="r1", seq=2, order=("pa",), first_player=FirstPlayer.SEAT_ORDER))
    model.apply(TurnChanged(room="r1", seq=3, player="pa", round=1, deadline_ms=None))
    model.player("pa").scorecard[Box.YAHTZEE] = 50  # type: ignore[union-attr]
    preview = (
        PreviewEntry(box=Box.FOURS, allowed=True, points=20),
        PreviewEntry(box=Box.ACES, allowed=False, points=0),
        PreviewEntry(box=Box.CHANCE, allowed=True, points=0),
    )
    model.apply(
        Rolled(
            room="r1",
            seq=4,
            player="pa",
            dice=(4, 4, 4, 4, 4),
            roll_number=1,
            rolls_left=2,
            held=(),
            preview=preview,
            yahtzee_bonus_pending=True,
        )
    )
    return model, "pa"


def test_score_cells_tell_forbidden_from_zero() -> None:
    model, ann = rolled_model()
    filled = score_cell(model, ann, Box.YAHTZEE)
    allowed = score_cell(model, ann, Box.FOURS)
    forbidden = score_cell(model, ann, Box.ACES)
    zero = score_cell(model, ann, Box.CHANCE)
    assert (filled.plain, str(filled.style)) == ("50", "bold")
    assert (allowed.plain, str(allowed.style)) == ("(20)", "green")
    assert (forbidden.plain, str(forbidden.style)) == ("--", "strike dim red")
    assert (zero.plain, str(zero.style)) == ("(0)", "dim italic")
    assert score_cell(model, "someone-else", Box.FOURS).plain == ""


def test_moves_are_described_in_words() -> None:
    model, ann = rolled_model()
    event = Scored(
        room="r1",
        seq=5,
        player=ann,
        box=Box.FOURS,
        points=20,
        upper_bonus=0,
        yahtzee_bonus=100,
        joker=True,
        automatic=False,
        total=170,
    )
    line = describe(model, event)
    assert line is not None
    assert line.plain == "Ann scored 20 in Fours (Joker)"


async def test_the_lobby_lists_a_room_and_watches_it(live_server: LiveServer) -> None:
    async with Client(live_server.ws) as other:
        created = await other.create_room(seats=2)
        await other.join(created.room, "Olga [red]")
        app = PlayApp(live_server.ws, name="Tess")
        async with app.run_test(size=(150, 50)) as pilot:
            await until(pilot, lambda: isinstance(app.screen, LobbyScreen), "the lobby")
            lobby = app.screen
            assert isinstance(lobby, LobbyScreen)
            await until(pilot, lambda: any(r.room == created.room for r in lobby.rooms), "the room")
            rooms = lobby.query_one("#rooms", DataTable)
            rooms.move_cursor(row=[r.room for r in lobby.rooms].index(created.room))
            await pilot.click("#watch-selected")
            await until(pilot, lambda: isinstance(app.screen, TableScreen), "the table")
            table = app.screen
            assert isinstance(table, TableScreen)
            await until(pilot, lambda: app.client.model is not None, "the snapshot")
            turn = table.query_one("#turn", Static)
            await until(pilot, lambda: "1/2 seated" in text_of(turn), "the lobby line")
            assert "Olga [red] starts the game" in text_of(turn)
            assert table.query_one("#start").display is False


async def test_a_game_against_the_bot_in_the_terminal(live_server: LiveServer) -> None:
    app = PlayApp(live_server.ws, name="Ann")
    async with app.run_test(size=(150, 60)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, LobbyScreen), "the lobby")
        app.screen.query_one("#first-player", Select).value = "seat_order"
        await pilot.click("#create")  # two seats by default
        await until(pilot, lambda: isinstance(app.screen, TableScreen), "the table")
        table = app.screen
        assert isinstance(table, TableScreen)
        client = app.client
        bot = asyncio.create_task(
            run_bots(BotConfig(url=live_server.ws, room=table.room, names=("Robo",)))
        )
        await until(
            pilot, lambda: client.model is not None and len(client.model.players) == 2, "the bot"
        )
        await pilot.press("s")
        me = client.player
        assert me is not None
        for turn in range(1, 14):
            await play_turn(pilot, app, table, me, turn, ask=False)
        results = await bot
        standings = table.query_one("#standings", Static)
        await until(pilot, lambda: "Final standings" in text_of(standings), "standings")
        assert {s.name for s in results} == {"Ann", "Robo"}
        for s in results:
            assert f"{s.place}. {s.name}: {s.total}" in text_of(standings)
        log = table.query_one("#log", RichLog)
        assert any("Robo scored" in line.text for line in log.lines)


async def test_the_question_fits_a_120_column_terminal() -> None:
    class Bare(App[None]):
        CSS = CSS

    question = (
        "Large Straight scores 0 now, while 3 of a Kind would score 27. Score 0 in Large Straight?"
    )
    app = Bare()
    async with app.run_test(size=(120, 40)) as pilot:
        app.push_screen(ConfirmScreen(question))
        await until(
            pilot,
            lambda: (
                isinstance(app.screen, ConfirmScreen)
                and bool(app.screen.query("#question"))
                and app.screen.query_one("#question").region.width > 0
            ),
            "the question laid out",
        )
        label = app.screen.query_one("#question")
        box = app.screen.query_one("#confirm-box")
        # The text wraps inside its box instead of running off the screen.
        assert box.region.contains_region(label.region)
        assert label.region.right <= 120
        assert label.region.height >= 2
        screen_text = app.export_screenshot().replace("&#160;", " ")
        assert "Straight?" in screen_text


async def test_leaving_mid_game_asks_first(live_server: LiveServer) -> None:
    app = PlayApp(live_server.ws, name="Lea")
    async with app.run_test(size=(120, 50)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, LobbyScreen), "the lobby")
        app.screen.query_one("#seats", Input).value = "1"
        await pilot.click("#create")
        await until(pilot, lambda: isinstance(app.screen, TableScreen), "the table")
        table = app.screen
        client = app.client
        await until(pilot, lambda: table.query_one("#start").display, "the start button")
        await pilot.press("s")
        await until(
            pilot,
            lambda: client.model is not None and client.model.status is RoomStatus.PLAYING,
            "the game",
        )
        await pilot.press("ctrl+l")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question")
        await pilot.press("n")
        await until(pilot, lambda: app.screen is table, "the table again")
        assert client.room == table.room
        await pilot.press("ctrl+l")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question")
        await pilot.press("y")
        await until(pilot, lambda: isinstance(app.screen, LobbyScreen), "the lobby again")


async def test_play_against_the_computer_with_a_hint(computer_server: LiveServer) -> None:
    """``yahtzee play --computer hard``: one command to a started game against a server-side
    computer; ``?`` shows the advice, marked on the table, cleared when the table changes."""
    game = ComputerGame(level=Level.HARD, options=RoomOptions(first_player=FirstPlayer.SEAT_ORDER))
    app = PlayApp(computer_server.ws, name="Terry", computer=game)
    async with app.run_test(size=(150, 60)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, TableScreen), "the table")
        table = app.screen
        assert isinstance(table, TableScreen)
        client = app.client
        await until(
            pilot,
            lambda: client.model is not None and client.model.status is RoomStatus.PLAYING,
            "the game, started at once",
        )
        model = client.model
        assert model is not None
        computer = next(p for p in model.players if p.computer is not None)
        assert computer.computer is Level.HARD
        scorecard = table.query_one("#scorecard", DataTable)
        titles = [str(column.label) for column in scorecard.columns.values()]
        assert f"{computer.name} [CPU hard]" in titles

        # Seat order: the computer plays first, by itself; then it is my turn.
        me = client.player
        assert me is not None
        await until(
            pilot,
            lambda: model.current_player == me and model.phase is Phase.AWAITING_ROLL,
            "my turn after the computer's",
        )
        played = model.player(computer.player)
        assert played is not None
        assert any(v is not None for v in played.scorecard.values())
        await pilot.press("r")
        await until(pilot, lambda: model.phase is Phase.ROLLED, "the roll")
        await pilot.press("r")
        await until(pilot, lambda: model.roll_number == 2, "the second roll")
        await pilot.press("r")
        await until(pilot, lambda: model.rolls_left == 0, "the last roll")
        await pilot.press("h")  # as on the web page (? works too)
        advice = table.query_one("#advice", Static)
        await until(pilot, lambda: text_of(advice).count(" · ") == 3, "three options")
        lines = text_of(advice).splitlines()
        assert lines[0] == "Hint (expected final score):"
        assert all(line.split(". ", 1)[1].startswith("Score ") for line in lines[1:]), lines
        # The best box is marked on the table.
        best = lines[1].split("Score ", 1)[1].rsplit(" · ", 1)[0]
        marked = [str(scorecard.get_row(str(box))[0]) for box in model.boxes]
        assert marked.count(f"» {best}") == 1, marked
        ARTIFACTS.mkdir(exist_ok=True)
        app.save_screenshot("tui-hint.svg", str(ARTIFACTS))
        # Following it fills that box; the advice is gone with the table it was for.
        scorecard.move_cursor(row=marked.index(f"» {best}"))
        await pilot.press("enter")
        player = model.player(me)
        assert player is not None
        await until(
            pilot, lambda: sum(v is not None for v in player.scorecard.values()) == 1, "the score"
        )
        await until(pilot, lambda: not advice.display, "the advice cleared")
        # The computer's next turn is played by the server, move by move, in the log.
        log = table.query_one("#log", RichLog)
        await until(
            pilot,
            lambda: any(f"{computer.name} scored" in line.text for line in log.lines),
            "the computer's moves",
        )


def test_a_computer_and_the_bonus_take_are_described() -> None:
    model, ann = rolled_model()
    joined = PlayerJoined(room="r1", seq=9, player="c1", name="Ada", seat=1, computer=Level.EASY)
    line = describe(model, joined)
    assert line is not None
    assert line.plain == "Ada sat down (computer, easy)"
    taken = BonusTaken(room="r1", seq=9, player=ann, yahtzee_bonus=100, automatic=False, total=150)
    line = describe(model, taken)
    assert line is not None
    assert line.plain == "Ann took the +100 bonus"


def test_a_rematch_offer_is_described_and_kept_by_the_model() -> None:
    model, ann = rolled_model()
    offer = RematchOffered(room="r1", seq=5, player=ann, rematch_room="r2", invite_code="c0de")
    line = describe(model, offer)
    assert line is not None
    assert line.plain == "Ann offers a rematch: press m to play again"
    model.apply(offer)
    assert (model.rematch_room, model.rematch_invite) == ("r2", "c0de")


def test_the_analysis_in_words() -> None:
    review = {"turn": 2, "roll": 1, "kind": "keep", "chosen_keep": [1, 2, 4, 4, 5],
              "best_keep": [4, 4], "chosen_box": None, "best_box": None, "loss": 12.04}  # fmt: skip
    boxed = {**review, "kind": "box", "roll": 3, "chosen_box": "chance",
             "best_box": "full_house", "loss": 3.5}  # fmt: skip
    text = analysis_text(
        {
            "players": [
                {
                    "name": "Ann",
                    "computer": None,
                    "decisions": [review, boxed],
                    "total_loss": 15.54,
                    "mean_loss": 7.77,
                }
            ]
        }
    ).plain
    assert "Ann: 15.5 lost in 2 decisions (7.77 each)" in text
    assert "Ann, turn 2, roll 1: kept all five (scored now), best 4 4 (-12.0)" in text
    assert "Ann, turn 2, roll 3: scored Chance, best Full House (-3.5)" in text


async def play_out(client: Client) -> None:
    """Play a solo game through the library (roll once, the best allowed box) to its end."""
    await client.start()
    while True:
        model = await client.wait_for(
            lambda m: m.status is RoomStatus.FINISHED or m.phase is Phase.AWAITING_ROLL
        )
        if model.status is RoomStatus.FINISHED:
            return
        await client.roll()
        best = max((e for e in client.model.preview if e.allowed), key=lambda e: e.points)  # type: ignore[union-attr]
        await client.score(best.box)


async def test_after_game_over_the_analysis_and_a_rematch_key(computer_server: LiveServer) -> None:
    async with Client(computer_server.ws) as host:
        created = await host.create_room(seats=1, first_player="seat_order", public=False)
    app = PlayApp(
        computer_server.ws, name="Gwen", room=created.room, invite_code=created.invite_code
    )
    async with app.run_test(size=(150, 60)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, TableScreen), "the table")
        table = app.screen
        assert isinstance(table, TableScreen)
        client = app.client
        await play_out(client)
        standings = table.query_one("#standings", Static)
        await until(pilot, lambda: "Final standings" in text_of(standings), "standings")
        assert "Press m for a rematch" in text_of(standings)
        analysis = table.query_one("#analysis", Static)
        await until(pilot, lambda: "expected points lost" in text_of(analysis), "the analysis")
        assert "Gwen: " in text_of(analysis)
        assert " decisions (" in text_of(analysis)
        ARTIFACTS.mkdir(exist_ok=True)
        app.save_screenshot("tui-game-over.svg", str(ARTIFACTS))
        await pilot.press("m")
        await until(
            pilot,
            lambda: isinstance(app.screen, TableScreen) and app.screen.room != created.room,
            "the rematch table",
        )
        rematch = app.screen
        assert isinstance(rematch, TableScreen)
        assert rematch.invite_code is not None  # private like the first room
        assert rematch.invite_code != created.invite_code
        # one seat: taking it started the rematch by itself (auto_start)
        await until(
            pilot,
            lambda: (
                client.model is not None
                and client.model.room == rematch.room
                and client.model.status is RoomStatus.PLAYING
            ),
            "the rematch, started",
        )
        assert client.model.auto_start is True  # type: ignore[union-attr]
        assert client.player is not None
        me = client.model.player(client.player)  # type: ignore[union-attr]
        assert me is not None
        assert (me.name, me.connected) == ("Gwen", True)


async def test_watch_fits_eight_players_in_110_columns(live_server: LiveServer) -> None:
    names = ["Ann", "Bartholomew-Maximilian", "Cy", "Dora", "Ezekiel", "Fay", "Gus", "Hildegard"]
    clients = [Client(live_server.ws) for _ in names]
    try:
        for c in clients:
            await c.connect()
        created = await clients[0].create_room(seats=8)
        for c, name in zip(clients, names, strict=True):
            await c.join(created.room, name)
        app = WatchApp(live_server.ws, room=created.room)
        async with app.run_test(size=(110, 50)) as pilot:
            await until(pilot, lambda: isinstance(app.screen, TableScreen), "the table")
            await until(
                pilot,
                lambda: app.client.model is not None and len(app.client.model.players) == 8,
                "eight players",
            )
            await pilot.pause()
            table = app.screen
            scorecard = table.query_one("#scorecard", DataTable)
            titles = [str(column.label) for column in scorecard.columns.values()][1:]
            assert len(titles) == 8
            for title, name in zip(titles, names, strict=True):
                assert title[:3] == name[:3], titles  # each column says whose it is
            assert scorecard.virtual_size.width <= scorecard.size.width  # no sideways scroll
            assert scorecard.region.right <= 110
            ARTIFACTS.mkdir(exist_ok=True)
            app.save_screenshot("tui-watch-8.svg", str(ARTIFACTS))
    finally:
        for c in clients:
            await c.close()


async def test_the_create_form_offers_computers_hints_and_variants(
    computer_server: LiveServer,
) -> None:
    app = PlayApp(computer_server.ws, name="Vic")
    async with app.run_test(size=(150, 60)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, LobbyScreen), "the lobby")
        lobby = app.screen
        lobby.query_one("#seats", Input).value = "3"
        lobby.query_one("#computers", Input).value = "2"
        lobby.query_one("#level", Select).value = "easy"
        lobby.query_one("#hints", Checkbox).value = False
        lobby.query_one("#upper-first", Checkbox).value = True
        lobby.query_one("#bonus-turn", Checkbox).value = True
        await pilot.click("#create")
        await until(pilot, lambda: isinstance(app.screen, TableScreen), "the table")
        client = app.client
        await until(
            pilot,
            lambda: client.model is not None and len(client.model.players) == 3,
            "the computers and me",
        )
        model = client.model
        assert model is not None
        assert [p.computer for p in model.players] == [Level.EASY, Level.EASY, None]
        assert model.hints is False
        assert model.options.upper_first.value == "on"
        assert model.options.bonus_turn.value == "on"


async def test_the_lobby_lists_the_remembered_players_last_games(
    db_server: LiveServer, tmp_path: Path
) -> None:
    """v1.3: ``play`` keeps a guest per server in its player file and the lobby lists the
    player's last games (a server with a real PostgreSQL)."""
    import json
    import secrets
    import stat

    from clients.players import PlayersError, fetch_games, load_guest, remembered_guest
    from clients.strategy import decide

    player_file = tmp_path / "config" / "players.json"
    name = f"Term Tess {secrets.randbelow(10**5)}"
    guest = await asyncio.to_thread(remembered_guest, player_file, db_server.http, name)
    assert guest is not None
    assert guest.name == name
    assert stat.S_IMODE(player_file.stat().st_mode) == 0o600  # the token is a secret
    assert await asyncio.to_thread(remembered_guest, player_file, db_server.http, "X") == guest

    # A game played as that player (the library, with the kept token), archived.
    async with Client(db_server.ws, player_token=guest.token) as client:
        created = await client.create_room(seats=1, first_player="seat_order")
        await client.join(created.room, "Tess At The Table")
        await client.start()
        while True:
            state = await client.wait_for(
                lambda m: m.status.value == "finished" or m.current_player == client.player
            )
            if state.status.value == "finished":
                break
            if state.phase is Phase.AWAITING_ROLL:
                await client.roll()
                continue
            move = decide(state.dice, state.rolls_left, state.preview)
            if move.score:
                await client.score(move.score)
            else:
                await client.roll(keep=move.keep)
    deadline = time.monotonic() + DEADLINE
    while True:
        try:
            page = await asyncio.to_thread(fetch_games, db_server.http, guest.player)
        except PlayersError:
            page = {"games": []}
        if page["games"]:
            break
        assert time.monotonic() < deadline, "the game was not archived in time"
        await asyncio.sleep(0.1)  # polling interval of a bounded wait

    app = PlayApp(db_server.ws, name=name, player_file=player_file)
    async with app.run_test(size=(150, 60)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, LobbyScreen), "the lobby")
        assert app.client.remembered is not None
        assert app.client.remembered.player == guest.player
        history = app.screen.query_one("#history", DataTable)
        await until(pilot, lambda: history.row_count == 1, "the last games")
        assert str(history.get_row_at(0)[1]) == created.room
        title = app.screen.query_one("#history-title", Static)
        assert f"as {name}" in text_of(title)
        ARTIFACTS.mkdir(exist_ok=True)
        app.save_screenshot("tui-history.svg", str(ARTIFACTS))

    # A token the server does not know any more is forgotten; play goes on anonymously.
    data = json.loads(player_file.read_text())
    data[db_server.http]["token"] = "ypt_" + "z" * 43
    player_file.write_text(json.dumps(data))
    app = PlayApp(db_server.ws, name=name, player_file=player_file)
    async with app.run_test(size=(150, 60)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, LobbyScreen), "the lobby")
        assert app.guest is None
        assert app.client.remembered is None
        assert not app.screen.query_one("#history", DataTable).display
    assert load_guest(player_file, db_server.http) is None
