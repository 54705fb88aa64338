"""Example messages: the source of the golden vectors and of every example in SPEC.md.

Build-time only (``protocol/tools/`` is not part of the installed package).

A two-player session (Ann on ``yahtzee.v1.json``, Bob on ``yahtzee.v1.msgpack``, Carol
spectating) is scripted in :data:`WALKTHROUGH`, with consistent, gap-free `seq` numbers. The
messages of the walk-through plus a few variants form :data:`CLIENT_EXAMPLES` and
:data:`SERVER_EXAMPLES` (at least one per message type). :data:`LENIENT_EXAMPLES` are valid
non-canonical frames and :data:`INVALID_EXAMPLES` malformed ones with their error code.
"""

import hashlib
import math
from dataclasses import dataclass
from typing import Final

import msgpack
import msgspec

from protocol.errors import ERROR_CODES, ErrorCode, make_error
from protocol.messages import (
    DEFAULT_LIMITS,
    AddComputer,
    AddComputerResult,
    BonusTaken,
    CancelQuickPlay,
    CancelQuickPlayResult,
    ClientMessage,
    ComputerSeat,
    Correspondence,
    CreateRoom,
    CreateRoomResult,
    DecisionReview,
    Error,
    Event,
    GameAnalysis,
    GameOver,
    GameStarted,
    GetRoom,
    GetRoomResult,
    Held,
    Hello,
    HelloResult,
    Hint,
    HintOption,
    HintResult,
    Hold,
    HostChanged,
    Join,
    JoinResult,
    Leave,
    ListRooms,
    ListRoomsResult,
    OfferRematch,
    OfferRematchResult,
    Ping,
    PlayerAnalysis,
    PlayerDisconnected,
    PlayerJoined,
    PlayerLeft,
    PlayerReconnected,
    PlayerView,
    Pong,
    PreviewEntry,
    QuickPlay,
    QuickPlayMatched,
    QuickPlayResult,
    QuickPlayStatus,
    RatingChange,
    RatingsChanged,
    Rejoin,
    RejoinResult,
    Release,
    RematchOffered,
    RememberedPlayer,
    RemoveComputer,
    Roll,
    Rolled,
    RollOff,
    RollOffRoll,
    RoomOptions,
    RoomState,
    RoomSummary,
    Score,
    Scored,
    ServerMessage,
    Snapshot,
    Spectate,
    SpectateResult,
    Spectators,
    Standing,
    Start,
    TakeBonus,
    Totals,
    TurnChanged,
    Welcome,
    make_ack,
)
from protocol.transport import PROTOCOL_MINOR, Encoding
from protocol.types import (
    YAHTZEE_BOXES,
    Box,
    FirstPlayer,
    HintKind,
    Joker,
    Level,
    Phase,
    RoomStatus,
    Rules,
    Toggle,
)

__all__ = [
    "CLIENT_EXAMPLES",
    "HTTP_EXAMPLES",
    "INVALID_EXAMPLES",
    "LENIENT_EXAMPLES",
    "SERVER_EXAMPLES",
    "WALKTHROUGH",
    "HttpExample",
    "InvalidExample",
    "LenientExample",
    "Step",
]

SERVER_VERSION: Final = "0.1.0"
ROOM: Final = "r-5fK2"
INVITE: Final = "q7m2xk"
ANN, BOB = "p-ann", "p-bob"
ANN_TOKEN: Final = "tk_7QmZ3v9XfLr2Wc8N"
BOB_TOKEN: Final = "tk_Jp4sY6dKb1Tg5HxE"
T0: Final = 1767225600000  # 2026-01-01T00:00:00Z, in Unix milliseconds

OPTIONS: Final = RoomOptions(first_player=FirstPlayer.ROLL_OFF)
# Provably fair dice (v1.1): the room's secret server seed and its public commitment. The dice
# of the examples are illustrative, not drawn from these seeds (see vectors/fairdice.json).
SERVER_SEED: Final = hashlib.sha256(b"example server seed of room r-5fK2").digest()
COMMITMENT: Final = hashlib.sha256(SERVER_SEED).hexdigest()
ANN_SEED: Final = "ann-7f3a lucky"
CREATE_KEY: Final = "k3f9-create-0001-5b0e6f3c"


@dataclass(frozen=True)
class Step:
    """One line of the walk-through: a message between two parties, or a comment."""

    sender: str
    receiver: str
    message: ClientMessage | ServerMessage | None = None
    note: str = ""


@dataclass(frozen=True)
class LenientExample:
    """A valid but non-canonical frame and the message it decodes to."""

    name: str
    direction: str  # "client" (decoded by the server) or "server"
    encoding: Encoding
    frame: str | bytes
    message: ClientMessage | ServerMessage
    note: str


@dataclass(frozen=True)
class InvalidExample:
    """A frame that must be rejected, with the expected error code and recovered id."""

    name: str
    encoding: Encoding  # the connection's encoding
    frame: str | bytes  # str: a text frame; bytes: a binary frame
    code: str
    command_id: str | None
    note: str
    max_frame_bytes: int | None = None


def _preview(
    points: dict[Box, int], allowed: frozenset[Box] | None = None
) -> tuple[PreviewEntry, ...]:
    return tuple(
        PreviewEntry(
            box=box,
            allowed=allowed is None or box in allowed,
            points=points.get(box, 0) if allowed is None or box in allowed else 0,
        )
        for box in YAHTZEE_BOXES
        if box in points
    )


def _open(**filled: int) -> dict[Box, int | None]:
    return {box: filled.get(box.value) for box in YAHTZEE_BOXES}


_ZERO = Totals(upper=0, upper_bonus=0, lower=0, yahtzee_bonus=0, grand=0)


def _player(
    player: str,
    name: str,
    seat: int,
    *,
    connected: bool = True,
    totals: Totals = _ZERO,
    **filled: int,
) -> PlayerView:
    return PlayerView(
        player=player,
        name=name,
        seat=seat,
        connected=connected,
        forfeited=False,
        scorecard=_open(**filled),
        totals=totals,
    )


class _Log:
    """Hands out consecutive seq numbers, like the room's event log."""

    def __init__(self) -> None:
        self.seq = 0

    def next(self) -> int:
        self.seq += 1
        return self.seq


_log = _Log()
_A = "Ann"
_B = "Bob"
_C = "Carol"
_S = "server"

# --------------------------------------------------------------------------------------------
# The walk-through
# --------------------------------------------------------------------------------------------

welcome_json = Welcome(
    server_version=SERVER_VERSION,
    protocol_version=1,
    encoding=Encoding.JSON,
    limits=DEFAULT_LIMITS,
    heartbeat_seconds=20,
    server_time_ms=T0,
    protocol_minor=PROTOCOL_MINOR,
)
welcome_msgpack = Welcome(
    server_version=SERVER_VERSION,
    protocol_version=1,
    encoding=Encoding.MSGPACK,
    limits=DEFAULT_LIMITS,
    heartbeat_seconds=20,
    server_time_ms=T0,
    protocol_minor=PROTOCOL_MINOR,
)
hello = Hello(id="a1", client="yahtzee-cli/0.1.0")
ack_hello = make_ack(hello)
# v1.3: a remembered player (POST /players gave Ann her id and token)
ANN_IDENTITY = "uAnn4Lw2Qx9k"
PLAYER_TOKEN = "ypt_3q2-XbT9cVn4Rk0wYp7LmZs1Hf8aGd5eJu6iOt2yQxE"
hello_player = Hello(id="a0", client="yahtzee-web/1.3", player_token=PLAYER_TOKEN)
ack_hello_player = make_ack(
    hello_player, HelloResult(player=RememberedPlayer(player=ANN_IDENTITY, name="Ann"))
)
ping = Ping(id="a2")
pong = Pong(id="a2")
create_room = CreateRoom(
    id="a3", seats=2, public=False, turn_seconds=60, options=OPTIONS, create_key=CREATE_KEY
)
ack_create_room = make_ack(create_room, CreateRoomResult(room=ROOM, invite_code=INVITE))
join_ann = Join(
    id="a4", room=ROOM, name="Ann", invite_code=INVITE, join_key="5b0e6f3c-ann-1", seed=ANN_SEED
)
ann_joined = PlayerJoined(
    room=ROOM,
    seq=_log.next(),
    player=ANN,
    name="Ann",
    seat=0,
    dice_commitment=COMMITMENT,
    seed=ANN_SEED,
)
ann_host = HostChanged(room=ROOM, seq=_log.next(), player=ANN)  # the first player becomes host
ack_join_ann = make_ack(join_ann, JoinResult(player=ANN, seat=0, token=ANN_TOKEN), seq=_log.seq)


def _lobby(*players: PlayerView) -> RoomState:
    return RoomState(
        id=ROOM,
        status=RoomStatus.LOBBY,
        public=False,
        max_seats=2,
        turn_seconds=60,
        options=OPTIONS,
        host=ANN,
        players=players,
        phase=Phase.LOBBY,
        order=(),
        current_player=None,
        round=0,
        dice=(),
        held=(),
        roll_number=0,
        rolls_left=0,
        preview=(),
        turn_deadline_ms=None,
        spectators=0,
        joker=False,
        hints=True,
        auto_start=False,
        computer_delay_ms=900,
    )


