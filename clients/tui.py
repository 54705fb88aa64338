"""Terminal clients built with textual: ``yahtzee play`` and ``yahtzee watch ROOM``.

``PlayApp`` opens on a lobby (the public rooms, a form to create a room with the rule options,
join or watch by id) and moves to the table: five dice with hold toggles (click, or keys 1-5),
a roll button with the rolls left (key ``r``), every player's scorecard with the preview of the
current roll (allowed boxes in green, 0-point boxes dimmed, boxes the rules forbid struck out),
a confirmation when the chosen box scores 0 while another would score more, the moves of
everyone as they happen and the final standings. ``WatchApp`` is the same table for a
spectator.

Protocol 1.2: ``yahtzee play --computer [LEVEL]`` (a :class:`ComputerGame`) creates a room with
server-side computer players, joins it and starts the game at once; ``?`` asks the advisor for the
best three options of the turn (the dice to keep and the box are marked on the table; the advice
is cleared when the table changes); ``b`` takes the +100 of an extra Yahtzee in ``bonus_turn``
rooms; ``c`` lets the host seat a computer player in the lobby; computer players are marked
``[CPU level]`` in the scorecard.

Protocol 1.3: after game over the table shows the standings, the analysis of the game
(``GET /rooms/{id}/analysis``: the expected points each player lost against optimal play and
the costliest decisions) and ``m`` for a rematch (``offer_rematch``: the rematch room, the same
for everyone who asks, and a seat there; the table moves to it); the lobby's create form takes
computer players (count and level), hints and the house variants; with many players the
scorecard's columns shrink so that eight fit a 110-column terminal.

Remembered players (protocol 1.3): ``yahtzee play`` keeps a guest per server in
``~/.config/yahtzee/players.json`` (``clients.players``: made with ``POST /players`` the first
time, its token readable by the owner only, presented as ``Authorization: Bearer``), so its
games are archived under the player; the lobby lists the player's last games (``GET
/players/{id}/games``). A server without a database: anonymous, as before. Protocol 1.4: the
seat taken in a correspondence room is kept (``clients.seats``) for ``yahtzee turns --play``;
``clients.tui_seat.SeatApp`` is this table for a kept seat (tournament entries too).

Both use :class:`clients.client.Client`, so a dropped connection is resumed by itself. Text that
comes from other people (names) is always wrapped in ``rich.text.Text``, never parsed as markup.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import Awaitable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.css.query import NoMatches
from textual.dom import DOMNode
from textual.screen import ModalScreen, Screen
from textual.widgets import (
    Button,
    Checkbox,
    DataTable,
    Footer,
    Input,
    Label,
    RichLog,
    Select,
    Static,
)

from clients.client import Client, ClientClosedError, CommandError, ConnectionFailedError
from clients.model import RoomModel
from clients.players import (
    Guest,
    PlayersError,
    fetch_games,
    forget_guest,
    remembered_guest,
)
from clients.seats import default_seat_file, keep_correspondence_seat
from clients.verify import FetchError, fetch_analysis, http_url
from protocol import (
    BonusTaken,
    Box,
    Event,
    ExtraYahtzees,
    FirstPlayer,
    GameOver,
    GameStarted,
    HintKind,
    HintResult,
    Joker,
    Level,
    Phase,
    PlayerDisconnected,
    PlayerJoined,
    PlayerLeft,
    PlayerReconnected,
    QuickPlayMatched,
    RematchOffered,
    Rolled,
    RollOff,
    RoomOptions,
    RoomStatus,
    RoomSummary,
    Rules,
    Scored,
    Snapshot,
    Toggle,
    TurnChanged,
)

# hello's refusals of a stored player token (v1.3): the token is forgotten, play goes on anonymously
TOKEN_REFUSALS = frozenset(
    {"bad_player_token", "player_token_revoked", "unsupported", "unavailable"}
)

__all__ = [
    "ComputerGame",
    "ConfirmScreen",
    "LobbyScreen",
    "PlayApp",
    "QuickGame",
    "TableScreen",
    "WatchApp",
    "advice_lines",
    "analysis_text",
    "describe",
    "score_cell",
]

LABELS: dict[str, str] = {
    "aces": "Aces",
    "ones": "Ones",
    "twos": "Twos",
    "threes": "Threes",
    "fours": "Fours",
    "fives": "Fives",
    "sixes": "Sixes",
    "one_pair": "One Pair",
    "two_pairs": "Two Pairs",
    "three_of_a_kind": "3 of a Kind",
    "four_of_a_kind": "4 of a Kind",
    "full_house": "Full House",
    "small_straight": "Small Straight",
    "large_straight": "Large Straight",
    "yahtzee": "YAHTZEE",
    "yatzy": "Yatzy",
    "chance": "Chance",
}
FACES = " ⚀⚁⚂⚃⚄⚅"


def label(box: Box | str) -> str:
    return LABELS.get(str(box), str(box))


def describe(model: RoomModel | None, event: Event) -> Text | None:
    """One line of the moves log for an event (None: not worth a line)."""
    if model is None:
        return None
    name = model.name_of
    match event:
        case PlayerJoined():
            cpu = f" (computer, {event.computer.value})" if event.computer else ""
            return Text(f"{event.name} sat down{cpu}")
        case PlayerLeft():
            return Text(f"{name(event.player)} left" + (" (forfeit)" if event.forfeited else ""))
        case PlayerDisconnected():
            return Text(f"{name(event.player)} lost the connection")
        case PlayerReconnected():
            return Text(f"{name(event.player)} is back")
        case GameStarted():
            return Text("The game started", style="bold")
        case RollOff():
            rolls = ", ".join(f"{name(r.player)} {r.total}" for r in event.rolls)
            return Text(f"Roll-off: {rolls}")
        case TurnChanged():
            return Text(f"Round {event.round}: {name(event.player)}'s turn", style="bold")
        case Rolled():
            return Text(f"{name(event.player)} rolled {' '.join(map(str, event.dice))}")
        case Scored():
            extra = (" (Joker)" if event.joker else "") + (" (time out)" if event.automatic else "")
            return Text(f"{name(event.player)} scored {event.points} in {label(event.box)}{extra}")
        case BonusTaken():
            extra = " (time out)" if event.automatic else ""
            return Text(f"{name(event.player)} took the +100 bonus{extra}")
        case GameOver():
            return Text("Game over", style="bold")
        case RematchOffered():
            return Text(f"{name(event.player)} offers a rematch: press m to play again")
    return None


BOX_COLUMN = 16
"""The widest box label, with the mark of the advised box ("» Large Straight")."""

# Events that leave the table as it was: the advice shown stays.
PRESENCE = (PlayerDisconnected, PlayerReconnected)


def advice_lines(model: RoomModel, result: HintResult) -> list[str]:
    """The options of a hint in words, best first: "Keep 5 5 5, roll again · 254.1"."""
    lines = []
    for option in result.options:
        expected = f"{option.expected:.1f}"
        if option.kind is HintKind.SCORE and option.box is not None:
            lines.append(f"Score {label(option.box)} · {expected}")
        elif option.kind is HintKind.TAKE_BONUS:
            lines.append(f"Take the +100 bonus · {expected}")
        elif model.phase is not Phase.ROLLED or not model.dice:
            lines.append(f"Roll the dice · {expected}")
        elif not option.keep:
            lines.append(f"Roll all five again · {expected}")
        else:
            faces = " ".join(str(f) for f in sorted(model.dice[i] for i in option.keep))
            lines.append(f"Keep {faces}, roll again · {expected}")
    return lines


def _faces(faces: object) -> str:
    if not isinstance(faces, list) or not faces:
        return "nothing"
    if len(faces) == 5:
        return "all five (scored now)"
    return " ".join(str(f) for f in faces)


def _decision(review: dict[str, Any]) -> str:
    """One reviewed decision in words: "turn 4, roll 2: kept 5 5, best 5 5 5 (-3.2)"."""
    head = f"turn {review['turn']}, roll {review['roll']}: "
    if review["kind"] == "keep":
        body = f"kept {_faces(review['chosen_keep'])}, best {_faces(review['best_keep'])}"
    else:
        chosen = label(review["chosen_box"]) if review["chosen_box"] else "the +100"
        best = label(review["best_box"]) if review["best_box"] else "the +100"
        body = f"scored {chosen}, best {best}"
    return f"{head}{body} (-{review['loss']:.1f})"


def analysis_text(analysis: dict[str, Any], worst: int = 3) -> Text:
    """The analysis of a game (the JSON of ``GET /rooms/{id}/analysis``): each player's
    expected points lost against optimal play, and the costliest decisions."""
    text = Text("Analysis (expected points lost against optimal play)\n", style="bold")
    reviews: list[tuple[float, str, dict[str, Any]]] = []
    for player in analysis.get("players", []):
        cpu = f" [CPU {player['computer']}]" if player.get("computer") else ""
        count = len(player["decisions"])
        text.append(f"{player['name']}{cpu}: {player['total_loss']:.1f} lost")
        text.append(f" in {count} decisions ({player['mean_loss']:.2f} each)\n")
        reviews += [(d["loss"], player["name"], d) for d in player["decisions"] if d["loss"] > 0]
    reviews.sort(key=lambda r: -r[0])
    if reviews:
        text.append("Costliest decisions:\n", style="bold")
    for _, name, review in reviews[:worst]:
        text.append(f"  {name}, {_decision(review)}\n")
    return text


@dataclass(frozen=True)
class ComputerGame:
    """``yahtzee play --computer``: a room with ``computers`` server-side computer players of
    ``level``, created, joined and started at once."""

    level: Level = Level.MEDIUM
    computers: int = 1
    options: RoomOptions = field(default_factory=RoomOptions)
    turn_seconds: int = 0
    public: bool = True
    hints: bool = True


@dataclass(frozen=True)
class QuickGame:
    """``yahtzee play --quick``: wait for people of a similar rating (protocol 1.4; needs a
    remembered player), computers filling the seats still open after the server's wait."""

    seats: int = 2
    rules: Rules = Rules.YAHTZEE
    computers: bool = True


