"""A client's picture of one room, kept up to date from a snapshot and the events that follow.

Pure (no I/O): :meth:`RoomModel.from_snapshot` builds the model from a ``snapshot`` message and
:meth:`RoomModel.apply` folds in each room event in ``seq`` order. Events at or below the model's
``seq`` are duplicates (a replay after a reconnect) and are ignored; an event that skips a
``seq`` raises :class:`SeqGapError`, because the model would then be wrong: the caller asks for a
fresh snapshot instead.

The model mirrors :class:`protocol.RoomState` field by field and follows SPEC.md section 10.7,
so a model rebuilt from a snapshot and a model that followed the events compare equal (the tests
rely on that). A few fields only events can tell are extra: ``yahtzee_bonus_pending``,
``turn_over`` (set by ``scored`` or, v1.2, ``bonus_taken`` until the next turn begins: the dice
stay on the table, but nobody may act on them), ``roll_offs`` and ``results``. Protocol 1.2 adds
computer players (``PlayerModel.computer``), the room's ``hints`` flag and ``bonus_taken``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from protocol.messages import (
    BonusTaken,
    Event,
    GameOver,
    GameStarted,
    Held,
    HostChanged,
    PlayerDisconnected,
    PlayerJoined,
    PlayerLeft,
    PlayerReconnected,
    PlayerView,
    PreviewEntry,
    RatingChange,
    RatingsChanged,
    RematchOffered,
    Rolled,
    RollOff,
    RoomOptions,
    Scored,
    Snapshot,
    Spectators,
    Standing,
    TurnChanged,
)
from protocol.types import Box, Level, Phase, RoomStatus, Toggle, boxes_for

__all__ = ["PlayerModel", "RoomModel", "SeqGapError"]

UPPER_BOXES = frozenset({Box.ACES, Box.ONES, Box.TWOS, Box.THREES, Box.FOURS, Box.FIVES, Box.SIXES})


class SeqGapError(Exception):
    """An event arrived whose ``seq`` is not the next one: some events are missing."""

    def __init__(self, expected: int, got: int) -> None:
        super().__init__(f"expected seq {expected}, got {got}")
        self.expected = expected
        self.got = got


@dataclass
class PlayerModel:
    """A seated player: name, connection, scorecard and totals; ``computer`` is the level of a
    computer player (v1.2), None for a person."""

    player: str
    name: str
    seat: int
    connected: bool = True
    forfeited: bool = False
    scorecard: dict[Box, int | None] = field(default_factory=dict)
    upper: int = 0
    upper_bonus: int = 0
    lower: int = 0
    yahtzee_bonus: int = 0
    grand: int = 0
    computer: Level | None = None
    # v1.3: while away, from when the server plays their turns (None: connected, or unknown)
    away_deadline_ms: int | None = None

    @classmethod
    def from_view(cls, view: PlayerView) -> PlayerModel:
        """The player as a snapshot shows them."""
        return cls(
            player=view.player,
            name=view.name,
            seat=view.seat,
            connected=view.connected,
            forfeited=view.forfeited,
            scorecard=dict(view.scorecard),
            upper=view.totals.upper,
            upper_bonus=view.totals.upper_bonus,
            lower=view.totals.lower,
            yahtzee_bonus=view.totals.yahtzee_bonus,
            grand=view.totals.grand,
            computer=view.computer,
            away_deadline_ms=view.away_deadline_ms,
        )

    @property
    def open_boxes(self) -> list[Box]:
        return [box for box, points in self.scorecard.items() if points is None]


@dataclass
class RoomModel:
    """Everything a client shows about a room."""

    room: str
    seq: int
    status: RoomStatus
    public: bool
    max_seats: int
    turn_seconds: int
    options: RoomOptions
    host: str | None
    players: list[PlayerModel]
    phase: Phase
    order: list[str]
    current_player: str | None
    round: int
    dice: list[int]
    held: list[int]
    roll_number: int
    rolls_left: int
    preview: list[PreviewEntry]
    turn_deadline_ms: int | None
    spectators: int
    yahtzee_bonus_pending: bool = False
    turn_over: bool = False  # the player on turn has scored; the next turn has not begun
    roll_offs: list[RollOff] = field(default_factory=list)
    results: list[Standing] = field(default_factory=list)
    # Provably fair dice (v1.1; None/empty from a v1.0 server or after a mid-game snapshot):
    # the commitment announced before the first roll, the client seeds fixed at the start and
    # the server seed revealed by `game_over`: enough to check every roll of the game.
    dice_commitment: str | None = None
    seeds: list[str] = field(default_factory=list)
    server_seed: str | None = None
    # v1.2: whether members may ask for `hint` (None from an older server).
    hints: bool | None = None
    # v1.3: the room starts when full; the computers' pause; the rematch offered after the
    # game (its invite code only for the members of a private room)
    auto_start: bool | None = None
    computer_delay_ms: int | None = None
    rematch_room: str | None = None
    rematch_invite: str | None = None
    # v1.4: a correspondence room's clock per move, seconds (None: not one, or an older server)
    correspondence_seconds: int | None = None
    # v1.4: a rated room, and what its archived game did to the ratings (only events tell)
    rated: bool | None = None
    ratings: list[RatingChange] = field(default_factory=list)

    # ---------------------------------------------------------------- construction

    @classmethod
    def from_snapshot(cls, snapshot: Snapshot) -> RoomModel:
        state = snapshot.state
        return cls(
            room=snapshot.room,
            seq=snapshot.seq,
            status=state.status,
            public=state.public,
            max_seats=state.max_seats,
            turn_seconds=state.turn_seconds,
            options=state.options,
            host=state.host,
            players=[PlayerModel.from_view(p) for p in state.players],
            phase=state.phase,
            order=list(state.order),
            current_player=state.current_player,
            round=state.round,
            dice=list(state.dice),
            held=list(state.held),
            roll_number=state.roll_number,
            rolls_left=state.rolls_left,
            preview=list(state.preview),
            turn_deadline_ms=state.turn_deadline_ms,
            spectators=state.spectators,
            turn_over=state.status is RoomStatus.FINISHED,
            hints=state.hints,
            auto_start=state.auto_start,
            computer_delay_ms=state.computer_delay_ms,
            rematch_room=state.rematch_room,
            rated=state.rated,
            correspondence_seconds=(
                state.correspondence.seconds_per_move if state.correspondence else None
            ),
        )

    # ---------------------------------------------------------------- queries

    def player(self, player_id: str | None) -> PlayerModel | None:
        for p in self.players:
            if p.player == player_id:
                return p
        return None

    def name_of(self, player_id: str | None) -> str:
        p = self.player(player_id)
        return p.name if p else (player_id or "?")

    @property
    def boxes(self) -> tuple[Box, ...]:
        return boxes_for(self.options.rules)

    @property
    def can_take_bonus(self) -> bool:
        """Whether the player on turn may `take_bonus` now (v1.2, room option `bonus_turn`):
        their roll pays the +100 of an extra Yahtzee and the turn is not over."""
        return (
            self.options.bonus_turn is Toggle.ON
            and self.phase is Phase.ROLLED
            and self.yahtzee_bonus_pending
            and not self.turn_over
        )

    def preview_for(self, box: Box | str) -> PreviewEntry | None:
        for entry in self.preview:
            if entry.box == box:
                return entry
        return None

    # ---------------------------------------------------------------- updates

    def apply(self, event: Event) -> bool:
        """Fold one event in. Returns False for a duplicate (already applied), True otherwise.

        Raises :class:`SeqGapError` if ``event.seq`` is beyond ``seq + 1``.
        """
        if event.seq <= self.seq:
            return False
        if event.seq != self.seq + 1:
            raise SeqGapError(self.seq + 1, event.seq)
        self.seq = event.seq
        self._apply(event)
        return True

    def _end_turn_dice(self) -> None:
        self.dice = []
        self.held = []
        self.roll_number = 0
        self.rolls_left = 0
        self.preview = []
        self.yahtzee_bonus_pending = False

    def _apply(self, event: Event) -> None:
        match event:
            case PlayerJoined(player=pid, name=name, seat=seat):
                self.dice_commitment = event.dice_commitment or self.dice_commitment
                card: dict[Box, int | None] = dict.fromkeys(self.boxes)
                self.players.append(
                    PlayerModel(
                        player=pid, name=name, seat=seat, scorecard=card, computer=event.computer
                    )
                )
                self.players.sort(key=lambda p: p.seat)
            case PlayerLeft(player=pid, seat=seat, forfeited=forfeited):
                if forfeited:
                    if (p := self.player(pid)) is not None:
                        p.forfeited = True
                        p.connected = False
                else:
                    # Removed; in the lobby the seats above move down so they stay 0, 1, 2...
                    self.players = [p for p in self.players if p.player != pid]
                    if self.status is RoomStatus.LOBBY:
                        for p in self.players:
                            if p.seat > seat:
                                p.seat -= 1
            case PlayerDisconnected(player=pid):
                if (p := self.player(pid)) is not None:
                    p.connected = False
                    p.away_deadline_ms = event.away_deadline_ms
            case PlayerReconnected(player=pid):
                if (p := self.player(pid)) is not None:
                    p.connected = True
                    p.away_deadline_ms = None
            case RematchOffered(rematch_room=rematch, invite_code=invite):
                self.rematch_room, self.rematch_invite = rematch, invite
            case RatingsChanged(players=lines):
                self.ratings = list(lines)
            case HostChanged(player=pid):
                self.host = pid
            case GameStarted(order=order):
                self.status = RoomStatus.PLAYING
                self.order = list(order)
                self.dice_commitment = event.dice_commitment or self.dice_commitment
                self.seeds = list(event.seeds or ())
            case RollOff():
                self.roll_offs.append(event)
            case TurnChanged(player=pid, round=rnd, deadline_ms=deadline):
                self.status = RoomStatus.PLAYING
                self.phase = Phase.AWAITING_ROLL
                self.current_player = pid
                self.round = rnd
                self.turn_deadline_ms = deadline
                self._end_turn_dice()
                self.rolls_left = 3
                self.turn_over = False
            case Rolled():
                self.phase = Phase.ROLLED
                self.dice = list(event.dice)
                self.held = list(event.held)
                self.roll_number = event.roll_number
                self.rolls_left = event.rolls_left
                self.preview = list(event.preview)
                self.yahtzee_bonus_pending = event.yahtzee_bonus_pending
                self.turn_over = False
            case Held(held=held):
                self.held = list(held)
            case Scored():
                if (p := self.player(event.player)) is not None:
                    p.scorecard[event.box] = event.points
                    if event.box in UPPER_BOXES:
                        p.upper += event.points
                    else:
                        p.lower += event.points
                    p.upper_bonus = event.upper_bonus
                    p.yahtzee_bonus = event.yahtzee_bonus
                    p.grand = event.total
                # The dice stay until the next event (as in a snapshot); the turn is over.
                self.turn_over = True
                self.yahtzee_bonus_pending = False
            case BonusTaken():
                # v1.2: the +100 without a box; the turn is over as after `scored`.
                if (p := self.player(event.player)) is not None:
                    p.yahtzee_bonus = event.yahtzee_bonus
                    p.grand = event.total
                self.turn_over = True
                self.yahtzee_bonus_pending = False
            case GameOver(results=results):
                self.status = RoomStatus.FINISHED
                self.phase = Phase.FINISHED
                self.current_player = None
                self.turn_deadline_ms = None
                self._end_turn_dice()
                self.round = len(self.boxes)
                self.turn_over = True
                self.results = list(results)
                self.server_seed = event.server_seed
            case Spectators(count=count):
                self.spectators = count
            case _:
                pass  # an event type from a later minor revision: nothing to show