snapshot_ann = Snapshot(room=ROOM, seq=_log.seq, state=_lobby(_player(ANN, "Ann", 0)))
get_room_bob = GetRoom(id="b1", room=ROOM, invite_code=INVITE)
summary_lobby = RoomSummary(
    room=ROOM,
    status=RoomStatus.LOBBY,
    public=False,
    players=("Ann",),
    seats=2,
    open_seats=1,
    spectators=0,
    options=OPTIONS,
    turn_seconds=60,
    hints=True,
    auto_start=False,
    computer_delay_ms=900,
)
ack_get_room = make_ack(get_room_bob, GetRoomResult(room=summary_lobby))
join_bob = Join(id="b2", room=ROOM, name="Bob", invite_code=INVITE)
bob_joined = PlayerJoined(
    room=ROOM, seq=_log.next(), player=BOB, name="Bob", seat=1, dice_commitment=COMMITMENT
)
ack_join_bob = make_ack(join_bob, JoinResult(player=BOB, seat=1, token=BOB_TOKEN), seq=_log.seq)
snapshot_bob = Snapshot(
    room=ROOM, seq=_log.seq, state=_lobby(_player(ANN, "Ann", 0), _player(BOB, "Bob", 1))
)
start = Start(id="a5", expect_seq=_log.seq)
roll_off = RollOff(
    room=ROOM,
    seq=_log.next(),
    round=1,
    rolls=(
        RollOffRoll(player=ANN, dice=(6, 5, 4, 2, 1), total=18),
        RollOffRoll(player=BOB, dice=(5, 3, 3, 2, 1), total=14),
    ),
    contenders_next=(),
)
game_started = GameStarted(
    room=ROOM,
    seq=_log.next(),
    order=(ANN, BOB),
    first_player=FirstPlayer.ROLL_OFF,
    dice_commitment=COMMITMENT,
    seeds=(ANN_SEED, ""),  # in seat order; Bob gave no seed
)
turn_ann_1 = TurnChanged(
    room=ROOM,
    seq=_log.next(),
    player=ANN,
    round=1,
    deadline_ms=T0 + 60_000,
    server_time_ms=T0,
)
ack_start = make_ack(start, seq=_log.seq)
roll_1 = Roll(id="a6", expect_seq=_log.seq)
rolled_1 = Rolled(
    room=ROOM,
    seq=_log.next(),
    player=ANN,
    dice=(3, 3, 5, 3, 6),
    roll_number=1,
    rolls_left=2,
    held=(),
    preview=_preview(
        {
            Box.ACES: 0,
            Box.TWOS: 0,
            Box.THREES: 9,
            Box.FOURS: 0,
            Box.FIVES: 5,
            Box.SIXES: 6,
            Box.THREE_OF_A_KIND: 20,
            Box.FOUR_OF_A_KIND: 0,
            Box.FULL_HOUSE: 0,
            Box.SMALL_STRAIGHT: 0,
            Box.LARGE_STRAIGHT: 0,
            Box.YAHTZEE: 0,
            Box.CHANCE: 20,
        }
    ),
    yahtzee_bonus_pending=False,
    joker=False,
)
ack_roll_1 = make_ack(roll_1, seq=_log.seq)
hold = Hold(id="a7", dice=(0, 1, 3), expect_seq=_log.seq)
held = Held(room=ROOM, seq=_log.next(), player=ANN, held=(0, 1, 3))
ack_hold = make_ack(hold, seq=_log.seq)
roll_2 = Roll(id="a8", keep=(0, 1, 3), expect_seq=_log.seq)
rolled_2 = Rolled(
    room=ROOM,
    seq=_log.next(),
    player=ANN,
    dice=(3, 3, 3, 3, 2),
    roll_number=2,
    rolls_left=1,
    held=(0, 1, 3),
    preview=_preview(
        {
            Box.ACES: 0,
            Box.TWOS: 2,
            Box.THREES: 12,
            Box.FOURS: 0,
            Box.FIVES: 0,
            Box.SIXES: 0,
            Box.THREE_OF_A_KIND: 14,
            Box.FOUR_OF_A_KIND: 14,
            Box.FULL_HOUSE: 0,
            Box.SMALL_STRAIGHT: 0,
            Box.LARGE_STRAIGHT: 0,
            Box.YAHTZEE: 0,
            Box.CHANCE: 14,
        }
    ),
    yahtzee_bonus_pending=False,
    joker=False,
)
ack_roll_2 = make_ack(roll_2, seq=_log.seq)
roll_bob_early = Roll(id="b3", expect_seq=_log.seq)
error_not_your_turn = make_error(
    ErrorCode.NOT_YOUR_TURN, "b3", seq=_log.seq, message="It is Ann's turn."
)
# Ann scores what she saw: expect_seq is the seq of the last event she applied (rolled_2)
score = Score(id="a9", box=Box.FOUR_OF_A_KIND, expect_seq=_log.seq)
scored = Scored(
    room=ROOM,
    seq=_log.next(),
    player=ANN,
    box=Box.FOUR_OF_A_KIND,
    points=14,
    upper_bonus=0,
    yahtzee_bonus=0,
    joker=False,
    automatic=False,
    total=14,
)
turn_bob_1 = TurnChanged(
    room=ROOM,
    seq=_log.next(),
    player=BOB,
    round=1,
    deadline_ms=T0 + 75_000,
    server_time_ms=T0 + 15_000,
)
ack_score = make_ack(score, seq=_log.seq)
spectate = Spectate(id="c1", room=ROOM, invite_code=INVITE)
_ann_after_1 = _player(
    ANN,
    "Ann",
    0,
    totals=Totals(upper=0, upper_bonus=0, lower=14, yahtzee_bonus=0, grand=14),
    four_of_a_kind=14,
)
snapshot_playing = Snapshot(
    room=ROOM,
    seq=_log.seq,
    state=RoomState(
        id=ROOM,
        status=RoomStatus.PLAYING,
        public=False,
        max_seats=2,
        turn_seconds=60,
        options=OPTIONS,
        host=ANN,
        players=(_ann_after_1, _player(BOB, "Bob", 1)),
        phase=Phase.AWAITING_ROLL,
        order=(ANN, BOB),
        current_player=BOB,
        round=1,
        dice=(),
        held=(),
        roll_number=0,
        rolls_left=3,
        preview=(),
        turn_deadline_ms=T0 + 75_000,
        spectators=0,
        joker=False,
        hints=True,
        auto_start=False,
        computer_delay_ms=900,
    ),
)
spectators = Spectators(room=ROOM, seq=_log.next(), count=1)
ack_spectate = make_ack(spectate, SpectateResult(resumed=False), seq=snapshot_playing.seq)
bob_last_seen = _log.seq
bob_disconnected = PlayerDisconnected(room=ROOM, seq=_log.next(), player=BOB)
rejoin = Rejoin(id="b4", room=ROOM, token=BOB_TOKEN, last_seq=bob_last_seen)
missed = bob_disconnected
bob_reconnected = PlayerReconnected(room=ROOM, seq=_log.next(), player=BOB)
ack_rejoin = make_ack(rejoin, RejoinResult(player=BOB, seat=1, resumed=True), seq=_log.seq)
roll_bob = Roll(id="b5", expect_seq=_log.seq)
rolled_bob = Rolled(
    room=ROOM,
    seq=_log.next(),
    player=BOB,
    dice=(2, 5, 2, 5, 5),
    roll_number=1,
    rolls_left=2,
    held=(),
    preview=_preview(
        {
            Box.ACES: 0,
            Box.TWOS: 4,
            Box.THREES: 0,
            Box.FOURS: 0,
            Box.FIVES: 15,
            Box.SIXES: 0,
            Box.THREE_OF_A_KIND: 19,
            Box.FOUR_OF_A_KIND: 0,
            Box.FULL_HOUSE: 25,
            Box.SMALL_STRAIGHT: 0,
            Box.LARGE_STRAIGHT: 0,
            Box.YAHTZEE: 0,
            Box.CHANCE: 19,
        }
    ),
    yahtzee_bonus_pending=False,
    joker=False,
)
ack_roll_bob = make_ack(roll_bob, seq=_log.seq)
score_bob = Score(id="b6", box=Box.FULL_HOUSE, expect_seq=_log.seq)
scored_bob = Scored(
    room=ROOM,
    seq=_log.next(),
    player=BOB,
    box=Box.FULL_HOUSE,
    points=25,
    upper_bonus=0,
    yahtzee_bonus=0,
    joker=False,
    automatic=False,
    total=25,
)
turn_ann_2 = TurnChanged(
    room=ROOM,
    seq=_log.next(),
    player=ANN,
    round=2,
    deadline_ms=T0 + 104_000,
    server_time_ms=T0 + 44_000,
)
ack_score_bob = make_ack(score_bob, seq=_log.seq)
last_round_seq = 148  # rounds 2..13 are elided from the walk-through
scored_last = Scored(
    room=ROOM,
    seq=last_round_seq + 1,
    player=BOB,
    box=Box.CHANCE,
    points=22,
    upper_bonus=35,
    yahtzee_bonus=0,
    joker=False,
    automatic=True,
    total=231,
)
game_over = GameOver(
    room=ROOM,
    seq=last_round_seq + 2,
    results=(
        Standing(player=ANN, name="Ann", total=254, place=1, forfeited=False),
        Standing(player=BOB, name="Bob", total=231, place=2, forfeited=False),
    ),
    server_seed=SERVER_SEED.hex(),
)
leave = Leave(id="a40")
# After game_over, `leave` changes nothing in the room: no event, the seq stays.
ack_leave = make_ack(leave, seq=game_over.seq)

_ALL = (_A, _B, _C)

WALKTHROUGH: Final[tuple[Step, ...]] = (
    Step(_A, _S, note="Ann connects: GET /ws with Sec-WebSocket-Protocol: yahtzee.v1.json"),
    Step(_S, _A, welcome_json),
    Step(_A, _S, hello),
    Step(_S, _A, ack_hello),
    Step(_A, _S, ping),
    Step(_S, _A, pong),
    Step(_A, _S, create_room),
    Step(_S, _A, ack_create_room, note="Not in a room yet: ack.seq is null."),
    Step(_A, _S, join_ann),
    Step(_S, _A, ack_join_ann, note="Ann stores the token; it is never sent again."),
    Step(
        _S,
        _A,
        snapshot_ann,
        note=(
            f"The snapshot already contains Ann's player_joined (seq {ann_joined.seq}) and"
            f" host_changed (seq {ann_host.seq}): the first player to join becomes host."
        ),
    ),
    Step(_B, _S, note="Bob connects with yahtzee.v1.msgpack (shown as JSON for reading)."),
    Step(_S, _B, note="welcome, as for Ann but with encoding msgpack (vector welcome_msgpack)."),
    Step(_B, _S, get_room_bob),
    Step(_S, _B, ack_get_room),
    Step(_B, _S, join_bob),
    Step(_S, _B, ack_join_bob),
    Step(_S, _B, note="snapshot at seq 3: Ann's plus Bob (vector snapshot_lobby_two)."),
    Step(_S, _A, bob_joined),
    Step(_A, _S, start),
    Step(_S, _A + ", " + _B, roll_off, note="Highest total starts: no tie, no second round."),
    Step(_S, _A + ", " + _B, game_started),
    Step(_S, _A + ", " + _B, turn_ann_1),
    Step(
        _S,
        _A,
        ack_start,
        note="A command's own events reach its sender before its ack; ack.seq is the last one.",
    ),
    Step(_A, _S, roll_1),
    Step(_S, _A + ", " + _B, rolled_1),
    Step(_S, _A, ack_roll_1),
    Step(_A, _S, hold),
    Step(_S, _A + ", " + _B, held),
    Step(_S, _A, ack_hold),
    Step(_A, _S, roll_2, note="keep repeats the held dice: the server keeps exactly `keep`."),
    Step(_S, _A + ", " + _B, rolled_2),
    Step(_S, _A, ack_roll_2),
    Step(_B, _S, roll_bob_early),
    Step(
        _S,
        _B,
        error_not_your_turn,
        note=f"Rejected: nothing changed, seq stays {error_not_your_turn.seq}.",
    ),
    Step(_A, _S, score),
    Step(_S, _A + ", " + _B, scored),
    Step(_S, _A + ", " + _B, turn_bob_1),
    Step(_S, _A, ack_score),
    Step(_C, _S, note="Carol connects (json) and watches with the invite code."),
    Step(_S, _C, note="welcome, as for Ann."),
    Step(_C, _S, spectate),
    Step(_S, _C, ack_spectate, note="resumed false: a snapshot follows, ending at ack.seq."),
    Step(_S, _C, snapshot_playing, note="No last_seq: a snapshot, then live events."),
    Step(
        _S,
        ", ".join(_ALL),
        spectators,
        note="The spectator count is coalesced: at most about one such event a second.",
    ),
    Step(_B, _S, note=f"Bob's network drops; the last seq he saw is {bob_last_seen}."),
    Step(_S, _A + ", " + _C, bob_disconnected),
    Step(_B, _S, note="Bob reconnects on a new connection (welcome omitted) and resumes."),
    Step(_B, _S, rejoin),
    Step(_S, _B, ack_rejoin, note="resumed true: the missed events follow, up to ack.seq."),
    Step(_S, _B, missed, note="Exactly the missed events (seq > last_seq), then live ones."),
    Step(_S, ", ".join(_ALL), bob_reconnected),
    Step(_B, _S, roll_bob),
    Step(_S, ", ".join(_ALL), rolled_bob),
    Step(_S, _B, ack_roll_bob),
    Step(_B, _S, score_bob),
    Step(_S, ", ".join(_ALL), scored_bob),
    Step(_S, ", ".join(_ALL), turn_ann_2),
    Step(_S, _B, ack_score_bob),
    Step(_S, _S, note=f"... rounds 2 to 13 (seq {turn_ann_2.seq + 1} to {last_round_seq}) ..."),
    Step(
        _S,
        ", ".join(_ALL),
        scored_last,
        note="Bob's turn timer expired: the server scored for him (automatic).",
    ),
    Step(_S, ", ".join(_ALL), game_over, note="server_seed reveals the seed committed to."),
    Step(_A, _S, leave),
    Step(_S, _A, ack_leave, note="After game_over: no event; Ann's token is revoked."),
)
"""The transcript of the quick start: SPEC-APPENDIX.md A, linked from SPEC.md section 1."""