def quick_match_text(match: QuickPlayMatched) -> str:
    """What the player is told of a quick-play match: who, and whether computers filled."""
    people = ", ".join(match.opponents) if match.opponents else "nobody else"
    text = f"Matched after {match.waited_ms / 1000:.0f} s with {people}"
    if match.computers:
        levels = ", ".join(f"{c.name or 'a computer'} ({c.level.value})" for c in match.computers)
        text += f"; computers filled the open seats: {levels}"
    return text


def client_app(node: DOMNode) -> _ClientApp:
    """The app a screen belongs to, typed."""
    app = node.app
    assert isinstance(app, _ClientApp)
    return app


def score_cell(model: RoomModel, player: str, box: Box) -> Text:
    """What one scorecard cell shows: the points written, else the preview for the player on
    turn: ``(12)`` in green if allowed, ``(0)`` dimmed if allowed but worth nothing, ``--``
    struck out in red if the rules forbid the box now (forced Joker); else nothing."""
    p = model.player(player)
    value = p.scorecard.get(box) if p is not None else None
    if value is not None:
        return Text(str(value), style="bold")
    if player != model.current_player or model.phase is not Phase.ROLLED or model.turn_over:
        return Text("")
    entry = model.preview_for(box)
    if entry is None:
        return Text("")
    if not entry.allowed:
        return Text("--", style="strike dim red")
    return Text(f"({entry.points})", style="dim italic" if entry.points == 0 else "green")


# ---------------------------------------------------------------------------------- screens