# --------------------------------------------------------------------------------------------
# Variants, so that every message type and interesting shape has a vector
# --------------------------------------------------------------------------------------------

_yatzy_summary = RoomSummary(
    room="Yatzy_night",
    status=RoomStatus.PLAYING,
    public=True,
    players=("Åsa", "Nils", "Zoë 🎲"),
    seats=4,
    open_seats=0,  # always 0 once the game has started: nobody can join any more
    spectators=3,
    options=RoomOptions(rules=Rules.YATZY),  # as created by vector create_room_yatzy
    turn_seconds=0,
    hints=True,
    auto_start=False,
    computer_delay_ms=900,
)

# Bob rolls on what he believes is his turn, but his last seen event (seq 9) is old: the
# room is at seq 11, so the roll is refused and nothing changes.
roll_stale = Roll(id="b7", keep=(0, 2), expect_seq=9)
error_stale_state = make_error(ErrorCode.STALE_STATE, "b7", seq=11)

rolled_joker = Rolled(
    room=ROOM,
    seq=97,
    player=ANN,
    dice=(4, 4, 4, 4, 4),
    roll_number=2,
    rolls_left=1,
    held=(0, 1, 2),
    preview=_preview(
        {
            Box.TWOS: 0,
            Box.FOURS: 20,
            Box.SIXES: 0,
            Box.FULL_HOUSE: 0,
            Box.LARGE_STRAIGHT: 0,
            Box.CHANCE: 0,
        },
        allowed=frozenset({Box.FOURS}),
    ),
    yahtzee_bonus_pending=True,
    joker=True,
)


create_room_yatzy = CreateRoom(
    id="req-0002", seats=4, public=True, options=RoomOptions(rules=Rules.YATZY)
)
list_rooms = ListRooms(id="a10")

# --------------------------------------------------------------------------------------------
# v1.2: a room with computer players, hints and the bonus_turn variant
# --------------------------------------------------------------------------------------------
# Dana creates a public room with one computer seated at once (seq 1), joins (seq 2-3: a
# computer is never the host), seats a second computer (seq 4) and frees its seat again
# (seq 5). The game then starts in seat order: Ada, the computer, plays first through the same
# events as a person (seq 6-10), then Dana rolls (seq 11-12) and asks for a hint.

BOTS: Final = "r-Bots7"
DANA, ADA, BLAISE = "p-dana", "c5e0a9d41b27", "c91f3b66e0d8"
DANA_TOKEN: Final = "tk_Rb8nQ2wHc5Lz0VyD"
BOTS_COMMITMENT: Final = hashlib.sha256(
    hashlib.sha256(b"example server seed of room r-Bots7").digest()
).hexdigest()
BOTS_OPTIONS: Final = RoomOptions(first_player=FirstPlayer.SEAT_ORDER, bonus_turn=Toggle.ON)

create_room_computers = CreateRoom(
    id="d1",
    seats=3,
    public=True,
    options=BOTS_OPTIONS,
    computers=(ComputerSeat(level=Level.MEDIUM, name="Ada"),),
    hints=True,
    computer_delay_ms=800,
)
ada_joined = PlayerJoined(
    room=BOTS,
    seq=1,
    player=ADA,
    name="Ada",
    seat=0,
    dice_commitment=BOTS_COMMITMENT,
    computer=Level.MEDIUM,
)
dana_joined = PlayerJoined(
    room=BOTS, seq=2, player=DANA, name="Dana", seat=1, dice_commitment=BOTS_COMMITMENT
)
dana_host = HostChanged(room=BOTS, seq=3, player=DANA)
_ada_view = msgspec.structs.replace(_player(ADA, "Ada", 0), computer=Level.MEDIUM)
snapshot_computers = Snapshot(
    room=BOTS,
    seq=dana_host.seq,
    state=msgspec.structs.replace(
        _lobby(_ada_view, _player(DANA, "Dana", 1)),
        id=BOTS,
        public=True,
        max_seats=3,
        turn_seconds=0,
        options=BOTS_OPTIONS,
        host=DANA,
        computer_delay_ms=800,
    ),
)
add_computer = AddComputer(id="d3", level=Level.HARD)
blaise_joined = PlayerJoined(
    room=BOTS,
    seq=4,
    player=BLAISE,
    name="Blaise",  # no name asked for: the server picked one
    seat=2,
    dice_commitment=BOTS_COMMITMENT,
    computer=Level.HARD,
)
ack_add_computer = make_ack(add_computer, AddComputerResult(player=BLAISE, seat=2), seq=4)
remove_computer = RemoveComputer(id="d4", player=BLAISE)
blaise_removed = PlayerLeft(room=BOTS, seq=5, player=BLAISE, seat=2, forfeited=False)
ack_remove_computer = make_ack(remove_computer, seq=5)
# seq 6 game_started, 7 turn_changed (Ada), then Ada plays, 800 ms before each move:
ada_rolled = Rolled(
    room=BOTS,
    seq=8,
    player=ADA,
    dice=(6, 6, 2, 6, 6),
    roll_number=1,
    rolls_left=2,
    held=(),
    preview=_preview(
        {
            Box.ACES: 0,
            Box.TWOS: 2,
            Box.THREES: 0,
            Box.FOURS: 0,
            Box.FIVES: 0,
            Box.SIXES: 24,
            Box.THREE_OF_A_KIND: 26,
            Box.FOUR_OF_A_KIND: 26,
            Box.FULL_HOUSE: 0,
            Box.SMALL_STRAIGHT: 0,
            Box.LARGE_STRAIGHT: 0,
            Box.YAHTZEE: 0,
            Box.CHANCE: 26,
        }
    ),
    yahtzee_bonus_pending=False,
    joker=False,
)
ada_scored = Scored(
    room=BOTS,
    seq=9,
    player=ADA,
    box=Box.FOUR_OF_A_KIND,
    points=26,
    upper_bonus=0,
    yahtzee_bonus=0,
    joker=False,
    automatic=False,  # a computer's own choice, like a person's
    total=26,
)
# seq 10 turn_changed (Dana)
rolled_dana = Rolled(
    room=BOTS,
    seq=11,
    player=DANA,
    dice=(3, 3, 5, 3, 6),
    roll_number=1,
    rolls_left=2,
    held=(),
    preview=rolled_1.preview,
    yahtzee_bonus_pending=False,
    joker=False,
)
hint = Hint(id="d7")
# Best first. The expected final scores are Dana's, with optimal play from then on: keeping
# the three 3s is best; scoring now (3 of a kind, 20) would cost about 20 points.
ack_hint = make_ack(
    hint,
    HintResult(
        player=DANA,
        rolls_left=2,
        options=(
            HintOption(kind=HintKind.ROLL, keep=(0, 1, 3), expected=251.842),
            HintOption(kind=HintKind.ROLL, keep=(0, 1, 2, 3), expected=247.315),
            HintOption(kind=HintKind.ROLL, keep=(2, 4), expected=243.06),
        ),
    ),
    seq=rolled_dana.seq,
)
ack_hint_before_roll = make_ack(
    Hint(id="d6"),
    # Before the turn's first roll the only option is to roll all five dice.
    HintResult(
        player=DANA,
        rolls_left=3,
        options=(HintOption(kind=HintKind.ROLL, expected=254.589),),
    ),
    seq=10,
)
ack_hint_last_roll = make_ack(
    Hint(id="d12"),
    HintResult(
        player=DANA,
        rolls_left=0,
        options=(
            HintOption(kind=HintKind.SCORE, box=Box.FULL_HOUSE, expected=218.734),
            HintOption(kind=HintKind.SCORE, box=Box.SIXES, expected=214.102),
            HintOption(kind=HintKind.SCORE, box=Box.THREE_OF_A_KIND, expected=211.467),
        ),
    ),
    seq=52,
)
error_hints_disabled = make_error(
    ErrorCode.HINTS_DISABLED, "h1", seq=12, message="This room was created without hints."
)
error_hint_unavailable = make_error(
    ErrorCode.UNAVAILABLE,
    "d8",
    seq=rolled_dana.seq,
    message="The advisor is still loading its strategy table: retry shortly.",
)
# Later in the game (bonus_turn on): Dana, with 50 in YAHTZEE, rolls 4-4-4-4-4 (seq 88) and
# takes the +100 without filling a box. Her next turn is round 9 again.
take_bonus = TakeBonus(id="d20", expect_seq=88)
ack_hint_bonus = make_ack(
    Hint(id="d19"),
    HintResult(
        player=DANA,
        rolls_left=1,
        options=(
            HintOption(kind=HintKind.TAKE_BONUS, expected=352.416),
            HintOption(kind=HintKind.SCORE, box=Box.FOURS, expected=347.981),
            HintOption(kind=HintKind.ROLL, keep=(0, 1, 2, 3), expected=341.236),
        ),
    ),
    seq=88,
)
bonus_taken = BonusTaken(
    room=BOTS, seq=89, player=DANA, yahtzee_bonus=100, automatic=False, total=287
)
turn_ada_after_bonus = TurnChanged(
    room=BOTS, seq=90, player=ADA, round=10, deadline_ms=None, server_time_ms=T0 + 1_312_000
)
ack_take_bonus = make_ack(take_bonus, seq=turn_ada_after_bonus.seq)


# --------------------------------------------------------------------------------------------
# v1.3: rooms that start when full, the away countdown, rematches
# --------------------------------------------------------------------------------------------
# Dana's connection drops while Ada plays (seq 30; no turn timer in r-Bots7): from 60 s later
# (the server's absent-player grace) her turns are played for her. After game over (seq 161)
# Dana offers a rematch: the first offer creates room r-Bots8 (public like r-Bots7, the same
# options, seats, computers and computer delay, auto_start on) and seats Dana there.

dana_away = PlayerDisconnected(
    room=BOTS, seq=30, player=DANA, away_deadline_ms=T0 + 1_000_000 + 60_000
)
REMATCH: Final = "r-Bots8"
DANA_REMATCH_TOKEN: Final = "tk_Wm3cX8pLq6Fz1NaT"
offer_rematch = OfferRematch(id="d40")
rematch_offered = RematchOffered(room=BOTS, seq=162, player=DANA, rematch_room=REMATCH)
ack_offer_rematch = make_ack(
    offer_rematch,
    OfferRematchResult(
        room=REMATCH, invite_code=None, player="p-dana2", seat=1, token=DANA_REMATCH_TOKEN
    ),
    seq=rematch_offered.seq,
)
# In the private room r-5fK2, Bob offers a rematch after Ann did: the same room, its code.
rematch_offered_private = RematchOffered(
    room=ROOM, seq=160, player=ANN, rematch_room="r-9hQ4", invite_code="w2n8rt"
)
ack_offer_rematch_full = make_ack(
    OfferRematch(id="b30"),
    # Both seats of r-9hQ4 were taken meanwhile: the room, but no seat.
    OfferRematchResult(room="r-9hQ4", invite_code="w2n8rt"),
    seq=160,
)
create_room_auto_start = CreateRoom(
    id="e1",
    seats=2,
    public=True,
    computers=(ComputerSeat(level=Level.HARD),),
    computer_delay_ms=400,
    auto_start=True,
)
summary_auto_start = RoomSummary(
    room="r-Quick3",
    status=RoomStatus.LOBBY,
    public=True,
    players=("Blaise",),
    seats=2,
    open_seats=1,
    spectators=0,
    options=RoomOptions(),
    turn_seconds=0,
    hints=True,
    auto_start=True,
    computer_delay_ms=400,
)

# v1.4: a correspondence room, a day per move, and how the lobby lists it.
create_room_correspondence = CreateRoom(
    id="f1",
    seats=2,
    public=True,
    correspondence=Correspondence(seconds_per_move=86_400),
)
summary_correspondence = RoomSummary(
    room="r-Slow1",
    status=RoomStatus.LOBBY,
    public=True,
    players=("Ann",),
    seats=2,
    open_seats=1,
    spectators=0,
    options=RoomOptions(),
    turn_seconds=0,
    hints=True,
    auto_start=False,
    computer_delay_ms=900,
    correspondence=Correspondence(seconds_per_move=86_400),
)


# --------------------------------------------------------------------------------------------
# v1.4: quick play matched by rating
# --------------------------------------------------------------------------------------------
# Ann (a remembered player, rated 1612 at Yahtzee) asks for a 3-seat game: she is second in the
# queue, accepting opponents within 100 points for now; the window widens while she waits.
# After 12 s Erik (1570) and Ines (1655) are matched with her in the private room r-Qk7Ln;
# she enters it with `rejoin` and the token. Bob, unrated and alone in the 2-seat queue, gets
# a medium computer after 30 s.

quick_play = QuickPlay(id="q1", seats=3)
ack_quick_play = make_ack(
    quick_play,
    QuickPlayResult(position=2, window=100, rating=1612.0, computers_after_ms=30_000),
)
quick_play_status = QuickPlayStatus(position=1, waiting=2, window=220, waited_ms=6_000)
quick_play_matched = QuickPlayMatched(
    room="r-Qk7Ln",
    invite_code="h4t9wq",
    player="p-ann3",
    seat=1,
    token="tk_Qp2vN8sLx4Rb7YcD",
    opponents=("Erik", "Ines"),
    waited_ms=12_000,
)
quick_play_computers = QuickPlay(id="b50", seats=2, rules=Rules.YAHTZEE, computers=True)
quick_play_matched_computers = QuickPlayMatched(
    room="r-Qk7Lp",
    invite_code="m3c8vz",
    player="p-bob3",
    seat=0,
    token="tk_Bq5wM2nKz8Ty3HfJ",
    computers=(ComputerSeat(level=Level.MEDIUM, name="Ada"),),
    waited_ms=30_000,
)
cancel_quick_play = CancelQuickPlay(id="q2")
ack_cancel_quick_play = make_ack(cancel_quick_play, CancelQuickPlayResult())


# --------------------------------------------------------------------------------------------
# v1.4: rated rooms and their ratings
# --------------------------------------------------------------------------------------------
# Ann (a remembered player) creates a rated room; Bob, another remembered player, joins. After
# game over (seq 161) the archiver writes the game and the room hears how the ratings moved.

BOB_IDENTITY: Final = "uBob7Hn3Vc2p"
RATED: Final = "r-Rated1"
create_room_rated = CreateRoom(id="f1", seats=2, public=True, rated=True)
ratings_changed = RatingsChanged(
    room=RATED,
    seq=162,
    family=Rules.YAHTZEE,
    players=(
        RatingChange(
            player=ANN,
            identity=ANN_IDENTITY,
            before=1500,
            after=1658,
            provisional=True,
            accuracy=98.71,
            luck=-20.3,
            decision_rating=2661,
        ),
        RatingChange(
            player=BOB,
            identity=BOB_IDENTITY,
            before=1500,
            after=1342,
            provisional=True,
            accuracy=95.02,
            luck=-35.8,
            decision_rating=2128,
        ),
    ),
)
error_identity_required = make_error(
    ErrorCode.IDENTITY_REQUIRED,
    "f2",
    message="a rated room seats remembered players only",
)
error_rated_no_computers = make_error(
    ErrorCode.RATED_NO_COMPUTERS, "f3", message="computers cannot sit in a rated room"
)


def _without_field(message: ServerMessage, name: str) -> str:
    value = msgspec.json.decode(msgspec.json.encode(message))
    del value[name]
    return msgspec.json.encode(value).decode()


CLIENT_EXAMPLES: Final[tuple[tuple[str, ClientMessage], ...]] = (
    ("hello", hello),
    ("hello_anonymous", Hello(id="1")),
    ("hello_player_token", hello_player),
    ("create_room", create_room),
    ("create_room_yatzy", create_room_yatzy),
    ("list_rooms", list_rooms),
    ("get_room", get_room_bob),
    ("join", join_ann),
    ("join_public_unicode", Join(id="z1", room="Yatzy_night", name="Zoë 🎲")),
    ("join_finished_room", Join(id="z3", room="Yatzy_night", name="Zoë")),
    (
        "join_with_key",
        Join(id="z2", room="Yatzy_night", name="Zoë", join_key="5b0e6f3c-join-1"),
    ),
    ("rejoin", rejoin),
    ("rejoin_snapshot", Rejoin(id="b9", room=ROOM, token=BOB_TOKEN)),
    ("spectate", spectate),
    ("spectate_resume", Spectate(id="c2", room=ROOM, invite_code=INVITE, last_seq=42)),
    ("leave", leave),
    ("start", start),
    ("roll", roll_1),
    ("roll_keep", roll_2),
    ("hold", hold),
    ("release", Release(id="a11", dice=(3,))),
    ("score", score),
    ("roll_expect_seq", roll_stale),
    ("create_room_computers", create_room_computers),
    ("add_computer", add_computer),
    ("add_computer_named", AddComputer(id="d5", level=Level.OPTIMAL, name="Max")),
    ("remove_computer", remove_computer),
    ("hint", hint),
    ("take_bonus", take_bonus),
    ("create_room_auto_start", create_room_auto_start),
    ("create_room_rated", create_room_rated),
    ("offer_rematch", offer_rematch),
    ("create_room_correspondence", create_room_correspondence),
    ("quick_play", quick_play),
    ("quick_play_computers", quick_play_computers),
    ("cancel_quick_play", cancel_quick_play),
    ("ping", ping),
)
"""Canonical client messages, by vector name."""