class ConfirmScreen(ModalScreen[bool]):
    """Yes/no question; dismisses with True for yes."""

    # Cancel has the focus: a second Enter (or key repeat) must not answer yes by accident.
    AUTO_FOCUS = "#no"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
    ]

    def __init__(self, question: str, yes: str = "Yes, score it (y)") -> None:
        super().__init__()
        self.question = question
        self.yes = yes

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-box"):
            yield Label(Text(self.question), id="question")
            with Horizontal():
                yield Button(self.yes, id="yes", variant="warning")
                yield Button("Cancel (n)", id="no", variant="primary")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)

    @on(Button.Pressed, "#yes")
    def _yes(self) -> None:
        self.dismiss(True)

    @on(Button.Pressed, "#no")
    def _no(self) -> None:
        self.dismiss(False)


class LobbyScreen(Screen[None]):
    """List, create, join and watch rooms."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("f5", "refresh", "Refresh rooms")]

    def __init__(self, name: str) -> None:
        super().__init__()
        self.player_name = name
        self.rooms: list[RoomSummary] = []

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(Text("Yahtzee: lobby", style="bold"), id="title")
            with Horizontal(classes="row"):
                yield Label("Your name ")
                yield Input(self.player_name, id="name", max_length=32)
            yield Label("Open rooms (select a row, then Join or Watch)")
            yield DataTable(id="rooms", cursor_type="row")
            with Horizontal(classes="row"):
                yield Button("Refresh (F5)", id="refresh")
                yield Button("Join", id="join-selected", variant="primary")
                yield Button("Watch", id="watch-selected")
            yield Label("Create a room")
            with Horizontal(classes="row"):
                yield Label("Seats ")
                yield Input("2", id="seats", type="integer", max_length=1)
                yield Label(" Turn seconds ")
                yield Input("0", id="turn-seconds", type="integer", max_length=4)
                yield Checkbox("Public", True, id="public")
            with Horizontal(classes="row"):
                yield Select(
                    [(r.value, r.value) for r in Rules], value="yahtzee", id="rules", prompt="rules"
                )
                yield Select(
                    [(f"extra Yahtzees {v.value}", v.value) for v in ExtraYahtzees],
                    value="on",
                    id="extra-yahtzees",
                    prompt="extra Yahtzees",
                )
                yield Select(
                    [(f"joker {v.value}", v.value) for v in Joker],
                    value="forced",
                    id="joker",
                    prompt="joker",
                )
                yield Select(
                    [(f"first: {v.value}", v.value) for v in FirstPlayer],
                    value="roll_off",
                    id="first-player",
                    prompt="first player",
                )
            with Horizontal(classes="row"):
                yield Label("Computers ")
                yield Input("0", id="computers", type="integer", max_length=1)
                yield Select(
                    [(f"level {v.value}", v.value) for v in Level],
                    value="medium",
                    id="level",
                    prompt="level",
                )
                yield Checkbox("Hints", True, id="hints")
                yield Checkbox("Upper boxes first", False, id="upper-first")
                yield Checkbox("Bonus turn", False, id="bonus-turn")
            yield Button("Create and join", id="create", variant="success")
            yield Label("Join or watch by id")
            with Horizontal(classes="row"):
                yield Input(placeholder="room id", id="room-id", max_length=32)
                yield Input(placeholder="invite code (private rooms)", id="invite", max_length=32)
                yield Button("Join", id="join-id", variant="primary")
                yield Button("Watch", id="watch-id")
            yield Label("Your last games", id="history-title")
            yield DataTable(id="history", cursor_type="row")
        yield Footer()

    @property
    def client(self) -> Client:
        return client_app(self).client

    def on_mount(self) -> None:
        table = self.query_one("#rooms", DataTable)
        table.add_columns("Room", "Players", "Seats", "Status", "Rules", "Watching")
        history = self.query_one("#history", DataTable)
        history.add_columns("Finished", "Room", "Rules", "Place", "Total", "Accuracy")
        self.action_refresh()
        self.set_interval(5.0, self._refresh_when_shown)

    def _refresh_when_shown(self) -> None:
        if self.app.screen is self:
            self.action_refresh()

    @work(exclusive=True, group="history")
    async def load_history(self) -> None:
        """The remembered player's last games (v1.3), newest first; hidden when anonymous."""
        app = client_app(self)
        guest = app.guest
        title, table = (
            self.query_one("#history-title", Label),
            self.query_one("#history", DataTable),
        )
        title.display = table.display = guest is not None
        if guest is None:
            return
        try:
            page = await asyncio.to_thread(
                fetch_games, http_url(app.url), guest.player, limit=10, token=guest.token
            )
        except PlayersError as exc:
            title.update(Text(f"Your last games: not available ({exc.code})"))
            return
        games = page.get("games") or []
        title.update(Text(f"Your last games, as {guest.name}" + ("" if games else ": none yet")))
        table.clear()
        for g in games:
            finished = time.strftime("%Y-%m-%d %H:%M", time.localtime(g["finished_ms"] / 1000))
            place = (
                "abandoned"
                if g["outcome"] == "abandoned"
                else "left"
                if g["forfeited"]
                else f"{g['place']} of {g['players']}"
            )
            accuracy = g.get("accuracy")
            table.add_row(
                finished,
                Text(g["room"]),
                str((g.get("options") or {}).get("rules", "yahtzee")),
                place,
                str(g["total"]),
                "-" if accuracy is None else f"{round(100 * accuracy)}%",
                key=g["game"],
            )

    @work(exclusive=True, group="rooms")
    async def action_refresh(self) -> None:
        self.load_history()
        try:
            self.rooms = await self.client.list_rooms()
        except (CommandError, ClientClosedError) as exc:
            self.notify(str(exc), severity="error")
            return
        table = self.query_one("#rooms", DataTable)
        table.clear()
        for r in self.rooms:
            table.add_row(
                Text(r.room),
                Text(", ".join(r.players)),
                f"{r.seats - r.open_seats}/{r.seats}",
                r.status.value,
                r.options.rules.value,
                str(r.spectators),
                key=r.room,
            )

    def _entered_name(self) -> str | None:
        name = self.query_one("#name", Input).value.strip()
        if not name:
            self.notify("Enter your name first.", severity="warning")
            return None
        return name

    def _selected(self) -> str | None:
        table = self.query_one("#rooms", DataTable)
        if not self.rooms or table.cursor_row < 0 or table.cursor_row >= len(self.rooms):
            self.notify("Select a room first.", severity="warning")
            return None
        return self.rooms[table.cursor_row].room

    @on(Button.Pressed, "#refresh")
    def _refresh(self) -> None:
        self.action_refresh()

    @on(Button.Pressed, "#join-selected")
    def _join_selected(self) -> None:
        room, name = self._selected(), self._entered_name()
        if room and name:
            client_app(self).enter_room(room, name=name)

    @on(Button.Pressed, "#watch-selected")
    def _watch_selected(self) -> None:
        room = self._selected()
        if room:
            client_app(self).enter_room(room)

    @on(Button.Pressed, "#join-id")
    def _join_id(self) -> None:
        room, name = self.query_one("#room-id", Input).value.strip(), self._entered_name()
        invite = self.query_one("#invite", Input).value.strip() or None
        if room and name:
            client_app(self).enter_room(room, name=name, invite_code=invite)

    @on(Button.Pressed, "#watch-id")
    def _watch_id(self) -> None:
        room = self.query_one("#room-id", Input).value.strip()
        invite = self.query_one("#invite", Input).value.strip() or None
        if room:
            client_app(self).enter_room(room, invite_code=invite)

    @on(Button.Pressed, "#create")
    @work(exclusive=True, group="create")
    async def _create(self) -> None:
        name = self._entered_name()
        if not name:
            return

        def pick(widget_id: str) -> str:
            value = self.query_one(widget_id, Select).value
            return str(value)

        try:
            seats = max(1, min(8, int(self.query_one("#seats", Input).value or "2")))
            count = max(0, min(seats - 1, int(self.query_one("#computers", Input).value or "0")))
            created = await self.client.create_room(
                seats=seats,
                public=self.query_one("#public", Checkbox).value,
                turn_seconds=int(self.query_one("#turn-seconds", Input).value or "0"),
                rules=pick("#rules"),
                extra_yahtzees=pick("#extra-yahtzees"),
                joker=pick("#joker"),
                first_player=pick("#first-player"),
                upper_first=self.query_one("#upper-first", Checkbox).value,
                bonus_turn=self.query_one("#bonus-turn", Checkbox).value,
                computers=[Level(pick("#level"))] * count,
                hints=self.query_one("#hints", Checkbox).value,
            )
        except (CommandError, ClientClosedError, ValueError) as exc:
            self.notify(str(exc), severity="error")
            return
        client_app(self).enter_room(created.room, name=name, invite_code=created.invite_code)