_SERVER_EXAMPLES: Final[tuple[tuple[str, ServerMessage], ...]] = (
    ("welcome", welcome_json),
    ("welcome_msgpack", welcome_msgpack),
    ("ack", ack_hello),
    ("ack_hello_player", ack_hello_player),
    ("ack_create_room", ack_create_room),
    (
        "ack_create_room_public",
        make_ack(create_room_yatzy, CreateRoomResult(room="Yatzy_night", invite_code=None)),
    ),
    ("ack_list_rooms", make_ack(list_rooms, ListRoomsResult(rooms=(_yatzy_summary,)))),
    ("ack_get_room", ack_get_room),
    ("ack_join", ack_join_ann),
    ("ack_rejoin", ack_rejoin),
    (
        "ack_rejoin_snapshot",
        make_ack(
            Rejoin(id="b9", room=ROOM, token=BOB_TOKEN),
            RejoinResult(player=BOB, seat=1, resumed=False),
            seq=14,
        ),
    ),
    ("ack_spectate", ack_spectate),
    ("ack_leave", ack_leave),
    ("ack_start", ack_start),
    ("ack_roll", ack_roll_1),
    ("ack_hold", ack_hold),
    ("ack_release", make_ack(Release(id="a11", dice=(3,)), seq=9)),
    ("ack_score", ack_score),
    (
        "ack_create_room_computers",
        make_ack(create_room_computers, CreateRoomResult(room=BOTS, invite_code=None)),
    ),
    ("ack_add_computer", ack_add_computer),
    ("ack_remove_computer", ack_remove_computer),
    ("ack_hint", ack_hint),
    ("ack_hint_before_roll", ack_hint_before_roll),
    ("ack_hint_last_roll", ack_hint_last_roll),
    ("ack_hint_bonus", ack_hint_bonus),
    ("ack_take_bonus", ack_take_bonus),
    ("ack_offer_rematch", ack_offer_rematch),
    ("ack_offer_rematch_no_seat", ack_offer_rematch_full),
    (
        "ack_list_rooms_auto_start",
        make_ack(ListRooms(id="e2"), ListRoomsResult(rooms=(summary_auto_start,))),
    ),
    (
        "ack_list_rooms_correspondence",
        make_ack(ListRooms(id="f2"), ListRoomsResult(rooms=(summary_correspondence,))),
    ),
    ("ack_quick_play", ack_quick_play),
    (
        "ack_quick_play_unrated",
        make_ack(
            quick_play_computers,
            QuickPlayResult(position=1, window=400, rating=None, computers_after_ms=30_000),
        ),
    ),
    ("ack_cancel_quick_play", ack_cancel_quick_play),
    ("quick_play_status", quick_play_status),
    ("quick_play_matched", quick_play_matched),
    ("quick_play_matched_computers", quick_play_matched_computers),
    ("error_identity_required_quick_play", make_error(ErrorCode.IDENTITY_REQUIRED, "q1")),
    ("error_already_queued", make_error(ErrorCode.ALREADY_QUEUED, "q3")),
    ("error_not_queued", make_error(ErrorCode.NOT_QUEUED, "q2")),
    ("error", error_not_your_turn),
    (
        "error_unreadable",
        make_error(ErrorCode.MALFORMED, message="not valid json: JSON is malformed"),
    ),
    ("error_rate_limited", make_error(ErrorCode.RATE_LIMITED, "a12", seq=9)),
    ("error_stale_state", error_stale_state),
    (
        "error_game_over",
        # v1.1: joining a finished room answers game_over (v1.0 said game_already_started)
        make_error(ErrorCode.GAME_OVER, "z3", message="The game in Yatzy_night is over."),
    ),
    ("error_unavailable", make_error(ErrorCode.UNAVAILABLE, "a13", seq=None)),
    ("error_hint_unavailable", error_hint_unavailable),
    ("error_hints_disabled", error_hints_disabled),
    ("error_bad_player_token", make_error(ErrorCode.BAD_PLAYER_TOKEN, "a0")),
    ("error_player_token_revoked", make_error(ErrorCode.PLAYER_TOKEN_REVOKED, "a0")),
    ("error_bad_jwt", make_error(ErrorCode.BAD_JWT, "a0")),
    ("error_jwt_expired", make_error(ErrorCode.JWT_EXPIRED, "a0")),
    ("error_foreign_jwt", make_error(ErrorCode.FOREIGN_JWT, "a0")),
    # The next four answer HTTP requests only (SPEC.md 13.8); shown here in the error form
    # every code has.
    ("error_name_taken", make_error(ErrorCode.NAME_TAKEN)),
    ("error_identity_linked", make_error(ErrorCode.IDENTITY_LINKED)),
    ("error_player_not_found", make_error(ErrorCode.PLAYER_NOT_FOUND)),
    ("error_game_not_found", make_error(ErrorCode.GAME_NOT_FOUND)),
    # v1.4: the tournament routes' codes (SPEC.md 13.18); tournament_closed also answers a play
    # command in a tournament entry after the end time.
    ("error_tournament_not_found", make_error(ErrorCode.TOURNAMENT_NOT_FOUND)),
    ("error_tournament_not_started", make_error(ErrorCode.TOURNAMENT_NOT_STARTED)),
    ("error_tournament_closed", make_error(ErrorCode.TOURNAMENT_CLOSED, "a14", seq=96)),
    ("error_tournament_full", make_error(ErrorCode.TOURNAMENT_FULL)),
    ("error_already_entered", make_error(ErrorCode.ALREADY_ENTERED)),
    ("error_not_allowed", make_error(ErrorCode.NOT_ALLOWED)),
    ("error_watch_not_allowed", make_error(ErrorCode.WATCH_NOT_ALLOWED)),
    ("pong", pong),
    ("snapshot", snapshot_ann),
    ("snapshot_lobby_two", snapshot_bob),
    ("snapshot_playing", snapshot_playing),
    ("snapshot_computers", snapshot_computers),
    ("player_joined", bob_joined),
    ("player_joined_computer", ada_joined),
    ("player_joined_computer_added", blaise_joined),
    (
        "player_left",
        # Åsa leaves the Yatzy_night lobby: Nils and Zoë move down one seat each.
        PlayerLeft(room="Yatzy_night", seq=4, player="p-asa", seat=0, forfeited=False),
    ),
    ("player_left_forfeit", PlayerLeft(room=ROOM, seq=57, player=BOB, seat=1, forfeited=True)),
    ("player_left_computer_removed", blaise_removed),
    ("player_disconnected", bob_disconnected),
    ("player_disconnected_away_deadline", dana_away),
    ("player_reconnected", bob_reconnected),
    ("host_changed", HostChanged(room="Yatzy_night", seq=5, player="p-nils")),
    ("game_started", game_started),
    (
        "roll_off_tie",
        RollOff(
            room="Yatzy_night",
            seq=5,  # after 3 player_joined and the first player's host_changed
            round=1,
            rolls=(
                RollOffRoll(player="p-asa", dice=(6, 6, 5, 4, 3), total=24),
                RollOffRoll(player="p-nils", dice=(6, 5, 5, 5, 3), total=24),
                RollOffRoll(player="p-zoe", dice=(1, 2, 2, 4, 6), total=15),
            ),
            contenders_next=("p-asa", "p-nils"),
        ),
    ),
    ("roll_off", roll_off),
    ("rolled", rolled_1),
    ("rolled_joker", rolled_joker),
    ("held", held),
    ("scored", scored),
    (
        "scored_joker",
        Scored(
            room=ROOM,
            seq=99,
            player=ANN,
            box=Box.FOURS,
            points=20,
            upper_bonus=0,
            yahtzee_bonus=100,
            joker=True,
            automatic=False,
            # fours 20 + aces 3, threes 9, fives 15 (upper 47, no bonus); 3K 24, 4K 17,
            # small straight 30, YAHTZEE 50 (lower 121); + 100 bonus
            total=268,
        ),
    ),
    ("bonus_taken", bonus_taken),
    ("rolled_computer", ada_rolled),
    ("scored_computer", ada_scored),
    ("rolled_before_hint", rolled_dana),
    ("turn_changed", turn_ann_1),
    (
        "turn_changed_no_timer",
        TurnChanged(
            room="Yatzy_night",
            seq=12,
            player="p-zoe",
            round=1,
            deadline_ms=None,
            server_time_ms=T0 + 3_000,
        ),
    ),
    ("game_over", game_over),
    ("spectators", spectators),
    ("rematch_offered", rematch_offered),
    ("rematch_offered_private", rematch_offered_private),
    ("ratings", ratings_changed),
    ("error_identity_required_rated", error_identity_required),
    ("error_rated_no_computers", error_rated_no_computers),
)


def _one_error_per_code(named: tuple[tuple[str, ServerMessage], ...]) -> tuple[str, ...]:
    shown = {message.code for _, message in named if isinstance(message, Error)}
    return tuple(f"error_{code}" for code in ERROR_CODES if code not in shown)


ERROR_CODE_VECTORS: Final = _one_error_per_code(_SERVER_EXAMPLES)
"""Names of the vectors added so that every error code has one (``error_<code>``)."""

SERVER_EXAMPLES: Final[tuple[tuple[str, ServerMessage], ...]] = _SERVER_EXAMPLES + tuple(
    (name, make_error(name.removeprefix("error_"), f"e{index}", seq=None))
    for index, name in enumerate(ERROR_CODE_VECTORS, start=1)
)
"""Canonical server messages, by vector name (one `error` vector at least per error code)."""

LENIENT_EXAMPLES: Final[tuple[LenientExample, ...]] = (
    LenientExample(
        "optional_fields_absent",
        "client",
        Encoding.JSON,
        '{"type":"create_room","id":"x1","seats":2,"public":true}',
        CreateRoom(id="x1", seats=2, public=True),
        "Absent optional fields take their defaults.",
    ),
    LenientExample(
        "options_partial",
        "client",
        Encoding.JSON,
        '{"type":"create_room","id":"x2","seats":3,"public":false,"options":{"joker":"free"}}',
        CreateRoom(id="x2", seats=3, public=False, options=RoomOptions(joker=Joker.FREE)),
        "Each room option is optional on its own.",
    ),
    LenientExample(
        "roll_without_keep",
        "client",
        Encoding.JSON,
        '{"type":"roll","id":"x3"}',
        Roll(id="x3"),
        "No `keep`: every die is rolled.",
    ),
    LenientExample(
        "type_not_first_and_whitespace",
        "client",
        Encoding.JSON,
        '{ "id": "x4", "box": "chance", "type": "score" }\n',
        Score(id="x4", box=Box.CHANCE),
        "Key order and insignificant whitespace do not matter to decoders.",
    ),
    LenientExample(
        "unknown_fields_ignored",
        "client",
        Encoding.JSON,
        '{"type":"ping","id":"x5","trace":{"span":[1,2,3]},"v":2.5}',
        Ping(id="x5"),
        "Unknown fields are ignored, whatever their value.",
    ),
    LenientExample(
        "null_optional",
        "client",
        Encoding.JSON,
        '{"type":"spectate","id":"x6","room":"r-5fK2","invite_code":null,"last_seq":null}',
        Spectate(id="x6", room=ROOM),
        "null is accepted wherever a field's type allows null.",
    ),
    LenientExample(
        "msgpack_wide_ints_and_str8",
        "client",
        Encoding.MSGPACK,
        bytes.fromhex(
            "84"  # map of 4 entries
            "a2"
            "6964"
            "d902"
            "7837"  # "id": str8 "x7"
            "a4"
            "74797065"
            "ab"
            "6372656174655f726f6f6d"  # "type": "create_room"
            "a5"
            "7365617473"
            "cd0004"  # "seats": uint16 4
            "a6"
            "7075626c6963"
            "c2"  # "public": false
        ),
        CreateRoom(id="x7", seats=4, public=False),
        "Any integer width, str8 for short strings and any key order are valid MessagePack.",
    ),
    LenientExample(
        "rolled_without_joker",
        "server",
        Encoding.JSON,
        _without_field(rolled_1, "joker"),
        msgspec.structs.replace(rolled_1, joker=None),
        "A server older than `rolled.joker` leaves it out: it decodes as null (unknown).",
    ),
    LenientExample(
        "server_unknown_field",
        "server",
        Encoding.JSON,
        '{"type":"spectators","room":"r-5fK2","seq":12,"count":2,"added_in_v1_3":"x"}',
        Spectators(room=ROOM, seq=12, count=2),
        "A newer server may add optional fields: clients ignore them.",
    ),
)
"""Valid non-canonical frames."""


def _pack(value: object) -> bytes:
    data: bytes = msgpack.packb(value, use_bin_type=True)
    return data


def _deep(levels: int) -> str:
    return '{"type":"ping","id":"d1","x":' + "[" * (levels - 1) + "]" * (levels - 1) + "}"


INVALID_EXAMPLES: Final[tuple[InvalidExample, ...]] = (
    InvalidExample(
        "wrong_frame_type_text_on_msgpack",
        Encoding.MSGPACK,
        '{"type":"ping","id":"1"}',
        ErrorCode.WRONG_FRAME_TYPE,
        None,
        "A text frame on a msgpack connection.",
    ),
    InvalidExample(
        "wrong_frame_type_binary_on_json",
        Encoding.JSON,
        _pack({"type": "ping", "id": "1"}),
        ErrorCode.WRONG_FRAME_TYPE,
        None,
        "A binary frame on a json connection.",
    ),
    InvalidExample(
        "frame_too_large",
        Encoding.JSON,
        '{"type":"join","id":"j1","room":"r-5fK2","name":"Ann"}',
        ErrorCode.FRAME_TOO_LARGE,
        None,
        "Checked before parsing, so the id is not read (max_frame_bytes 32 here).",
        max_frame_bytes=32,
    ),
    InvalidExample(
        "malformed_json",
        Encoding.JSON,
        '{"type":"ping",',
        ErrorCode.MALFORMED,
        None,
        "Truncated JSON.",
    ),
    InvalidExample(
        "malformed_empty", Encoding.JSON, "", ErrorCode.MALFORMED, None, "An empty frame."
    ),
    InvalidExample(
        "malformed_trailing_data",
        Encoding.JSON,
        '{"type":"ping","id":"1"} {"type":"ping","id":"2"}',
        ErrorCode.MALFORMED,
        None,
        "Exactly one value per frame.",
    ),
    InvalidExample(
        "malformed_nan",
        Encoding.JSON,
        '{"type":"ping","id":"1","x":NaN}',
        ErrorCode.MALFORMED,
        None,
        "NaN and Infinity are not JSON.",
    ),
    InvalidExample(
        "malformed_lone_surrogate",
        Encoding.JSON,
        '{"type":"join","id":"1","room":"r","name":"\\ud800"}',
        ErrorCode.MALFORMED,
        None,
        "An escaped lone surrogate is not a Unicode character.",
    ),
    InvalidExample(
        "malformed_not_a_map",
        Encoding.JSON,
        '["ping","1"]',
        ErrorCode.MALFORMED,
        None,
        "The top level must be a map.",
    ),
    InvalidExample(
        "malformed_msgpack_truncated",
        Encoding.MSGPACK,
        bytes.fromhex("82a474797065a470696e67a26964"),
        ErrorCode.MALFORMED,
        None,
        "A map of 2 with its last value missing.",
    ),
    InvalidExample(
        "malformed_msgpack_invalid_utf8",
        Encoding.MSGPACK,
        bytes.fromhex("82a474797065a470696e67a26964a2c328"),
        ErrorCode.MALFORMED,
        None,
        "MessagePack str values must be valid UTF-8.",
    ),
    InvalidExample(
        "malformed_msgpack_int_key",
        Encoding.MSGPACK,
        _pack({"type": "ping", "id": "1", 1: 1}),
        ErrorCode.MALFORMED,
        None,
        "Map keys must be strings.",
    ),
    InvalidExample(
        "malformed_msgpack_bin_key",
        Encoding.MSGPACK,
        _pack({"type": "ping", "id": "1", b"k": 1}),
        ErrorCode.MALFORMED,
        None,
        "Map keys must be str, not bin.",
    ),
    InvalidExample(
        "malformed_msgpack_reserved_byte",
        Encoding.MSGPACK,
        bytes.fromhex("c1"),
        ErrorCode.MALFORMED,
        None,
        "0xc1 is never used in MessagePack.",
    ),
    InvalidExample(
        "too_deep",
        Encoding.JSON,
        _deep(17),
        ErrorCode.TOO_DEEP,
        "d1",
        "17 levels of nesting (the limit is 16); the id is still recovered.",
    ),
    InvalidExample(
        "unknown_type",
        Encoding.JSON,
        '{"type":"teleport","id":"u1"}',
        ErrorCode.UNKNOWN_TYPE,
        "u1",
        "Answered with an error; the connection stays open.",
    ),
    InvalidExample(
        "unknown_type_server_message",
        Encoding.JSON,
        '{"type":"welcome","id":"u2"}',
        ErrorCode.UNKNOWN_TYPE,
        "u2",
        "A server message type is not a client message type.",
    ),
    InvalidExample(
        "missing_type",
        Encoding.JSON,
        '{"id":"m1","room":"r-5fK2"}',
        ErrorCode.MISSING_FIELD,
        "m1",
        "`type` is required.",
    ),
    InvalidExample(
        "missing_field",
        Encoding.JSON,
        '{"type":"join","id":"m2","room":"r-5fK2"}',
        ErrorCode.MISSING_FIELD,
        "m2",
        "join needs a name.",
    ),
    InvalidExample(
        "missing_id",
        Encoding.MSGPACK,
        _pack({"type": "ping"}),
        ErrorCode.MISSING_FIELD,
        None,
        "Commands need an id; the error's id is null.",
    ),
    InvalidExample(
        "invalid_type_field",
        Encoding.JSON,
        '{"type":7,"id":"i1"}',
        ErrorCode.INVALID_FIELD,
        "i1",
        "`type` must be a string.",
    ),
    InvalidExample(
        "invalid_field_string_for_int",
        Encoding.JSON,
        '{"type":"create_room","id":"i2","seats":"4","public":true}',
        ErrorCode.INVALID_FIELD,
        "i2",
        'No implicit conversions: "4" is not 4.',
    ),
    InvalidExample(
        "invalid_field_float_for_int",
        Encoding.JSON,
        '{"type":"create_room","id":"i3","seats":4.0,"public":true}',
        ErrorCode.INVALID_FIELD,
        "i3",
        "Integers must be written without a fraction or exponent.",
    ),
    InvalidExample(
        "invalid_field_bool_for_int",
        Encoding.JSON,
        '{"type":"create_room","id":"i4","seats":true,"public":true}',
        ErrorCode.INVALID_FIELD,
        "i4",
        "true is not an integer.",
    ),
    InvalidExample(
        "invalid_field_null_keep",
        Encoding.JSON,
        '{"type":"roll","id":"i5","keep":null}',
        ErrorCode.INVALID_FIELD,
        "i5",
        "`keep` may be absent but not null (send [] or omit it).",
    ),
    InvalidExample(
        "invalid_field_enum",
        Encoding.JSON,
        '{"type":"score","id":"i6","box":"bonus"}',
        ErrorCode.INVALID_FIELD,
        "i6",
        "Not a box name of either rule set.",
    ),
    InvalidExample(
        "invalid_field_room_pattern",
        Encoding.JSON,
        '{"type":"get_room","id":"i7","room":"r 5fK2"}',
        ErrorCode.INVALID_FIELD,
        "i7",
        "Room ids use A-Z a-z 0-9 _ - only.",
    ),
    InvalidExample(
        "invalid_field_room_trailing_newline",
        Encoding.JSON,
        '{"type":"get_room","id":"i8","room":"r-5fK2\\n"}',
        ErrorCode.INVALID_FIELD,
        "i8",
        "No trailing newline either.",
    ),
    InvalidExample(
        "invalid_field_msgpack_bin_for_str",
        Encoding.MSGPACK,
        _pack({"type": "join", "id": "i9", "room": ROOM, "name": b"Ann"}),
        ErrorCode.INVALID_FIELD,
        "i9",
        "Strings must be MessagePack str, not bin.",
    ),
    InvalidExample(
        "invalid_field_msgpack_float_for_int",
        Encoding.MSGPACK,
        _pack({"type": "create_room", "id": "i10", "seats": math.nan, "public": True}),
        ErrorCode.INVALID_FIELD,
        "i10",
        "A float (here NaN) where an integer is expected.",
    ),
    InvalidExample(
        "out_of_range_seats",
        Encoding.JSON,
        '{"type":"create_room","id":"o1","seats":9,"public":true}',
        ErrorCode.OUT_OF_RANGE,
        "o1",
        "seats is 1..8.",
    ),
    InvalidExample(
        "out_of_range_turn_seconds",
        Encoding.JSON,
        '{"type":"create_room","id":"o2","seats":2,"public":true,"turn_seconds":-1}',
        ErrorCode.OUT_OF_RANGE,
        "o2",
        "turn_seconds is 0..3600.",
    ),
    InvalidExample(
        "out_of_range_correspondence",
        Encoding.JSON,
        '{"type":"create_room","id":"o7","seats":2,"public":true,'
        '"correspondence":{"seconds_per_move":600}}',
        ErrorCode.OUT_OF_RANGE,
        "o7",
        "v1.4: correspondence.seconds_per_move is 3600..1209600 (an hour to 14 days).",
    ),
    InvalidExample(
        "out_of_range_die_index",
        Encoding.JSON,
        '{"type":"hold","id":"o3","dice":[0,5]}',
        ErrorCode.OUT_OF_RANGE,
        "o3",
        "Die indexes are 0..4.",
    ),
    InvalidExample(
        "out_of_range_too_many_dice",
        Encoding.JSON,
        '{"type":"roll","id":"o4","keep":[0,1,2,3,4,0]}',
        ErrorCode.OUT_OF_RANGE,
        "o4",
        "At most five indexes.",
    ),
    InvalidExample(
        "out_of_range_huge_int",
        Encoding.JSON,
        '{"type":"rejoin","id":"o5","room":"r-5fK2","token":"t","last_seq":123456789012345678901234567890}',
        ErrorCode.OUT_OF_RANGE,
        "o5",
        "Integers never exceed 2^53-1.",
    ),
    InvalidExample(
        "out_of_range_empty_string",
        Encoding.JSON,
        '{"type":"join","id":"o6","room":"r-5fK2","name":""}',
        ErrorCode.OUT_OF_RANGE,
        "o6",
        "A string shorter than its minimum is out_of_range.",
    ),
    InvalidExample(
        "out_of_range_empty_id",
        Encoding.JSON,
        '{"type":"ping","id":""}',
        ErrorCode.OUT_OF_RANGE,
        None,
        "An empty id is not a command id, so the error's id is null.",
    ),
    InvalidExample(
        "invalid_field_unknown_level",
        Encoding.JSON,
        '{"type":"add_computer","id":"v1","level":"genius"}',
        ErrorCode.INVALID_FIELD,
        "v1",
        "Computer levels are easy, medium, hard and optimal (v1.2).",
    ),
    InvalidExample(
        "missing_field_level",
        Encoding.JSON,
        '{"type":"add_computer","id":"v2","name":"Ada"}',
        ErrorCode.MISSING_FIELD,
        "v2",
        "add_computer needs a level.",
    ),
    InvalidExample(
        "invalid_field_variant_toggle",
        Encoding.JSON,
        '{"type":"create_room","id":"v3","seats":2,"public":true,"options":{"bonus_turn":true}}',
        ErrorCode.INVALID_FIELD,
        "v3",
        'House variants are "on" or "off", not booleans.',
    ),
    InvalidExample(
        "out_of_range_too_many_computers",
        Encoding.JSON,
        '{"type":"create_room","id":"v4","seats":8,"public":true,"computers":['
        + ",".join(['{"level":"easy"}'] * 8)
        + "]}",
        ErrorCode.OUT_OF_RANGE,
        "v4",
        "At most 7 computers: one seat is always left for a person.",
    ),
    InvalidExample(
        "out_of_range_computer_delay",
        Encoding.JSON,
        '{"type":"create_room","id":"v5","seats":2,"public":true,"computer_delay_ms":20000}',
        ErrorCode.OUT_OF_RANGE,
        "v5",
        "computer_delay_ms is 0..10000.",
    ),
    InvalidExample(
        "string_too_long_name",
        Encoding.JSON,
        '{"type":"join","id":"s1","room":"r-5fK2","name":"' + "🎲" * 33 + '"}',
        ErrorCode.STRING_TOO_LONG,
        "s1",
        "33 code points (66 UTF-16 units, 132 bytes); 32 code points would be accepted.",
    ),
    InvalidExample(
        "string_too_long_id",
        Encoding.JSON,
        '{"type":"ping","id":"' + "x" * 65 + '"}',
        ErrorCode.STRING_TOO_LONG,
        None,
        "A 65-character id cannot be echoed: the error's id is null.",
    ),
)
"""Frames a server must reject, with the code and the `id` of the `error` it answers."""