class TableScreen(Screen[None]):
    """The game table, for a player (``player`` set) or a spectator."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "roll", "Roll"),
        Binding("1", "hold_die(0)", "Hold 1", show=False),
        Binding("2", "hold_die(1)", "Hold 2", show=False),
        Binding("3", "hold_die(2)", "Hold 3", show=False),
        Binding("4", "hold_die(3)", "Hold 4", show=False),
        Binding("5", "hold_die(4)", "Hold 5", show=False),
        Binding("s", "start", "Start"),
        # h as on the web page; ? stays as an alias.
        Binding("h", "hint", "Hint"),
        Binding("question_mark", "hint", "Hint", show=False),
        Binding("b", "take_bonus", "Take +100"),
        Binding("c", "add_computer", "Add computer"),
        Binding("m", "rematch", "Rematch"),
        Binding("ctrl+l", "leave", "Leave"),
    ]

    def __init__(self, room: str, *, invite_code: str | None = None, spectator: bool) -> None:
        super().__init__()
        self.room = room
        self.invite_code = invite_code
        self.spectator = spectator
        self.logged_seq = 0
        # The advice shown: the seq of the table it is for and the hint, or a status line.
        self.advice: tuple[int, HintResult | str] | None = None
        self.mounted = False  # updates before the widgets exist are shown by on_mount
        # The analysis after game over: None until asked, then a status line or the JSON.
        self.analysis: dict[str, Any] | str | None = None

    @property
    def client(self) -> Client:
        return client_app(self).client

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(id="header")
            yield Static(id="turn")
            with Horizontal(id="dice-row"):
                for i in range(5):
                    yield Button(" ", id=f"die-{i}", classes="die", disabled=True)
                yield Button("Roll", id="roll", variant="success", disabled=True)
                yield Button("Start", id="start", variant="primary")
            yield Static(id="hint")
            yield Static(id="advice")
            with Horizontal(id="main"):
                yield DataTable(id="scorecard", cursor_type="row", zebra_stripes=True)
                yield RichLog(id="log", wrap=True, markup=False, max_lines=500)
            with Horizontal(id="after"):
                yield Static(id="standings")
                yield Static(id="analysis")
        yield Footer()

    AUTO_FOCUS = "#scorecard"

    def on_mount(self) -> None:
        # Keys do the playing (r, 1-5, Enter on the scorecard); the buttons are for the mouse
        # and never take the focus, so Enter always means "score the highlighted box".
        for button in self.query(Button):
            button.can_focus = False
        self.mounted = True
        self.refresh_view()
        self.set_interval(1.0, self._tick)

    def _tick(self) -> None:
        model = self.client.model
        if model is not None and model.turn_deadline_ms is not None:
            self._render_turn(model)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Show only the keys that make sense now (None: shown but disabled)."""
        model = self.client.model
        if action == "start":
            return bool(
                model is not None
                and self.me is not None
                and model.status is RoomStatus.LOBBY
                and model.host == self.me
            )
        if action in ("roll", "hold_die"):
            if self.spectator or model is None or model.status is not RoomStatus.PLAYING:
                return False
            return True if model.current_player == self.me else None
        if action == "hint":
            return bool(model is not None and model.hints and self._my_model() is not None)
        if action == "take_bonus":
            return bool(self._my_model() is not None and model and model.can_take_bonus)
        if action == "rematch":
            mine = model.player(self.me) if model is not None and self.me else None
            return bool(
                model is not None
                and model.status is RoomStatus.FINISHED
                and mine is not None
                and not mine.forfeited
            )
        if action == "add_computer":
            return bool(
                model is not None
                and self.me is not None
                and model.status is RoomStatus.LOBBY
                and model.host == self.me
                and len(model.players) < model.max_seats
            )
        return True

    # ---------------------------------------------------------------- rendering

    @property
    def me(self) -> str | None:
        return None if self.spectator else self.client.player

    def on_unmount(self) -> None:
        self.mounted = False  # a worker that ends later (the analysis) finds no widgets

    def refresh_view(self) -> None:
        if not self.mounted:
            return
        model = self.client.model
        try:
            header = self.query_one("#header", Static)
        except NoMatches:  # the screen is being removed: nothing left to refresh
            return
        role = "watching" if self.spectator else "playing"
        if model is not None and model.status is RoomStatus.FINISHED:
            role = "game over"
        status = self.client.status
        if model is None or model.room != self.room:
            header.update(Text(f"Room {self.room} ({role}) - loading... [{status}]"))
            return
        o = model.options
        header.update(
            Text.assemble(
                (f"Room {self.room}", "bold"),
                f" ({role})",
                f"  invite {self.invite_code}" if self.invite_code else "",
                f"  {o.rules.value}, extra Yahtzees {o.extra_yahtzees.value}, "
                f"joker {o.joker.value}, first {o.first_player.value}",
                f"  |  {model.spectators} watching  |  {status}",
            )
        )
        self._render_turn(model)
        self._render_dice(model)
        self._render_advice(model)
        self.refresh_bindings()
        self._render_scorecard(model)
        self._render_standings(model)

    def _render_turn(self, model: RoomModel) -> None:
        if model.status is RoomStatus.FINISHED:
            text = Text("Game over", style="bold")
        elif model.status is RoomStatus.LOBBY:
            host = model.name_of(model.host) if model.host else "the host"
            text = Text(
                f"Lobby: {len(model.players)}/{model.max_seats} seated; {host} starts the game"
            )
        elif model.current_player is None:
            text = Text("Starting...")
        elif model.current_player == self.me:
            text = Text(f"Your turn (round {model.round})", style="bold green")
        else:
            text = Text(f"{model.name_of(model.current_player)}'s turn (round {model.round})")
        if model.turn_deadline_ms is not None and model.status is RoomStatus.PLAYING:
            left = max(0, math.ceil(model.turn_deadline_ms / 1000 - time.time()))
            text.append(f"  {left}s left", style="yellow")
        self.query_one("#turn", Static).update(text)

    def _render_dice(self, model: RoomModel) -> None:
        mine = self._my_model() is not None
        can_hold = mine and model.phase is Phase.ROLLED and model.rolls_left > 0
        for i in range(5):
            button = self.query_one(f"#die-{i}", Button)
            face = model.dice[i] if model.dice else 0
            held = i in model.held
            button.label = Text(f"{face} {FACES[face]}" if face else "-")
            button.set_class(held, "held")
            button.tooltip = "held" if held else None
            button.disabled = not can_hold
        self.query_one("#dice-row").display = model.status is not RoomStatus.FINISHED
        roll = self.query_one("#roll", Button)
        roll.label = Text(f"Roll ({model.rolls_left} left)")
        roll.disabled = not (mine and model.rolls_left > 0)
        roll.display = not self.spectator and model.status is RoomStatus.PLAYING
        start = self.query_one("#start", Button)
        start.display = (
            self.me is not None and model.status is RoomStatus.LOBBY and model.host == self.me
        )
        hint = ""
        if mine and model.phase is Phase.AWAITING_ROLL:
            hint = "Press r to roll."
        elif mine and model.phase is Phase.ROLLED:
            hint = (
                "Keys 1-5 hold dice, r rolls again; Enter on a row scores that box."
                if model.rolls_left
                else "No rolls left: choose a box (arrows, Enter)."
            )
            if model.yahtzee_bonus_pending:
                hint += " Extra Yahtzee: +100!"
            if model.can_take_bonus:
                hint += " b takes the +100 and fills no box."
            if model.hints:
                hint += " ? for a hint."
        self.query_one("#hint", Static).update(Text(hint, style="italic"))
        keep, _ = self.advised(model)
        for i in range(5):
            self.query_one(f"#die-{i}", Button).set_class(i in keep, "advised")

    def advised(self, model: RoomModel) -> tuple[set[int], str | None]:
        """What the best option of the advice shown points at: dice to keep, a box."""
        if self.advice is None or self.advice[0] != model.seq:
            return set(), None
        result = self.advice[1]
        if isinstance(result, str):
            return set(), None
        best = result.options[0]
        if best.kind is HintKind.ROLL:
            return set(best.keep), None
        return set(), str(best.box) if best.kind is HintKind.SCORE else None

    def _render_advice(self, model: RoomModel) -> None:
        widget = self.query_one("#advice", Static)
        if self.advice is None or self.advice[0] != model.seq:
            widget.display = False
            return
        widget.display = True
        result = self.advice[1]
        if isinstance(result, str):
            widget.update(Text(result, style="italic"))
            return
        text = Text("Hint (expected final score):", style="bold")
        for number, line in enumerate(advice_lines(model, result), 1):
            text.append(f"\n{number}. {line}", style="bold" if number == 1 else "")
        widget.update(text)

    def _column_width(self, model: RoomModel) -> int | None:
        """The width of each player's column when their titles would not fit beside each other
        (at most 80% of the screen, less the box column); None: as wide as they need."""
        players = len(model.players)
        if players < 2:
            return None
        room = int(self.size.width * 0.8) - (BOX_COLUMN + 2)
        width = room // players - 2  # a cell's padding
        return max(4, width) if width < 24 else None

    def _render_scorecard(self, model: RoomModel) -> None:
        table = self.query_one("#scorecard", DataTable)
        row = table.cursor_row
        table.clear(columns=True)
        table.add_column("Box", key="box")
        width = self._column_width(model)
        for p in model.players:
            title = Text(p.name, style="bold" if p.player == model.current_player else "")
            narrow = width is not None
            if p.player == self.me:
                title.append("*" if narrow else " (you)")
            if p.computer is not None:
                cpu = (
                    f" CPU{p.computer.value[0].upper()}" if narrow else f" [CPU {p.computer.value}]"
                )
                title.append(cpu, style="cyan")
            if not p.connected:
                gone = "left" if p.forfeited else "offline"
                title.append(f" {gone[:3]}" if narrow else f" ({gone})", style="red")
            if width is not None and title.cell_len > width:
                title.truncate(width, overflow="ellipsis")
            table.add_column(title, key=p.player, width=width)
        _, advised_box = self.advised(model)
        for box in model.boxes:
            name = label(box)
            cells: list[Text] = [
                Text(f"» {name}", style="bold reverse") if box == advised_box else Text(name)
            ]
            for p in model.players:
                cells.append(score_cell(model, p.player, box))
            table.add_row(*cells, key=str(box))
        table.add_row(
            Text("Upper bonus", style="bold"),
            *(Text(str(p.upper_bonus)) for p in model.players),
            key="upper_bonus",
        )
        if model.options.rules is Rules.YAHTZEE:
            table.add_row(
                Text("Yahtzee bonus", style="bold"),
                *(Text(str(p.yahtzee_bonus)) for p in model.players),
                key="yahtzee_bonus",
            )
        table.add_row(
            Text("Total", style="bold"),
            *(Text(str(p.grand), style="bold") for p in model.players),
            key="total",
        )
        table.move_cursor(row=self._cursor_row(model, row))

    def _cursor_row(self, model: RoomModel, row: int) -> int:
        """The scorecard row for the cursor: ``row`` unless it is a box I have filled, then the
        next box still open in my column (so Enter never lands on a filled box)."""
        me = self.me
        player = model.player(me) if me is not None else None
        boxes = list(model.boxes)
        if player is None or row >= len(boxes) or player.scorecard.get(boxes[row]) is None:
            return max(row, 0)
        open_rows = [i for i, box in enumerate(boxes) if player.scorecard.get(box) is None]
        later = [i for i in open_rows if i > row]
        if later or open_rows:
            return (later or open_rows)[0]
        return row

    def _render_standings(self, model: RoomModel) -> None:
        widget = self.query_one("#standings", Static)
        after = self.query_one("#after", Horizontal)
        if model.status is not RoomStatus.FINISHED:
            after.display = False
            return
        after.display = True
        text = Text("Final standings\n", style="bold")
        if model.results:
            for s in model.results:
                text.append(f"{s.place}. {s.name}: {s.total}\n")
        else:
            ranked = sorted(model.players, key=lambda p: -p.grand)
            for i, p in enumerate(ranked, 1):
                text.append(f"{i}. {p.name}: {p.grand}\n")
        if model.rematch_room is not None:
            text.append(f"Rematch offered: room {model.rematch_room}", style="bold")
            text.append(" (m to play)\n" if self.check_action("rematch", ()) else "\n")
        elif self.check_action("rematch", ()):
            text.append("Press m for a rematch\n", style="italic")
        widget.update(text)
        self._render_analysis()

    def _render_analysis(self) -> None:
        widget = self.query_one("#analysis", Static)
        if self.analysis is None:
            self.analysis = "Analysis: loading..."
            self.load_analysis()
        if isinstance(self.analysis, str):
            widget.update(Text(self.analysis, style="italic"))
        else:
            widget.update(analysis_text(self.analysis))

    @work(exclusive=True, group="analysis")
    async def load_analysis(self) -> None:
        """Read the game's analysis over HTTP (the server may answer 503 while it loads its
        strategy table: asked again a few times)."""
        base = http_url(client_app(self).url)
        result: dict[str, Any] | str = "Analysis: not available"
        for attempt in range(10):
            try:
                body = await asyncio.to_thread(
                    fetch_analysis, base, self.room, invite_code=self.invite_code
                )
            except FetchError as exc:
                result = f"Analysis: not available ({exc})"
                if "503" not in str(exc):
                    break
                await asyncio.sleep(min(2.0, 0.2 * (attempt + 1)))
                continue
            result = body if isinstance(body, dict) else "Analysis: not available"
            break
        self.analysis = result
        self.refresh_view()

    def show_update(self, update: Event | Snapshot) -> None:
        """Called by the app for each room event or snapshot."""
        if not self.mounted:
            return
        if isinstance(update, Event) and not isinstance(update, PRESENCE):
            self.advice = None  # the advice was for the table as it was
        if isinstance(update, Event) and update.seq > self.logged_seq:
            self.logged_seq = update.seq
            line = describe(self.client.model, update)
            if line is not None:
                self.query_one("#log", RichLog).write(line)
        self.refresh_view()

    # ---------------------------------------------------------------- actions

    async def _run(self, command: Awaitable[object]) -> None:
        try:
            await command
        except (CommandError, ClientClosedError) as exc:
            self.notify(str(exc), severity="error")

    def _my_model(self) -> RoomModel | None:
        """The model when this player may act on it (on turn, turn not over), else None."""
        model = self.client.model
        if self.spectator or model is None or model.current_player != self.me:
            return None
        return None if model.turn_over else model

    @work(group="commands")
    async def action_roll(self) -> None:
        model = self._my_model()
        if model is None or model.rolls_left == 0:
            return
        keep = list(model.held) if model.phase is Phase.ROLLED else []
        await self._run(self.client.roll(keep))

    @work(group="commands")
    async def action_hold_die(self, index: int) -> None:
        model = self._my_model()
        if model is None or model.phase is not Phase.ROLLED or model.rolls_left == 0:
            return
        if index in model.held:
            await self._run(self.client.release([index]))
        else:
            await self._run(self.client.hold([index]))

    @work(exclusive=True, group="hint")
    async def action_hint(self) -> None:
        """Ask the advisor for the best options of this turn (the client resends the question a
        few times while the server loads its strategy table)."""
        model = self._my_model()
        if model is None or not model.hints:
            return
        seq = model.seq
        self.advice = (seq, "Asking the advisor...")
        self.refresh_view()
        try:
            result: HintResult | str = await self.client.hint()
        except CommandError as exc:
            result = (
                "The advisor is warming up: press ? again in a moment."
                if exc.code == "unavailable"
                else f"No hint: {exc}"
            )
        except ClientClosedError as exc:
            result = f"No hint: {exc}"
        current = self.client.model
        if current is not None and current.seq == seq:
            self.advice = (seq, result)
            self.refresh_view()

    @work(group="commands")
    async def action_take_bonus(self) -> None:
        model = self._my_model()
        if model is None or not model.can_take_bonus:
            return
        await self._run(self.client.take_bonus())

    @work(group="commands")
    async def action_add_computer(self) -> None:
        model = self.client.model
        if self.spectator or model is None or model.status is not RoomStatus.LOBBY:
            return
        await self._run(self.client.add_computer(Level.MEDIUM))

    @work(exclusive=True, group="rematch")
    async def action_rematch(self) -> None:
        """Offer a rematch (or take the one offered): the rematch room, where the table moves
        with a seat (none when it filled up meanwhile: the table stays)."""
        if not self.check_action("rematch", ()):
            return
        try:
            offer = await self.client.rematch()
        except (CommandError, ClientClosedError) as exc:
            self.notify(str(exc), severity="error")
            return
        if offer.token is None:
            self.notify(f"The rematch room {offer.room} is full already.", severity="warning")
            return
        table = TableScreen(offer.room, invite_code=offer.invite_code, spectator=False)
        # switched by the app: this worker belongs to the screen that goes away
        self.app.call_later(self.app.switch_screen, table)

    @work(group="commands")
    async def action_start(self) -> None:
        model = self.client.model
        if self.spectator or model is None or model.status is not RoomStatus.LOBBY:
            return
        await self._run(self.client.start())

    @work(group="commands")
    async def action_leave(self) -> None:
        model = self.client.model
        playing = model is not None and model.status is RoomStatus.PLAYING
        if playing and not self.spectator:
            question = "Leave the game? You forfeit: your turns are skipped from now on."
            if not await self.app.push_screen_wait(ConfirmScreen(question, "Leave (y)")):
                return
        with contextlib.suppress(CommandError, ClientClosedError):
            await self.client.leave()
        self.app.pop_screen()
        if not isinstance(self.app.screen, LobbyScreen):
            self.app.exit()

    @on(Button.Pressed, "#roll")
    def _roll(self) -> None:
        self.action_roll()

    @on(Button.Pressed, "#start")
    def _start(self) -> None:
        self.action_start()

    @on(Button.Pressed, ".die")
    def _die(self, event: Button.Pressed) -> None:
        assert event.button.id is not None
        self.action_hold_die(int(event.button.id.removeprefix("die-")))

    @on(DataTable.RowSelected, "#scorecard")
    def _row(self, event: DataTable.RowSelected) -> None:
        key = event.row_key.value
        if key in LABELS:
            self.choose_box(key)

    @work(group="commands")
    async def choose_box(self, box: str) -> None:
        """Score ``box``, asking first if it scores 0 while another allowed box scores more."""
        model = self._my_model()
        if model is None or model.phase is not Phase.ROLLED:
            return
        entry = model.preview_for(box)
        if entry is None or not entry.allowed:
            self.notify(f"{label(box)} cannot be scored now.", severity="warning")
            return
        better = [e for e in model.preview if e.allowed and e.points > entry.points]
        if entry.points == 0 and better:
            best = max(better, key=lambda e: e.points)
            question = (
                f"{label(box)} scores 0 now, while {label(best.box)} would score "
                f"{best.points}. Score 0 in {label(box)}?"
            )
            if not await self.app.push_screen_wait(ConfirmScreen(question)):
                return
        await self._run(self.client.score(box))