# --------------------------------------------------------------------------------------------
# The HTTP API (SPEC.md section 13)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HttpExample:
    """One request of the HTTP API and the answer the server gives."""

    name: str
    route: str  # the documented route, e.g. "/rooms/{id}"
    path: str  # the request path with its query, e.g. "/rooms/r-5fK2/events?after=0"
    headers: tuple[tuple[str, str], ...]
    status: int
    body: object  # a JSON value, or a str for a text/plain body
    note: str


_INVITE_HEADER = (("X-Invite-Code", INVITE),)
# The room's log up to seq 17: Ann's join (inside her snapshot in the transcript), then every
# event of the transcript once (Bob's replay repeats one).
_LOG: Final = tuple(
    sorted(
        {
            event.seq: event
            for event in (
                ann_joined,
                ann_host,
                *(step.message for step in WALKTHROUGH if isinstance(step.message, Event)),
            )
            if event.seq <= turn_ann_2.seq
        }.values(),
        key=lambda event: event.seq,
    )
)


def _review(
    player: str,
    roll: int,
    chosen: tuple[int, ...] | Box,
    best: tuple[int, ...] | Box,
    chosen_expected: float,
    best_expected: float,
) -> DecisionReview:
    """One reviewed decision of turn 1: a keep (faces) or a box."""
    keep = not isinstance(chosen, Box)
    return DecisionReview(
        player=player,
        turn=1,
        roll=roll,
        kind="keep" if keep else "box",
        chosen_keep=None if isinstance(chosen, Box) else chosen,
        best_keep=None if isinstance(best, Box) else best,
        chosen_box=chosen if isinstance(chosen, Box) else None,
        best_box=best if isinstance(best, Box) else None,
        chosen_expected=chosen_expected,
        best_expected=best_expected,
        loss=round(best_expected - chosen_expected, 3),
    )


def _player_analysis(player: str, name: str, *decisions: DecisionReview) -> PlayerAnalysis:
    total = round(sum(d.loss for d in decisions), 3)
    mean = round(total / len(decisions), 3) if decisions else 0.0
    return PlayerAnalysis(
        player=player, name=name, decisions=decisions, total_loss=total, mean_loss=mean
    )


# The game of the transcript up to seq 17 (every player's first turn), against optimal play.
# Ann kept the three 3s (best), then, after 3-3-3-3-2, scored instead of rolling the 2 again
# (a keep of all five dice is "score now") and chose four_of_a_kind (14) over threes (12).
# Bob took his full house on the first roll, which was best.
_ANALYSIS: Final = GameAnalysis(
    room=ROOM,
    seq=turn_ann_2.seq,
    options=OPTIONS,
    players=(
        _player_analysis(
            ANN,
            "Ann",
            _review(ANN, 1, (3, 3, 3), (3, 3, 3), 251.842, 251.842),
            _review(ANN, 2, (2, 3, 3, 3, 3), (3, 3, 3, 3), 243.508, 246.91),
            _review(ANN, 2, Box.FOUR_OF_A_KIND, Box.THREES, 240.914, 243.508),
        ),
        _player_analysis(
            BOB,
            "Bob",
            _review(BOB, 1, (2, 2, 5, 5, 5), (2, 2, 5, 5, 5), 254.167, 254.167),
            _review(BOB, 1, Box.FULL_HOUSE, Box.FULL_HOUSE, 254.167, 254.167),
        ),
    ),
)


def _json(*messages: Event) -> list[object]:
    return [msgspec.json.decode(msgspec.json.encode(message)) for message in messages]


def _http_error(code: str, message: str) -> dict[str, str]:
    return {"code": code, "message": message}


HTTP_EXAMPLES: tuple[HttpExample, ...] = (
    HttpExample(
        "lobby",
        "/rooms",
        "/rooms",
        (),
        200,
        {"rooms": msgspec.json.decode(msgspec.json.encode((_yatzy_summary,)))},
        "The public rooms (finished ones until they expire), as `RoomSummary` objects.",
    ),
    HttpExample(
        "room_snapshot",
        "/rooms/{id}",
        f"/rooms/{ROOM}",
        _INVITE_HEADER,
        200,
        msgspec.json.decode(msgspec.json.encode(snapshot_playing)),
        "A `snapshot` message; this private room needs its invite code in the header.",
    ),
    HttpExample(
        "room_private_without_code",
        "/rooms/{id}",
        f"/rooms/{ROOM}",
        (),
        403,
        _http_error("invite_required", "The room is private: send X-Invite-Code."),
        "Invite codes never go in the URL.",
    ),
    HttpExample(
        "room_unknown",
        "/rooms/{id}",
        "/rooms/no-such-room",
        (),
        404,
        _http_error("room_not_found", "No room has this id (or it was closed)."),
        "Also for a finished room after its retention period.",
    ),
    HttpExample(
        "events_first_page",
        "/rooms/{id}/events",
        f"/rooms/{ROOM}/events?after=0&limit=10",
        _INVITE_HEADER,
        200,
        {"room": ROOM, "events": _json(*_LOG[:10]), "next_after": _LOG[9].seq},
        "Events with seq > after, at most limit; next_after: ask for the next page with it.",
    ),
    HttpExample(
        "events_last_page",
        "/rooms/{id}/events",
        f"/rooms/{ROOM}/events?after=10&limit=10",
        _INVITE_HEADER,
        200,
        {"room": ROOM, "events": _json(*_LOG[10:]), "next_after": None},
        "next_after null: no more events for now (the log of this example ends at seq 17).",
    ),
    HttpExample(
        "events_bad_limit",
        "/rooms/{id}/events",
        f"/rooms/{ROOM}/events?limit=5000",
        _INVITE_HEADER,
        400,
        _http_error("out_of_range", "limit must be 1..1000"),
        "limit is 1..1000 (default 500); after is an integer >= 0 (default 0).",
    ),
    HttpExample(
        "analysis",
        "/rooms/{id}/analysis",
        f"/rooms/{ROOM}/analysis",
        _INVITE_HEADER,
        200,
        msgspec.json.decode(msgspec.json.encode(_ANALYSIS)),
        "A `GameAnalysis` of the game so far (the log of this example ends at seq 17): Ann "
        "scored 14 in four_of_a_kind after her second roll instead of rolling again for threes.",
    ),
    HttpExample(
        "analysis_private_without_code",
        "/rooms/{id}/analysis",
        f"/rooms/{ROOM}/analysis",
        (),
        403,
        _http_error("invite_required", "The room is private: send X-Invite-Code."),
        "As for the snapshot: the invite code goes in the header, never in the URL.",
    ),
    HttpExample(
        "analysis_unknown",
        "/rooms/{id}/analysis",
        "/rooms/no-such-room/analysis",
        (),
        404,
        _http_error("room_not_found", "No room has this id (or it was closed)."),
        "Also for a finished room after its retention period.",
    ),
    HttpExample(
        "analysis_unavailable",
        "/rooms/{id}/analysis",
        f"/rooms/{ROOM}/analysis",
        _INVITE_HEADER,
        503,
        _http_error(
            "unavailable",
            "the strategy table of these rules is still loading: retry shortly",
        ),
        "The server is still loading its strategy table for the room's rules; the answer "
        "has a Retry-After header (seconds).",
    ),
    HttpExample(
        "lobby_stream",
        "/lobby",
        "/lobby",
        (),
        200,
        "retry: 3000\n\nevent: rooms\ndata: "
        + msgspec.json.encode({"rooms": (_yatzy_summary,)}).decode()
        + "\n\nevent: rooms\ndata: "
        + msgspec.json.encode({"rooms": ()}).decode()
        + "\n\n",
        "The beginning of a text/event-stream that stays open: the reconnection delay, the list "
        "at once, then the whole list again whenever it changes (here: the room is gone).",
    ),
    HttpExample(
        "lobby_stream_too_many",
        "/lobby",
        "/lobby",
        (),
        429,
        _http_error("rate_limited", "too many connections from this address"),
        "Too many long-lived connections from this address, or lobby streams on this process.",
    ),
    HttpExample("healthz", "/healthz", "/healthz", (), 200, "ok", "Text: the process answers."),
    HttpExample("readyz", "/readyz", "/readyz", (), 200, {"ready": True}, "The storage answers."),
    HttpExample(
        "readyz_database_down",
        "/readyz",
        "/readyz",
        (),
        200,
        {"ready": True, "database": "connection refused"},
        "v1.3: a server that keeps players reports its database apart: play stays ready "
        "while the database is down (archiving waits).",
    ),
    HttpExample(
        "readyz_unavailable",
        "/readyz",
        "/readyz",
        (),
        503,
        {"ready": False, "reason": "shutting down"},
        "Not ready: the storage does not answer, or the process is shutting down.",
    ),
    HttpExample(
        "metrics",
        "/metrics",
        "/metrics",
        (),
        200,
        "# HELP ...\n# TYPE ...\n",
        "Prometheus text format; metric names are not part of the protocol.",
    ),
)
"""Requests of the HTTP API with their answers (vectors/http.json)."""

_BEARER = (("Authorization", f"Bearer {PLAYER_TOKEN}"),)
_GAME_ID = f"{ROOM}.1"
_FINISHED_MS = T0 + 1_260_000
_ARCHIVED_PLAYERS = (
    {
        "seat": 0,
        "player": ANN,
        "name": "Ann",
        "computer": None,
        "identity": ANN_IDENTITY,
        "place": 1,
        "total": 254,
        "forfeited": False,
        "scores": [3, 8, 12, 16, 20, 24, 24, 19, 25, 30, 40, 50, 18],
        "yahtzee_bonuses": 0,
        "upper_bonus": True,
        "yahtzees": 1,
        "accuracy": 0.8421,
        "skill": {
            "decisions": 41,
            "expected_start": 254.5877,
            "total_loss": 3.28,
            "luck": 2.6923,
            "accuracy": 98.7116,
            "rating_before": None,
            "rating_after": None,
        },
    },
    {
        "seat": 1,
        "player": BOB,
        "name": "Bob",
        "computer": None,
        "identity": None,
        "place": 2,
        "total": 191,
        "forfeited": False,
        "scores": [2, 6, 9, 12, 15, 18, 22, 0, 25, 30, 0, 0, 17],
        "yahtzee_bonuses": 0,
        "upper_bonus": False,
        "yahtzees": 0,
        "accuracy": 0.7105,
        "skill": None,
    },
)
_ARCHIVED_GAME: Final = {
    "game": _GAME_ID,
    "room": ROOM,
    "game_no": 1,
    "outcome": "finished",
    "public": True,
    "name": "",
    "options": msgspec.json.decode(msgspec.json.encode(OPTIONS)),
    "seats": 2,
    "turn_seconds": 60,
    "hints": True,
    "rated": False,
    "created_ms": T0,
    "finished_ms": _FINISHED_MS,
    "dice_commitment": game_started.dice_commitment,
    "server_seed": "9f2c41d07be35a18c6e2f4b907d15a3e8c21f6b4d09e7a35c81f2e6d4b0a9c37",
    "player_seeds": {ANN: "ann-seed", BOB: "bob-seed"},
    "players": _ARCHIVED_PLAYERS,
    "event_count": 171,
    "events": _json(*_LOG[:3]),
}
_GAME_SUMMARY: Final = {
    "game": _GAME_ID,
    "room": ROOM,
    "outcome": "finished",
    "public": True,
    "options": _ARCHIVED_GAME["options"],
    "finished_ms": _FINISHED_MS,
    "players": 2,
    "seat": 0,
    "place": 1,
    "total": 254,
    "forfeited": False,
    "accuracy": 0.8421,
}

HTTP_EXAMPLES = (
    *HTTP_EXAMPLES,
    HttpExample(
        "player_me",
        "/players/me",
        "/players/me",
        _BEARER,
        200,
        {"player": ANN_IDENTITY, "name": "Ann", "linked": False},
        "v1.3: who the Bearer credential (a player token or a JWT) names.",
    ),
    HttpExample(
        "player_me_revoked",
        "/players/me",
        "/players/me",
        _BEARER,
        401,
        _http_error("player_token_revoked", "this player token was revoked"),
        "A revoked (or unknown: bad_player_token) token; JWTs: bad_jwt, jwt_expired, foreign_jwt.",
    ),
    HttpExample(
        "player_profile",
        "/players/{id}",
        f"/players/{ANN_IDENTITY}",
        (),
        200,
        {
            "player": ANN_IDENTITY,
            "name": "Ann",
            "since_ms": T0 - 86_400_000,
            "linked": False,
            "games": 12,
            "wins": 7,
            "average_score": 231.4167,
            "best_score": 302,
            "yahtzees": 6,
            "yahtzee_rate": 0.4167,
            "upper_bonus_rate": 0.6667,
            "accuracy": 0.8312,
            "ratings": {
                "yahtzee": {
                    "rating": 1712,
                    "rating_provisional": False,
                    "rated_games": 9,
                    "decision_rating": 2488,
                    "decision_provisional": False,
                    "analysed_games": 12,
                    "accuracy": 97.95,
                    "luck": 3.1,
                }
            },
        },
        "v1.3: statistics over the player's archived games (private ones only for the player "
        "themself); rates are shares of games, accuracy the share of optimal decisions.",
    ),
    HttpExample(
        "player_unknown",
        "/players/{id}",
        "/players/uNobody",
        (),
        404,
        _http_error("player_not_found", "no player has this id"),
        "No remembered player has this id.",
    ),
    HttpExample(
        "player_games",
        "/players/{id}/games",
        f"/players/{ANN_IDENTITY}/games?limit=1",
        (),
        200,
        {
            "player": ANN_IDENTITY,
            "games": [_GAME_SUMMARY],
            "next_before": f"{_FINISHED_MS}_{_GAME_ID}",
        },
        "Newest first; next_before is the cursor of the next page (null on the last).",
    ),
    HttpExample(
        "player_turns",
        "/players/{id}/turns",
        f"/players/{ANN_IDENTITY}/turns",
        _BEARER,
        200,
        {
            "player": ANN_IDENTITY,
            "server_time_ms": T0,
            "turns": [
                {
                    "room": "r-Slow1",
                    "my_turn": True,
                    "deadline_ms": T0 + 51_000_000,
                    "round": 4,
                    "players": ["Ann", "Bob"],
                    "on_turn": "Ann",
                }
            ],
            "games": [
                {
                    "room": "r-Slow2",
                    "my_turn": False,
                    "deadline_ms": T0 + 160_000_000,
                    "round": 9,
                    "players": ["Cy", "Ann", "Dee"],
                    "on_turn": "Dee",
                }
            ],
        },
        "v1.4: the Bearer player's running correspondence games: `turns` where it is their "
        "turn (soonest deadline first), `games` where another player is on turn.",
    ),
    HttpExample(
        "player_turns_other",
        "/players/{id}/turns",
        "/players/uBob/turns",
        _BEARER,
        404,
        _http_error("player_not_found", "no player has this id"),
        "v1.4: a player sees only their own list; anyone else's does not exist for them.",
    ),
    HttpExample(
        "game",
        "/games/{id}",
        f"/games/{_GAME_ID}",
        (),
        200,
        _ARCHIVED_GAME,
        "v1.3: an archived game, also long after its room left the server (id "
        "<room>.<n>, or the room id for its latest game); `events` is cut to three entries "
        "here (the archive has all of them, up to game_over).",
    ),
    HttpExample(
        "game_private",
        "/games/{id}",
        "/games/hUsh3dRm.1",
        (),
        404,
        _http_error("game_not_found", "no archived game has this id"),
        "A private room's game is shown only to its players (their Bearer credential).",
    ),
    HttpExample(
        "games_export",
        "/games/export",
        f"/games/export?since={T0}",
        (),
        200,
        msgspec.json.encode(_ARCHIVED_GAME).decode() + "\n",
        "Public games finished at or after since (Unix ms), oldest first, one JSON object a "
        "line (application/x-ndjson).",
    ),
    HttpExample(
        "leaderboard",
        "/leaderboards/{board}",
        f"/leaderboards/decision?period=week&around={ANN_IDENTITY}&limit=3",
        (),
        200,
        {
            "board": "decision",
            "family": "yahtzee",
            "period": "week",
            "players": 57,
            "rows": [
                {
                    "rank": 4,
                    "player": "uZoe8Kd1Fs5m",
                    "name": "Zoë",
                    "value": 2540,
                    "provisional": False,
                },
                {
                    "rank": 5,
                    "player": ANN_IDENTITY,
                    "name": "Ann",
                    "value": 2488,
                    "provisional": False,
                },
                {
                    "rank": 6,
                    "player": BOB_IDENTITY,
                    "name": "Bob",
                    "value": 2301,
                    "provisional": True,
                },
            ],
            "references": [
                {"level": "easy", "value": 1675},
                {"level": "medium", "value": 2145},
                {"level": "hard", "value": 2588},
                {"level": "optimal", "value": 3000},
            ],
        },
        "v1.4: the three rows around Ann on this week's decision-rating board; `references` "
        "are the computer levels' decision ratings (the decision board only).",
    ),
    HttpExample(
        "leaderboard_unknown",
        "/leaderboards/{board}",
        "/leaderboards/luck",
        (),
        404,
        _http_error("unknown_board", "board must be one of result, decision, best_score"),
        "Boards: result, decision, best_score.",
    ),
    HttpExample(
        "leaderboard_bad_period",
        "/leaderboards/{board}",
        "/leaderboards/result?period=month",
        (),
        400,
        _http_error("unknown_period", "period must be one of today, week, all"),
        "Periods: today, week, all (UTC); an unknown family answers the same code.",
    ),
)

# v1.4: duplicate tournaments (SPEC.md 13.18 to 13.22)
_TOURNAMENT_ID = "tDaily7xQ2"
_TOURNAMENT_SEED = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
_TOURNAMENT_OPEN: Final = {
    "tournament": _TOURNAMENT_ID,
    "name": "Daily duplicate 2026-01-01",
    "options": msgspec.json.decode(msgspec.json.encode(OPTIONS)),
    "starts_ms": T0,
    "ends_ms": T0 + 86_400_000,
    "status": "open",
    "entry_limit": None,
    "entries": 412,
    "public": True,
    "attempts": 1,
    "rated": False,
    "daily": True,
    "watch_delay_seconds": None,
    "dice_commitment": "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd",
    "seed": None,
    "optimal_score": None,
}
_TOURNAMENT_CLOSED: Final = {
    **_TOURNAMENT_OPEN,
    "status": "closed",
    "seed": _TOURNAMENT_SEED,
    "optimal_score": 287,
}

HTTP_EXAMPLES = (
    *HTTP_EXAMPLES,
    HttpExample(
        "tournaments",
        "/tournaments",
        "/tournaments",
        (),
        200,
        {"tournaments": [_TOURNAMENT_OPEN]},
        "v1.4: the public tournaments, soonest end first; the seed is null until the end.",
    ),
    HttpExample(
        "tournament_closed",
        "/tournaments/{id}",
        f"/tournaments/{_TOURNAMENT_ID}",
        (),
        200,
        _TOURNAMENT_CLOSED,
        "After the end time: the seed whose SHA-256 is the dice_commitment, and the optimal "
        "player's total on the same dice.",
    ),
    HttpExample(
        "tournament_unknown",
        "/tournaments/{id}",
        "/tournaments/tNope",
        (),
        404,
        _http_error("tournament_not_found", "no tournament has this id"),
        "Also an invite-only tournament without its X-Invite-Code.",
    ),
    HttpExample(
        "tournament_standings_open",
        "/tournaments/{id}/standings",
        f"/tournaments/{_TOURNAMENT_ID}/standings?limit=2",
        (),
        200,
        {
            "tournament": _TOURNAMENT_ID,
            "status": "open",
            "final": False,
            "optimal_score": None,
            "entries": [
                {"place": 1, "name": "Ann", "score": 262},
                {"place": 2, "name": "Bob", "score": 231},
            ],
        },
        "v1.4: live totals while the tournament is open; no rooms (nobody watches an entry "
        "that can still be played), unless the tournament sets watch_delay_seconds (13.23).",
    ),
    HttpExample(
        "tournament_standings_final",
        "/tournaments/{id}/standings",
        f"/tournaments/{_TOURNAMENT_ID}/standings?limit=1",
        (),
        200,
        {
            "tournament": _TOURNAMENT_ID,
            "status": "closed",
            "final": True,
            "optimal_score": 287,
            "entries": [
                {
                    "place": 1,
                    "name": "Ann",
                    "player": ANN_IDENTITY,
                    "score": 262,
                    "finished": True,
                    "accuracy": 0.8421,
                    "room": ROOM,
                    "invite_code": INVITE,
                },
            ],
        },
        "The archived results: the dice allowed 287 (the optimal player on the same dice); "
        "room and invite_code let anyone verify the entry.",
    ),
    HttpExample(
        "tournament_entry_events",
        "/tournaments/{id}/entries/{room}/events",
        f"/tournaments/{_TOURNAMENT_ID}/entries/{ROOM}/events?after=0&limit=10",
        (),
        200,
        {
            "tournament": _TOURNAMENT_ID,
            "room": ROOM,
            "events": _json(*_LOG[:6]),
            "next_after": None,
        },
        "v1.4: while open, only the events committed at least watch_delay_seconds ago; "
        "next_after null: nothing older for now. After the end time, every event.",
    ),
    HttpExample(
        "tournament_watch_refused",
        "/tournaments/{id}/entries/{room}/events",
        f"/tournaments/{_TOURNAMENT_ID}/entries/{ROOM}/events",
        (),
        409,
        _http_error("watch_not_allowed", "entries of this tournament are shown after its end"),
        "An open tournament whose watch_delay_seconds is null.",
    ),
)