# ---------------------------------------------------------------------------------- apps


CSS = """
#title { margin-bottom: 1; }
.row { height: auto; margin-bottom: 1; }
.row Input { width: 24; }
#seats { width: 8; }
#computers { width: 8; }
#turn-seconds { width: 10; }
#rooms { height: 10; }
Select { width: 28; }
#dice-row { height: auto; }
.die { min-width: 9; }
.die.held { background: $warning; color: $text; text-style: bold; }
.die.advised { border: tall $accent; }
#advice { border: round $accent; padding: 0 1; height: auto; }
#main { height: 1fr; }
#scorecard { width: auto; max-width: 80%; }
#log { width: 1fr; border-left: solid $primary; }
#after { height: auto; }
#standings { border: round $success; padding: 0 1; height: auto; width: auto; min-width: 30; }
#analysis { border: round $accent; padding: 0 1; height: auto; width: 1fr; }
#header { background: $primary-background; }
#turn { text-style: bold; margin: 1 0 0 0; }
ConfirmScreen { align: center middle; }
#confirm-box { width: 64; max-width: 90%; height: auto; border: thick $warning;
    background: $surface; padding: 1 2; }
/* The question wraps inside the box (a Label is as wide as its text otherwise, and is cut). */
#question { width: 100%; }
#confirm-box Horizontal { height: auto; margin-top: 1; }
"""


class _ClientApp(App[None]):
    """Shared plumbing: one Client, events pumped to the table screen."""

    CSS = CSS

    def __init__(self, url: str, *, player_file: Path | None = None, name: str = "") -> None:
        super().__init__()
        self.url = url
        self.client = Client(url, on_status=self._on_status)
        #: where remembered players are kept (None: anonymous), and the one this app plays as
        self.player_file = player_file
        self.guest: Guest | None = None
        self._guest_name = name

    def _on_status(self, status: str) -> None:
        for screen in self.screen_stack:
            if isinstance(screen, TableScreen):
                screen.refresh_view()

    async def _connect(self) -> bool:
        if self.player_file is not None:
            base = http_url(self.url)
            self.guest = await asyncio.to_thread(
                remembered_guest, self.player_file, base, self._guest_name or "Player"
            )
            if self.guest is not None:
                self.client = Client(
                    self.url, on_status=self._on_status, player_token=self.guest.token
                )
        try:
            try:
                await self.client.connect()
            except CommandError as exc:
                if self.guest is None or exc.code not in TOKEN_REFUSALS:
                    raise
                # The token was refused: forget it (unless the database is only away), and
                # play anonymously.
                if exc.code not in ("unsupported", "unavailable"):
                    await asyncio.to_thread(forget_guest, self.player_file or Path(), base)
                self.guest = None
                self.client = Client(self.url, on_status=self._on_status)
                await self.client.connect()
        except (ConnectionFailedError, CommandError) as exc:
            self.exit(return_code=1, message=str(exc))
            return False
        self.pump()
        return True

    @work(exclusive=True, group="pump")
    async def pump(self) -> None:
        async for update in self.client.events():
            for screen in self.screen_stack:
                if isinstance(screen, TableScreen):
                    screen.show_update(update)

    async def on_unmount(self) -> None:
        await self.client.close()

    def enter_room(
        self, room: str, *, name: str | None = None, invite_code: str | None = None
    ) -> None:
        """Join (with ``name``) or watch (without) a room, then show the table (in a worker)."""
        self.run_worker(self._enter_room(room, name=name, invite_code=invite_code), group="enter")

    async def _enter_room(
        self, room: str, *, name: str | None = None, invite_code: str | None = None
    ) -> None:
        try:
            if name is not None:
                joined = await self.client.join(room, name, invite_code)
                await self._keep_if_correspondence(room, joined.token)
            else:
                await self.client.spectate(room, invite_code)
        except (CommandError, ClientClosedError) as exc:
            self.notify(str(exc), severity="error")
            return
        await self.push_screen(TableScreen(room, invite_code=invite_code, spectator=name is None))

    async def _keep_if_correspondence(self, room: str, token: str) -> None:
        """A correspondence game lasts days: keep its seat to come back (``turns --play``)."""
        model = self.client.model
        if self.player_file is None or model is None or model.correspondence_seconds is None:
            return
        seat_file = default_seat_file(self.player_file)
        await asyncio.to_thread(
            keep_correspondence_seat, seat_file, http_url(self.url), room, token
        )


class PlayApp(_ClientApp):
    """``yahtzee play``: lobby, then the table."""

    TITLE = "Yahtzee"

    def __init__(
        self,
        url: str,
        *,
        name: str = "Player",
        room: str | None = None,
        invite_code: str | None = None,
        computer: ComputerGame | None = None,
        player_file: Path | None = None,
        quick: QuickGame | None = None,
    ) -> None:
        super().__init__(url, player_file=player_file, name=name)
        self.player_name = name
        self.start_room = room
        self.invite_code = invite_code
        self.computer = computer
        self.quick = quick

    async def on_mount(self) -> None:
        await self.begin()

    async def begin(self) -> None:
        """Connect, then the lobby and what the command line asked for (subclasses: their
        own first screen; textual runs every class's ``on_mount``, so they override this)."""
        if not await self._connect():
            return
        await self.push_screen(LobbyScreen(self.player_name))
        if self.quick is not None:
            await self._play_quick(self.quick)
        elif self.computer is not None:
            await self._play_computer(self.computer)
        elif self.start_room:
            await self._enter_room(
                self.start_room, name=self.player_name, invite_code=self.invite_code
            )

    async def _play_quick(self, game: QuickGame) -> None:
        """Queue for quick play, then sit at the matched table."""
        if self.guest is None:
            self.exit(return_code=1, message="quick play needs a remembered player: a server "
                      "with a database, and no --anonymous")  # fmt: skip
            return
        after = " (computers fill open seats after a while)" if game.computers else ""
        self.notify(f"Looking for players... the window widens as you wait{after}", timeout=60)
        try:
            match = await self.client.quick_play(game.seats, game.rules, game.computers)
        except (CommandError, ClientClosedError) as exc:
            self.exit(return_code=1, message=f"quick play: {exc}")
            return
        self.notify(quick_match_text(match), timeout=15)
        table = TableScreen(match.room, invite_code=match.invite_code, spectator=False)
        await self.push_screen(table)

    async def _play_computer(self, game: ComputerGame) -> None:
        """Create a room with the computer players, sit down and start at once."""
        o = game.options
        try:
            created = await self.client.create_room(
                seats=game.computers + 1,
                public=game.public,
                turn_seconds=game.turn_seconds,
                rules=o.rules,
                extra_yahtzees=o.extra_yahtzees,
                joker=o.joker,
                first_player=o.first_player,
                upper_first=o.upper_first is Toggle.ON,
                bonus_turn=o.bonus_turn is Toggle.ON,
                computers=[game.level] * game.computers,
                hints=game.hints,
            )
            await self.client.join(created.room, self.player_name, created.invite_code)
            await self.client.start()
        except (CommandError, ClientClosedError) as exc:
            self.exit(return_code=1, message=f"cannot start a game against the computer: {exc}")
            return
        table = TableScreen(created.room, invite_code=created.invite_code, spectator=False)
        await self.push_screen(table)


class WatchApp(_ClientApp):
    """``yahtzee watch ROOM``: the table, as a spectator."""

    TITLE = "Yahtzee (watching)"

    def __init__(self, url: str, *, room: str, invite_code: str | None = None) -> None:
        super().__init__(url)
        self.room = room
        self.invite_code = invite_code

    async def on_mount(self) -> None:
        if not await self._connect():
            return
        try:
            await self.client.spectate(self.room, self.invite_code)
        except (CommandError, ClientClosedError) as exc:
            self.exit(return_code=1, message=f"cannot watch {self.room}: {exc}")
            return
        await self.push_screen(TableScreen(self.room, invite_code=self.invite_code, spectator=True))
