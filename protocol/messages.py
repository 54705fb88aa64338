"""Message definitions of protocol version 1.2: one frozen ``msgspec.Struct`` per message.

Theory of operation
-------------------
Every message is a map whose first key is ``type``; the classes here are tagged
(``tag_field="type"``) so the tag is written first, followed by the fields in the order they are
defined below (base-class fields first). The codec (:mod:`protocol.codec`) turns a message into
bytes (MessagePack) or text (JSON) and back; the bounds in the ``Annotated`` metadata are checked
on decoding only, so construct messages with valid values.

Unknown fields are ignored on decoding (``forbid_unknown_fields=False``): that is what lets a
later minor revision add optional fields without breaking old peers.

Optional fields (those with a default) may be absent or, where their type allows ``null``, null
on the wire; the encoder always writes every field, except those whose default is
``msgspec.UNSET`` (v1.3: ``Hello.player_token``, ``HelloResult.player``), written only when set.

Constructing messages: every class is keyword-only, e.g.
``Join(id="c3", room="r-5fK2", name="Ann")``; replies are built with :func:`make_ack`,
:func:`protocol.errors.make_error` and :meth:`protocol.errors.DecodeError.to_message`.

Class map::

    Message                         every top-level message (tagged by `type`)
    +-- Command                     client -> server, carries `id`
    |   +-- Hello CreateRoom ListRooms GetRoom Join Rejoin Spectate
    |   +-- Leave Start Roll Hold Release Score TakeBonus AddComputer RemoveComputer Hint
    |   +-- OfferRematch QuickPlay CancelQuickPlay Ping
    +-- Welcome Ack Error Pong Snapshot      server -> client, not in the room log
    +-- QuickPlayStatus QuickPlayMatched     server -> client, not in the room log (v1.4)
    +-- Event                       server -> client, carries `room` and `seq`
        +-- PlayerJoined PlayerLeft PlayerDisconnected PlayerReconnected HostChanged
        +-- GameStarted RollOff Rolled Held Scored BonusTaken TurnChanged GameOver Spectators
        +-- RematchOffered RatingsChanged
    Object                          nested objects (untagged maps)
    +-- Result                      ack results, tagged by `command` (the command answered)
        +-- HelloResult CreateRoomResult ListRoomsResult GetRoomResult JoinResult
        +-- RejoinResult SpectateResult LeaveResult StartResult RollResult HoldResult
        +-- ReleaseResult ScoreResult TakeBonusResult AddComputerResult RemoveComputerResult
        +-- HintResult OfferRematchResult QuickPlayResult CancelQuickPlayResult

Version 1.1 only added optional fields (with defaults, so v1.0 frames still decode), one
error code and the `command` tag of ack results; version 1.2 added computer players, the
advisor (`hint`), the house variants and their messages, again without changing any v1.1
message (see ``protocol/CHANGELOG.md``).
"""

from collections.abc import Mapping
from types import MappingProxyType
from typing import Annotated, Any, ClassVar, Final, TypeAlias, get_args

import msgspec
from msgspec import UNSET, Meta, UnsetType

from protocol.transport import MAX_CLIENT_FRAME_BYTES, Encoding
from protocol.types import (
    MAX_SAFE_INTEGER,
    MAX_SEATS,
    Box,
    CommandId,
    Count,
    DieFace,
    DieIndex,
    ExtraYahtzees,
    FirstPlayer,
    HintKind,
    InviteCode,
    Joker,
    LastSeq,
    Level,
    Name,
    Phase,
    PlayerId,
    Points,
    RoomId,
    RoomStatus,
    Round,
    Rules,
    Seat,
    Seq,
    Toggle,
    Token,
    TurnSeconds,
)

__all__ = [
    "CLIENT_MESSAGE_TYPES",
    "CLIENT_SEED_PATTERN",
    "CORRESPONDENCE_MAX_SECONDS",
    "CORRESPONDENCE_MIN_SECONDS",
    "DEFAULT_LIMITS",
    "RESULT_TYPES",
    "SERVER_MESSAGE_TYPES",
    "Ack",
    "AckResult",
    "AddComputer",
    "AddComputerResult",
    "BonusTaken",
    "CancelQuickPlay",
    "CancelQuickPlayResult",
    "ClientMessage",
    "Command",
    "ComputerSeat",
    "Correspondence",
    "CreateRoom",
    "CreateRoomResult",
    "DecisionReview",
    "Error",
    "Event",
    "GameAnalysis",
    "GameOver",
    "GameStarted",
    "GetRoom",
    "GetRoomResult",
    "Held",
    "Hello",
    "HelloResult",
    "Hint",
    "HintOption",
    "HintResult",
    "Hold",
    "HoldResult",
    "HostChanged",
    "Join",
    "JoinResult",
    "Leave",
    "LeaveResult",
    "Limits",
    "ListRooms",
    "ListRoomsResult",
    "Message",
    "Object",
    "OfferRematch",
    "OfferRematchResult",
    "Ping",
    "PlayerAnalysis",
    "PlayerDisconnected",
    "PlayerJoined",
    "PlayerLeft",
    "PlayerReconnected",
    "PlayerView",
    "Pong",
    "PreviewEntry",
    "QuickPlay",
    "QuickPlayMatched",
    "QuickPlayResult",
    "QuickPlayStatus",
    "RatingChange",
    "RatingsChanged",
    "Rejoin",
    "RejoinResult",
    "Release",
    "ReleaseResult",
    "RematchOffered",
    "RememberedPlayer",
    "RemoveComputer",
    "RemoveComputerResult",
    "Result",
    "Roll",
    "RollOff",
    "RollOffRoll",
    "RollResult",
    "Rolled",
    "RoomOptions",
    "RoomState",
    "RoomSummary",
    "SandboxPlayer",
    "SandboxPosition",
    "SandboxRoom",
    "SandboxRoomRequest",
    "SandboxSeat",
    "Score",
    "ScoreResult",
    "Scored",
    "ServerMessage",
    "Snapshot",
    "Spectate",
    "SpectateResult",
    "Spectators",
    "Standing",
    "Start",
    "StartResult",
    "TakeBonus",
    "TakeBonusResult",
    "Totals",
    "TurnChanged",
    "Welcome",
    "make_ack",
    "message_type",
]


def _check_room_fields(obj: object, names: tuple[str, ...]) -> None:
    # msgspec (like Python's `re`) lets `$` match before a final newline; JSON Schema (ECMA 262)
    # and RE2 do not. Rejecting the newline here makes every implementation agree. The check
    # covers every field with an anchored pattern (room ids, client seeds).
    for name in names:
        value = getattr(obj, name)
        if isinstance(value, str) and value.endswith("\n"):
            raise ValueError(f"Expected `str` matching its pattern in field `{name}`")


class _RoomFieldsChecked:
    """Mixin of the structs with anchored string fields (``_room_fields``): their decoding
    refuses a final newline (see ``_check_room_fields``). Only those structs have a
    ``__post_init__``: every other struct is built without a Python call (a roll's event
    carries thirteen preview entries)."""

    __slots__ = ()
    _room_fields: ClassVar[tuple[str, ...]] = ()

    def __post_init__(self) -> None:
        _check_room_fields(self, self._room_fields)


class Object(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=False):
    """Base of nested objects and ack results (untagged maps)."""

    _room_fields: ClassVar[tuple[str, ...]] = ()


class Message(
    msgspec.Struct, frozen=True, kw_only=True, tag_field="type", forbid_unknown_fields=False
):
    """Base of every top-level message; the wire `type` is the class's tag."""

    _room_fields: ClassVar[tuple[str, ...]] = ()


def message_type(message: Message | type[Message]) -> str:
    """Return the wire `type` of a message or message class, e.g. ``"create_room"``."""
    tag = message.__struct_config__.tag
    assert isinstance(tag, str)
    return tag


# --------------------------------------------------------------------------------------------
# Nested objects
# --------------------------------------------------------------------------------------------

Dice5 = Annotated[
    tuple[DieFace, ...],
    Meta(min_length=5, max_length=5, description="Exactly five die faces."),
]
DiceIndexes = Annotated[
    tuple[DieIndex, ...],
    Meta(max_length=5, description="Die indexes (0..4), at most five."),
]
PlayerIds = Annotated[tuple[PlayerId, ...], Meta(max_length=MAX_SEATS)]
UnixMs = Annotated[int, Meta(ge=0, le=MAX_SAFE_INTEGER, description="Unix time, milliseconds.")]


class RoomOptions(Object, frozen=True, kw_only=True):
    """Rule options of a room, fixed at creation and shown to everyone. Every field is optional
    in `create_room`; an absent field takes the default shown (the official Yahtzee rules)."""

    rules: Annotated[Rules, Meta(description="Rule set: Yahtzee or Scandinavian Yatzy.")] = (
        Rules.YAHTZEE
    )
    extra_yahtzees: Annotated[
        ExtraYahtzees, Meta(description="Extra-Yahtzee bonus and Joker on or off.")
    ] = ExtraYahtzees.ON
    joker: Annotated[Joker, Meta(description="Joker rule for extra Yahtzees.")] = Joker.FORCED
    first_player: Annotated[FirstPlayer, Meta(description="How the first player is chosen.")] = (
        FirstPlayer.ROLL_OFF
    )
    upper_first: Annotated[
        Toggle,
        Meta(description="House variant: the six upper boxes must be filled first (v1.2)."),
    ] = Toggle.OFF
    bonus_turn: Annotated[
        Toggle,
        Meta(
            description="House variant: an extra Yahtzee may be taken as its +100 without "
            "filling a box (`take_bonus`); the game goes on until every card is full (v1.2)."
        ),
    ] = Toggle.OFF


CORRESPONDENCE_MIN_SECONDS: Final = 3600
"""Shortest clock of a correspondence room: one hour per move."""
CORRESPONDENCE_MAX_SECONDS: Final = 14 * 86_400
"""Longest clock of a correspondence room: fourteen days per move."""


class Correspondence(Object, frozen=True, kw_only=True):
    """A correspondence room's clock (v1.4): a long time per turn, hours to days (SPEC 10.11)."""

    seconds_per_move: Annotated[
        int,
        Meta(
            ge=CORRESPONDENCE_MIN_SECONDS,
            le=CORRESPONDENCE_MAX_SECONDS,
            description="Seconds each turn may take, 3600 (an hour) .. 1209600 (14 days); when "
            "they pass, the server plays the turn as a turn timer does (10.6).",
        ),
    ]


class ComputerSeat(Object, frozen=True, kw_only=True):
    """A computer player to seat (v1.2)."""

    level: Annotated[Level, Meta(description="How well it plays.")]
    name: Annotated[
        Name | None, Meta(description="Its display name; null: the server picks one.")
    ] = None


class HintOption(Object, frozen=True, kw_only=True):
    """One option of a hint, with the expected final score if it is taken and the rest of the
    game is played optimally (v1.2)."""

    kind: Annotated[HintKind, Meta(description="What the option does.")]
    keep: Annotated[
        DiceIndexes,
        Meta(description="For `roll`: indexes of the dice to keep (as `roll.keep`); else empty."),
    ] = ()
    box: Annotated[Box | None, Meta(description="For `score`: the box; else null.")] = None
    expected: Annotated[
        float,
        Meta(ge=0, le=2000, description="Expected final score of the player with this option."),
    ]


Faces = Annotated[tuple[DieFace, ...], Meta(max_length=5)]


class DecisionReview(Object, _RoomFieldsChecked, frozen=True, kw_only=True):
    """One decision of a finished or running game, next to the optimal one (v1.2, the HTTP
    analysis). `kind` `keep`: which dice to keep after roll `roll` (keeping all five means
    "score now"); `box`: which box after the turn's last roll (a null box is the +100 take of
    `bonus_turn`). Expected values are expected final scores of the player."""

    _room_fields: ClassVar[tuple[str, ...]] = ("kind",)

    player: PlayerId
    turn: Annotated[
        int,
        Meta(
            ge=1,
            le=MAX_SAFE_INTEGER,
            description="The player's turn, counting every `turn_changed` naming the player "
            "(1-based); under `bonus_turn` it may exceed the number of boxes.",
        ),
    ]
    roll: Annotated[int, Meta(ge=1, le=3, description="The roll the decision followed.")]
    kind: Annotated[str, Meta(pattern="^(keep|box)$", description="`keep` or `box`.")]
    chosen_keep: Annotated[
        Faces | None, Meta(description="For `keep`: the faces kept, ascending; else null.")
    ] = None
    best_keep: Annotated[
        Faces | None, Meta(description="For `keep`: the best faces to keep, ascending; else null.")
    ] = None
    chosen_box: Annotated[Box | None, Meta(description="For `box`: the box filled.")] = None
    best_box: Annotated[Box | None, Meta(description="For `box`: the best box.")] = None
    chosen_expected: Annotated[float, Meta(ge=0, description="Expected final score, as chosen.")]
    best_expected: Annotated[float, Meta(ge=0, description="Expected final score, best option.")]
    loss: Annotated[float, Meta(ge=0, description="`best_expected` - `chosen_expected`.")]


class PlayerAnalysis(Object, frozen=True, kw_only=True):
    """Every reviewed decision of one player (v1.2)."""

    player: PlayerId
    name: Name
    computer: Annotated[Level | None, Meta(description="Level of a computer player.")] = None
    decisions: Annotated[
        tuple[DecisionReview, ...],
        Meta(max_length=100, description="The player's reviewed decisions, in game order."),
    ]
    total_loss: Annotated[float, Meta(ge=0, description="Expected points lost in all.")]
    mean_loss: Annotated[float, Meta(ge=0, description="Per decision; 0 with none.")]


class GameAnalysis(Object, _RoomFieldsChecked, frozen=True, kw_only=True):
    """`GET /rooms/{id}/analysis` (v1.2): the game's decisions against optimal play, computed
    from the room's event log alone."""

    _room_fields: ClassVar[tuple[str, ...]] = ("room",)

    room: RoomId
    seq: Annotated[Seq, Meta(description="The last event of the log this analysis covers.")]
    options: Annotated[RoomOptions, Meta(description="The rules the decisions are judged by.")]
    players: Annotated[
        tuple[PlayerAnalysis, ...],
        Meta(max_length=MAX_SEATS, description="One entry per seated player, in seat order."),
    ]


class Limits(Object, frozen=True, kw_only=True):
    """Limits in force on this connection, announced in `welcome`."""

    max_frame_bytes: Annotated[
        int, Meta(ge=1, le=MAX_SAFE_INTEGER, description="Largest client frame, in bytes.")
    ]
    max_messages_per_second: Annotated[
        int, Meta(ge=1, le=MAX_SAFE_INTEGER, description="Sustained client message rate.")
    ]
    burst: Annotated[
        int, Meta(ge=1, le=MAX_SAFE_INTEGER, description="Client messages allowed in a burst.")
    ]
    max_name_length: Annotated[
        int, Meta(ge=1, le=MAX_SAFE_INTEGER, description="Longest player name, code points.")
    ]
    max_id_length: Annotated[
        int, Meta(ge=1, le=MAX_SAFE_INTEGER, description="Longest command id, code points.")
    ]
    send_queue_limit: Annotated[
        int,
        Meta(
            ge=1,
            le=MAX_SAFE_INTEGER,
            description="Server messages queued for a slow reader; one more and the connection is "
            "closed with code 4000.",
        ),
    ]


DEFAULT_LIMITS: Final = Limits(
    max_frame_bytes=MAX_CLIENT_FRAME_BYTES,
    max_messages_per_second=20,
    burst=60,
    max_name_length=32,
    max_id_length=64,
    send_queue_limit=512,
)
"""Default limits of protocol version 1 (SPEC.md section 11.7): the reference server's defaults.

A test checks them against ``server/settings.py``; servers may announce other values.
"""


class RoomSummary(Object, _RoomFieldsChecked, frozen=True, kw_only=True):
    """What `list_rooms` and `get_room` tell about a room."""

    _room_fields: ClassVar[tuple[str, ...]] = ("room",)

    room: RoomId
    status: Annotated[RoomStatus, Meta(description="Life cycle of the room.")]
    public: Annotated[bool, Meta(description="Listed by `list_rooms`, joinable without code.")]
    players: Annotated[
        tuple[Name, ...],
        Meta(
            max_length=MAX_SEATS,
            description="Names of every seated player (forfeited ones too), in seat order.",
        ),
    ]
    seats: Annotated[int, Meta(ge=1, le=MAX_SEATS, description="Number of seats, 1..8.")]
    open_seats: Annotated[
        int,
        Meta(
            ge=0,
            le=MAX_SEATS,
            description="Seats a `join` can take now: free seats in the lobby, 0 once started.",
        ),
    ]
    spectators: Annotated[Count, Meta(description="Connected spectators.")]
    options: Annotated[RoomOptions, Meta(description="Rule options of the room.")]
    turn_seconds: TurnSeconds
    hints: Annotated[
        bool | None,
        Meta(description="Players may ask for `hint` (v1.2); null from an older server."),
    ] = None
    auto_start: Annotated[
        bool | None,
        Meta(
            description="The game starts by itself when the last seat is taken (v1.3); null "
            "from an older server."
        ),
    ] = None
    rated: Annotated[
        bool | None,
        Meta(
            description="A rated room: its result moves the players' ratings (v1.4); null "
            "from an older server."
        ),
    ] = None
    computer_delay_ms: Annotated[
        Annotated[int, Meta(ge=0, le=10_000)] | None,
        Meta(
            description="Pause before each move of a computer player, ms (v1.3); null from an "
            "older server."
        ),
    ] = None
    correspondence: Annotated[
        Correspondence | None,
        Meta(
            description="The room's correspondence clock (v1.4); null: not a correspondence "
            "room (`turn_seconds` is then its clock). In a correspondence room `turn_seconds` "
            "is 0."
        ),
    ] = None


class Totals(Object, frozen=True, kw_only=True):
    """Score totals of a player; `grand` = `upper` + `upper_bonus` + `lower` + `yahtzee_bonus`."""

    upper: Annotated[Count, Meta(description="Sum of the upper boxes.")]
    upper_bonus: Annotated[Count, Meta(description="35 (Yahtzee) or 50 (Yatzy) once earned.")]
    lower: Annotated[Count, Meta(description="Sum of the lower boxes.")]
    yahtzee_bonus: Annotated[Count, Meta(description="100 per extra-Yahtzee bonus.")]
    grand: Annotated[Count, Meta(description="Grand total.")]


class PlayerView(Object, frozen=True, kw_only=True):
    """A seated player as seen by everyone in the room."""

    player: PlayerId
    name: Name
    seat: Seat
    connected: Annotated[bool, Meta(description="A connection currently holds this seat.")]
    forfeited: Annotated[bool, Meta(description="Left during the game; skipped from now on.")]
    scorecard: Annotated[
        dict[Box, Points | None],
        Meta(
            description="Every box of the room's rule set, in scorecard order: "
            "points, or null while open.",
            extra_json_schema={"propertyNames": {"$ref": "#/$defs/Box"}},
        ),
    ]
    totals: Annotated[Totals, Meta(description="Totals so far.")]
    computer: Annotated[
        Level | None, Meta(description="The level of a computer player; null for a person (v1.2).")
    ] = None
    away_deadline_ms: Annotated[
        UnixMs | None,
        Meta(
            description="For a disconnected player: Unix time (ms) from which the server plays "
            "their turns (SPEC 10.6); null while connected, when that grace is off, under a "
            "turn timer, after the game, or from an older server (v1.3)."
        ),
    ] = None


class PreviewEntry(Object, frozen=True, kw_only=True):
    """What scoring one open box would give with the current dice."""

    box: Annotated[Box, Meta(description="An open box of the player on turn.")]
    allowed: Annotated[
        bool, Meta(description="False if the rules forbid this box now (forced Joker).")
    ]
    points: Annotated[
        Points,
        Meta(description="Points the box would get (0 when not allowed); excludes the +100."),
    ]


PreviewList = Annotated[
    tuple[PreviewEntry, ...],
    Meta(max_length=15, description="One entry per open box of the player on turn."),
]


class RoomState(Object, _RoomFieldsChecked, frozen=True, kw_only=True):
    """Full view of a room, sent in `snapshot`."""

    _room_fields: ClassVar[tuple[str, ...]] = ("id", "rematch_room")

    id: RoomId
    status: Annotated[RoomStatus, Meta(description="Life cycle of the room.")]
    public: Annotated[bool, Meta(description="Listed by `list_rooms`, joinable without code.")]
    max_seats: Annotated[int, Meta(ge=1, le=MAX_SEATS, description="Number of seats, 1..8.")]
    turn_seconds: TurnSeconds
    options: Annotated[RoomOptions, Meta(description="Rule options of the room.")]
    host: Annotated[
        PlayerId | None, Meta(description="Player who may `start`; null with no players.")
    ]
    players: Annotated[
        tuple[PlayerView, ...], Meta(max_length=MAX_SEATS, description="In seat order.")
    ]
    phase: Annotated[Phase, Meta(description="Game phase.")]
    order: Annotated[PlayerIds, Meta(description="Turn order; empty before the game starts.")]
    current_player: Annotated[
        PlayerId | None, Meta(description="Player on turn; null outside a game.")
    ]
    round: Annotated[int, Meta(ge=0, le=15, description="Current round; 0 before the start.")]
    dice: Annotated[
        tuple[DieFace, ...],
        Meta(
            max_length=5,
            extra_json_schema={"not": {"minItems": 1, "maxItems": 4}},
            description="Empty before the first roll of a turn, else exactly five faces.",
        ),
    ]
    held: Annotated[DiceIndexes, Meta(description="Indexes of the dice currently held.")]
    roll_number: Annotated[int, Meta(ge=0, le=3, description="Rolls made this turn, 0..3.")]
    rolls_left: Annotated[
        int, Meta(ge=0, le=3, description="Rolls left this turn; 0 outside a turn.")
    ]
    preview: Annotated[PreviewList, Meta(description="Empty unless phase is `rolled`.")]
    turn_deadline_ms: Annotated[
        UnixMs | None, Meta(description="Unix time (ms) the turn times out, or null.")
    ]
    spectators: Annotated[Count, Meta(description="Connected spectators.")]
    joker: Annotated[
        bool | None,
        Meta(
            description="The Joker rule applies to the current dice (as `rolled.joker`); "
            "false unless phase is `rolled`; null only from servers older than this field."
        ),
    ] = None
    hints: Annotated[
        bool | None,
        Meta(description="Players may ask for `hint` (v1.2); null from an older server."),
    ] = None
    auto_start: Annotated[
        bool | None,
        Meta(
            description="The game starts by itself when the last seat is taken (v1.3); null "
            "from an older server."
        ),
    ] = None
    computer_delay_ms: Annotated[
        Annotated[int, Meta(ge=0, le=10_000)] | None,
        Meta(
            description="Pause before each move of a computer player, ms (v1.3); null from an "
            "older server."
        ),
    ] = None
    correspondence: Annotated[
        Correspondence | None,
        Meta(
            description="The room's correspondence clock (v1.4); null: not a correspondence "
            "room (`turn_seconds` is then its clock). In a correspondence room `turn_seconds` "
            "is 0."
        ),
    ] = None
    rated: Annotated[
        bool | None,
        Meta(
            description="A rated room: its result moves the players' ratings (v1.4); null "
            "from an older server."
        ),
    ] = None
    rematch_room: Annotated[
        RoomId | None,
        Meta(
            description="The room of the rematch offered after this game (`rematch_offered`, "
            "v1.3); null: none (yet)."
        ),
    ] = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if len(self.dice) not in (0, 5):
            raise ValueError("Expected `array` of length 0 or 5 in field `dice`")


class RollOffRoll(Object, frozen=True, kw_only=True):
    """One player's roll in a roll-off round."""

    player: PlayerId
    dice: Dice5
    total: Annotated[int, Meta(ge=5, le=30, description="Sum of the dice.")]


class Standing(Object, frozen=True, kw_only=True):
    """A player's final result in `game_over`."""

    player: PlayerId
    name: Name
    total: Annotated[Count, Meta(description="Grand total.")]
    place: Annotated[
        int,
        Meta(
            ge=1,
            le=MAX_SEATS,
            description=(
                "1 = winner; equal totals share a place (1, 1, 3);"
                " forfeited players rank after the others."
            ),
        ),
    ]
    forfeited: Annotated[bool, Meta(description="Left before the end of the game.")]


# Ack results ---------------------------------------------------------------------------------


class Result(Object, frozen=True, kw_only=True, tag_field="command"):
    """Base of ack results: a map whose first key `command` names the command answered.

    `command` (new in v1.1) makes `ack.result` a discriminated union: read the result by its
    `command`. A v1.0 server leaves it out; read such a result by the command you sent
    (:func:`protocol.compat.decode_server_liberally`).
    """


class RememberedPlayer(Object, frozen=True, kw_only=True):
    """A remembered player (v1.3): an identity of `POST /players` or of a JWT."""

    player: Annotated[
        str, Meta(min_length=1, max_length=64, description="The player's id (`/players/{id}`).")
    ]
    name: Annotated[str, Meta(min_length=1, max_length=64, description="Display name.")]


# -- the sandbox (v1.4, HTTP only: `yahtzee serve --sandbox`, SPEC.md 13.15) ------------------

SandboxSeed = Annotated[
    str,
    Meta(
        min_length=1,
        max_length=64,
        description="Any text: the same seed, position and commands give the same dice.",
    ),
]


class SandboxPlayer(Object, frozen=True, kw_only=True):
    """One seat of a sandbox position (v1.4): a person, in seat order."""

    name: Name
    scores: Annotated[
        dict[Box, Points],
        Meta(description="The filled boxes and their points; absent boxes are open."),
    ] = {}
    yahtzee_bonus: Annotated[
        int,
        Meta(
            ge=0,
            le=1300,
            multiple_of=100,
            description="Extra-Yahtzee bonus points already earned (100 each; needs 50 in the "
            "YAHTZEE box).",
        ),
    ] = 0


class SandboxPosition(Object, frozen=True, kw_only=True):
    """A game position to start a sandbox room at (v1.4): the players' cards, who is on turn,
    and the dice of that turn so far."""

    players: Annotated[
        tuple[SandboxPlayer, ...],
        Meta(min_length=1, max_length=MAX_SEATS, description="The seats, in turn order."),
    ]
    turn: Annotated[
        int, Meta(ge=0, le=MAX_SEATS - 1, description="Index in `players` of the player on turn.")
    ] = 0
    dice: Annotated[
        Faces, Meta(description="The dice of the turn: empty before its first roll, else five.")
    ] = ()
    rolls_used: Annotated[
        int, Meta(ge=0, le=3, description="Rolls made this turn: 0 without dice, else 1..3.")
    ] = 0
    held: Annotated[DiceIndexes, Meta(description="Indexes of the held dice.")] = ()


class SandboxRoomRequest(Object, frozen=True, kw_only=True):
    """The body of `POST /sandbox/rooms` (v1.4, sandbox servers only): a private room with
    seeded dice, in the lobby or (with `position`) already playing at a given position."""

    seed: SandboxSeed
    seats: Annotated[
        int,
        Meta(ge=1, le=MAX_SEATS, description="Seats of a lobby room (without `position`)."),
    ] = 1
    options: Annotated[RoomOptions, Meta(description="Rule options; absent ones default.")] = (
        RoomOptions()
    )
    turn_seconds: TurnSeconds = 0
    hints: Annotated[bool, Meta(description="Whether `hint` is allowed.")] = True
    position: Annotated[
        SandboxPosition | None,
        Meta(
            description="Start the game at this position (players in seat order); null: a "
            "lobby room that players `join` as usual."
        ),
    ] = None


class SandboxSeat(Object, frozen=True, kw_only=True):
    """A seat of a position room (v1.4): take it with `rejoin` and this token."""

    player: PlayerId
    seat: Seat
    name: Name
    token: Token


class SandboxRoom(Object, _RoomFieldsChecked, frozen=True, kw_only=True):
    """The answer of `POST /sandbox/rooms` (v1.4)."""

    _room_fields: ClassVar[tuple[str, ...]] = ("room",)

    room: RoomId
    invite_code: InviteCode
    seats: Annotated[
        tuple[SandboxSeat, ...],
        Meta(max_length=MAX_SEATS, description="The seats of a position room; empty otherwise."),
    ] = ()


class HelloResult(Result, frozen=True, kw_only=True, tag="hello"):
    """Result of `hello`: the tag, and (v1.3) the remembered player a `player_token` named.
    Absent when no credential was presented (a v1.2 server never writes it)."""

    player: Annotated[
        RememberedPlayer | UnsetType,
        Meta(description="v1.3: who `player_token` (or the handshake's Bearer) names."),
    ] = UNSET


class CreateRoomResult(Result, _RoomFieldsChecked, frozen=True, kw_only=True, tag="create_room"):
    """Result of `create_room` (the same room again for a repeated `create_key`)."""

    _room_fields: ClassVar[tuple[str, ...]] = ("room",)

    room: RoomId
    invite_code: Annotated[
        InviteCode | None, Meta(description="Code to share for a private room; null if public.")
    ]


class ListRoomsResult(Result, frozen=True, kw_only=True, tag="list_rooms"):
    """Result of `list_rooms`."""

    rooms: Annotated[
        tuple[RoomSummary, ...], Meta(description="Public rooms; the server may cap the list.")
    ]


class GetRoomResult(Result, frozen=True, kw_only=True, tag="get_room"):
    """Result of `get_room`."""

    room: Annotated[RoomSummary, Meta(description="The room.")]


class JoinResult(Result, frozen=True, kw_only=True, tag="join"):
    """Result of `join`. The token is sent only here: store it to `rejoin` later."""

    player: PlayerId
    seat: Seat
    token: Token


Resumed = Annotated[
    bool | None,
    Meta(
        description="True: exactly the events after `last_seq` follow; false: a `snapshot` "
        "follows (rebuild the room from it); null: a v1.0 server (look at what follows)."
    ),
]


class RejoinResult(Result, frozen=True, kw_only=True, tag="rejoin"):
    """Result of `rejoin`; `resumed` says whether missed events or a snapshot follow."""

    player: PlayerId
    seat: Seat
    resumed: Resumed = None


class SpectateResult(Result, frozen=True, kw_only=True, tag="spectate"):
    """Result of `spectate`; `resumed` says whether missed events or a snapshot follow."""

    resumed: Resumed = None


class LeaveResult(Result, frozen=True, kw_only=True, tag="leave"):
    """Result of `leave`: nothing but the tag."""


class StartResult(Result, frozen=True, kw_only=True, tag="start"):
    """Result of `start`: nothing but the tag."""


class RollResult(Result, frozen=True, kw_only=True, tag="roll"):
    """Result of `roll`: nothing but the tag (the dice are in the `rolled` event)."""


class HoldResult(Result, frozen=True, kw_only=True, tag="hold"):
    """Result of `hold`: nothing but the tag."""


class ReleaseResult(Result, frozen=True, kw_only=True, tag="release"):
    """Result of `release`: nothing but the tag."""


class ScoreResult(Result, frozen=True, kw_only=True, tag="score"):
    """Result of `score`: nothing but the tag (the points are in the `scored` event)."""


class TakeBonusResult(Result, frozen=True, kw_only=True, tag="take_bonus"):
    """Result of `take_bonus` (v1.2): nothing but the tag (see the `bonus_taken` event)."""


class AddComputerResult(Result, frozen=True, kw_only=True, tag="add_computer"):
    """Result of `add_computer` (v1.2): the computer's player id and seat."""

    player: PlayerId
    seat: Seat


class RemoveComputerResult(Result, frozen=True, kw_only=True, tag="remove_computer"):
    """Result of `remove_computer` (v1.2): nothing but the tag."""


class HintResult(Result, frozen=True, kw_only=True, tag="hint"):
    """Result of `hint` (v1.2): the best options of the player on turn, best first."""

    player: Annotated[PlayerId, Meta(description="The player on turn the hint is for.")]
    rolls_left: Annotated[int, Meta(ge=0, le=3, description="Rolls left in the turn.")]
    options: Annotated[
        tuple[HintOption, ...],
        Meta(min_length=1, max_length=3, description="Up to three options, best first."),
    ]


class OfferRematchResult(
    Result, _RoomFieldsChecked, frozen=True, kw_only=True, tag="offer_rematch"
):
    """Result of `offer_rematch` (v1.3): the rematch room, and the sender's seat in it (as
    the result of `join`: keep the token, then `rejoin` the rematch room with it)."""

    _room_fields: ClassVar[tuple[str, ...]] = ("room",)

    room: Annotated[RoomId, Meta(description="The rematch room (the same for every offer).")]
    invite_code: Annotated[
        InviteCode | None, Meta(description="Its invite code if it is private; null if public.")
    ]
    player: Annotated[
        PlayerId | None,
        Meta(description="The sender's player id there; null: no seat was free any more."),
    ] = None
    seat: Annotated[Seat | None, Meta(description="The sender's seat there, or null.")] = None
    token: Annotated[
        Token | None,
        Meta(description="The seat token there (as in `join`), or null without a seat."),
    ] = None


QuickPlaySeats = Annotated[
    int, Meta(ge=2, le=4, description="Seats of the quick-play game, 2..4 (v1.4).")
]
RatingWindow = Annotated[
    int,
    Meta(
        ge=0,
        le=100_000,
        description="How far (rating points) an opponent's rating may be from the player's "
        "now; it widens while the player waits.",
    ),
]
QueuePosition = Annotated[
    int, Meta(ge=1, le=MAX_SAFE_INTEGER, description="Place in the queue, 1: the longest waiting.")
]


class QuickPlayResult(Result, frozen=True, kw_only=True, tag="quick_play"):
    """Result of `quick_play` (v1.4): the connection is queued; `quick_play_status` follows
    while it waits, `quick_play_matched` once a room is made for it."""

    position: QueuePosition
    window: RatingWindow
    rating: Annotated[
        float | None,
        Meta(description="The player's rating for these rules; null: unrated (1500 assumed)."),
    ] = None
    computers_after_ms: Annotated[
        Annotated[int, Meta(ge=0, le=MAX_SAFE_INTEGER)] | None,
        Meta(
            description="After this long in the queue, open seats are filled with computers; "
            "null: never (`computers` false)."
        ),
    ] = None


class CancelQuickPlayResult(Result, frozen=True, kw_only=True, tag="cancel_quick_play"):
    """Result of `cancel_quick_play` (v1.4): nothing but the tag; the connection left the
    queue."""


AckResult: TypeAlias = (
    HelloResult
    | CreateRoomResult
    | ListRoomsResult
    | GetRoomResult
    | JoinResult
    | RejoinResult
    | SpectateResult
    | LeaveResult
    | StartResult
    | RollResult
    | HoldResult
    | ReleaseResult
    | ScoreResult
    | TakeBonusResult
    | AddComputerResult
    | RemoveComputerResult
    | HintResult
    | OfferRematchResult
    | QuickPlayResult
    | CancelQuickPlayResult
)
"""Any ack result object, discriminated by its `command`."""


# --------------------------------------------------------------------------------------------
# Client commands
# --------------------------------------------------------------------------------------------


class Command(Message, frozen=True, kw_only=True):
    """Base of client commands; every command carries a client-chosen `id`."""

    id: CommandId


class Hello(Command, frozen=True, kw_only=True, tag="hello"):
    """Optional introduction; answered by an ack with an empty result."""

    client: Annotated[
        Annotated[str, Meta(min_length=1, max_length=64)] | None,
        Meta(description="Client software name/version, for server logs."),
    ] = None
    player_token: Annotated[
        Annotated[str, Meta(min_length=1, max_length=4096)] | UnsetType,
        Meta(
            description="v1.3: a player token (`POST /players`) or a JWT of the operator's "
            "identity provider; the seats this connection takes are linked to that player. "
            "Absent: anonymous (or the handshake's `Authorization: Bearer`)."
        ),
    ] = UNSET


CreateKey = Annotated[
    str,
    Meta(
        min_length=16,
        max_length=64,
        description="Client-generated idempotency key of a `create_room` (16..64 characters).",
    ),
]


class CreateRoom(Command, frozen=True, kw_only=True, tag="create_room"):
    """Create a room; the creator is not seated until it sends `join`."""

    seats: Annotated[int, Meta(ge=1, le=MAX_SEATS, description="Number of seats, 1..8.")]
    public: Annotated[bool, Meta(description="Public rooms are listed and need no invite code.")]
    turn_seconds: TurnSeconds = 0
    options: Annotated[RoomOptions, Meta(description="Rule options; absent ones default.")] = (
        RoomOptions()
    )
    create_key: Annotated[
        CreateKey | None,
        Meta(
            description="Makes a repeated create safe: the same key within an hour returns the "
            "same room instead of creating another (v1.1)."
        ),
    ] = None
    computers: Annotated[
        tuple[ComputerSeat, ...],
        Meta(
            max_length=MAX_SEATS - 1,
            description="Computer players seated at once, before any person (v1.2).",
        ),
    ] = ()
    hints: Annotated[
        bool, Meta(description="Whether players may ask for `hint` in this room (v1.2).")
    ] = True
    computer_delay_ms: Annotated[
        Annotated[int, Meta(ge=0, le=10_000)] | None,
        Meta(
            description="Pause before each move of a computer player, ms (0..10000); null: "
            "the server's default (v1.2).",
        ),
    ] = None
    auto_start: Annotated[
        bool,
        Meta(
            description="Start the game by itself as soon as the last seat is taken, without "
            "the host's `start` (v1.3)."
        ),
    ] = False
    correspondence: Annotated[
        Correspondence | None,
        Meta(
            description="Makes a correspondence room: a long clock per move, hours to days "
            "(v1.4); not with `turn_seconds` > 0. Null: an ordinary room.",
        ),
    ] = None
    rated: Annotated[
        bool,
        Meta(
            description="A rated room (v1.4): every person needs a remembered player "
            "(`identity_required`), no computer may sit (`rated_no_computers`), and the "
            "finished game moves the result ratings (`ratings`)."
        ),
    ] = False


class ListRooms(Command, frozen=True, kw_only=True, tag="list_rooms"):
    """List the public rooms."""


class GetRoom(Command, _RoomFieldsChecked, frozen=True, kw_only=True, tag="get_room"):
    """Describe one room (a private room needs its invite code)."""

    _room_fields: ClassVar[tuple[str, ...]] = ("room",)

    room: RoomId
    invite_code: Annotated[InviteCode | None, Meta(description="Needed for a private room.")] = None


CLIENT_SEED_PATTERN: Final = "^[ -~]+$"
"""Regular expression of a client seed: printable ASCII (space to tilde)."""

ClientSeed = Annotated[
    str,
    Meta(
        min_length=1,
        max_length=64,
        pattern=CLIENT_SEED_PATTERN,
        description="Client seed: 1..64 printable ASCII characters.",
    ),
]
DiceCommitment = Annotated[
    str,
    Meta(
        pattern="^[0-9a-f]{64}$",
        description="Lowercase hex SHA-256 of the room's 32-byte server seed.",
    ),
]
ServerSeed = Annotated[
    str,
    Meta(pattern="^[0-9a-f]{64}$", description="The room's server seed, 64 lowercase hex digits."),
]

JoinKey = Annotated[
    str,
    Meta(min_length=1, max_length=64, description="Client-generated join key (1..64 characters)."),
]


class Join(Command, _RoomFieldsChecked, frozen=True, kw_only=True, tag="join"):
    """Take a free seat in a room in the lobby."""

    _room_fields: ClassVar[tuple[str, ...]] = ("room", "seed")

    room: RoomId
    name: Name
    invite_code: Annotated[InviteCode | None, Meta(description="Needed for a private room.")] = None
    join_key: Annotated[
        JoinKey | None,
        Meta(
            description="Makes a repeated join safe: the same room and key again returns the "
            "same seat with a new token."
        ),
    ] = None
    seed: Annotated[
        ClientSeed | None,
        Meta(description="The player's seed for the provably fair dice (v1.1); null: none."),
    ] = None


class Rejoin(Command, _RoomFieldsChecked, frozen=True, kw_only=True, tag="rejoin"):
    """Take back a seat (after a reconnect) with the token from the `join` ack."""

    _room_fields: ClassVar[tuple[str, ...]] = ("room",)

    room: RoomId
    token: Token
    last_seq: Annotated[
        LastSeq | None, Meta(description="Last event seq received; null or absent: snapshot.")
    ] = None


class Spectate(Command, _RoomFieldsChecked, frozen=True, kw_only=True, tag="spectate"):
    """Watch a room without a seat."""

    _room_fields: ClassVar[tuple[str, ...]] = ("room",)

    room: RoomId
    invite_code: Annotated[InviteCode | None, Meta(description="Needed for a private room.")] = None
    last_seq: Annotated[
        LastSeq | None, Meta(description="Last event seq received; null or absent: snapshot.")
    ] = None


ExpectSeq = Annotated[
    LastSeq | None,
    Meta(
        description="Apply only if the room's seq is exactly this (else `stale_state`); "
        "absent or null: no check."
    ),
]


class Leave(Command, frozen=True, kw_only=True, tag="leave"):
    """Leave the current room (a player leaving a game in progress forfeits)."""


class Start(Command, frozen=True, kw_only=True, tag="start"):
    """Start the game (host only, in the lobby)."""

    expect_seq: ExpectSeq = None


class Roll(Command, frozen=True, kw_only=True, tag="roll"):
    """Roll the dice. Roll 1 rolls all five; rolls 2 and 3 re-roll every die not in `keep`."""

    keep: Annotated[
        DiceIndexes,
        Meta(description="Indexes of the dice to keep; absent or empty: re-roll all."),
    ] = ()
    expect_seq: ExpectSeq = None


class Hold(Command, frozen=True, kw_only=True, tag="hold"):
    """Mark dice as held (shown to the table) between rolls."""

    dice: Annotated[DiceIndexes, Meta(description="Indexes to add to the held set.")]
    expect_seq: ExpectSeq = None


class Release(Command, frozen=True, kw_only=True, tag="release"):
    """Unmark held dice."""

    dice: Annotated[DiceIndexes, Meta(description="Indexes to remove from the held set.")]
    expect_seq: ExpectSeq = None


class Score(Command, frozen=True, kw_only=True, tag="score"):
    """Write the current dice into an open box; ends the turn."""

    box: Annotated[Box, Meta(description="The box to fill.")]
    expect_seq: ExpectSeq = None


class TakeBonus(Command, frozen=True, kw_only=True, tag="take_bonus"):
    """Take the +100 of an extra Yahtzee and fill no box; ends the turn (room option
    `bonus_turn`, v1.2)."""

    expect_seq: ExpectSeq = None


class AddComputer(Command, frozen=True, kw_only=True, tag="add_computer"):
    """Seat a computer player (host only, in the lobby; v1.2)."""

    level: Annotated[Level, Meta(description="How well it plays.")]
    name: Annotated[
        Name | None, Meta(description="Its display name; null: the server picks one.")
    ] = None


class RemoveComputer(Command, frozen=True, kw_only=True, tag="remove_computer"):
    """Free a computer player's seat (host only, in the lobby; v1.2)."""

    player: Annotated[PlayerId, Meta(description="The computer player's id.")]


class Hint(Command, frozen=True, kw_only=True, tag="hint"):
    """Ask the advisor for the best options of the player on turn (players and spectators of
    a room created with `hints` true; v1.2)."""


class OfferRematch(Command, frozen=True, kw_only=True, tag="offer_rematch"):
    """Offer a rematch of the finished game (a player of the room; v1.3): the first offer
    creates the rematch room, every offer seats its sender there."""


class QuickPlay(Command, frozen=True, kw_only=True, tag="quick_play"):
    """Wait for a game against players of a similar rating (v1.4; needs a remembered player,
    `hello.player_token`): the connection is queued for `seats` and `rules` until
    `quick_play_matched` names its room and seat."""

    seats: QuickPlaySeats = 2
    rules: Annotated[Rules, Meta(description="The rule set (and rating family) to play.")] = (
        Rules.YAHTZEE
    )
    computers: Annotated[
        bool,
        Meta(
            description="Fill seats still open after the server's wait with computers of a "
            "level near the player's rating (`computers_after_ms` of the result)."
        ),
    ] = True


class CancelQuickPlay(Command, frozen=True, kw_only=True, tag="cancel_quick_play"):
    """Leave the quick-play queue (v1.4)."""


class Ping(Command, frozen=True, kw_only=True, tag="ping"):
    """Application-level keepalive; answered by `pong` (not by `ack`)."""


ClientMessage: TypeAlias = (
    Hello
    | CreateRoom
    | ListRooms
    | GetRoom
    | Join
    | Rejoin
    | Spectate
    | Leave
    | Start
    | Roll
    | Hold
    | Release
    | Score
    | TakeBonus
    | AddComputer
    | RemoveComputer
    | Hint
    | OfferRematch
    | QuickPlay
    | CancelQuickPlay
    | Ping
)
"""Any message a client may send."""


# --------------------------------------------------------------------------------------------
# Server messages outside the room log
# --------------------------------------------------------------------------------------------


class Welcome(Message, frozen=True, kw_only=True, tag="welcome"):
    """First message on every connection, sent right after the handshake."""

    server_version: Annotated[
        str, Meta(min_length=1, max_length=64, description="Server software version.")
    ]
    protocol_version: Annotated[
        int, Meta(ge=1, le=MAX_SAFE_INTEGER, description="Protocol version of this connection.")
    ]
    encoding: Annotated[Encoding, Meta(description="Encoding of this connection.")]
    limits: Annotated[Limits, Meta(description="Limits in force on this connection.")]
    heartbeat_seconds: Annotated[
        int, Meta(ge=1, le=3600, description="Interval of server WebSocket pings, seconds.")
    ]
    server_time_ms: Annotated[
        UnixMs | None,
        Meta(description="The server's clock (Unix ms) when it sent this, or null."),
    ] = None
    protocol_minor: Annotated[
        int,
        Meta(
            ge=0,
            le=MAX_SAFE_INTEGER,
            description="Minor version the server speaks (2 for v1.2); absent from a v1.0 "
            "server: 0.",
        ),
    ] = 0


class Ack(Message, frozen=True, kw_only=True, tag="ack"):
    """Success reply to a command (build it with `make_ack`)."""

    id: CommandId
    seq: Annotated[
        LastSeq | None,
        Meta(description="The room's seq after the command; null when not in a room."),
    ]
    result: Annotated[
        AckResult,
        Meta(description="Result of the command, tagged by `command` (the command answered)."),
    ]


class Error(Message, frozen=True, kw_only=True, tag="error"):
    """Failure reply to a command, or a report about an unreadable frame (`id` null)."""

    id: Annotated[
        CommandId | None, Meta(description="The command's id; null if it could not be read.")
    ]
    code: Annotated[
        str, Meta(min_length=1, max_length=64, description="Stable error code (section 9).")
    ]
    message: Annotated[
        str, Meta(max_length=1024, description="Human-readable explanation (English).")
    ]
    seq: Annotated[
        LastSeq | None,
        Meta(description="The room's current seq; null when not in a room."),
    ]
    retryable: Annotated[
        bool, Meta(description="True if resending the same command later may succeed.")
    ]


class Pong(Message, frozen=True, kw_only=True, tag="pong"):
    """Reply to `ping`."""

    id: CommandId


class Snapshot(Message, _RoomFieldsChecked, frozen=True, kw_only=True, tag="snapshot"):
    """Full state of the room at position `seq`; later events continue from `seq` + 1."""

    _room_fields: ClassVar[tuple[str, ...]] = ("room",)

    room: RoomId
    seq: Annotated[LastSeq, Meta(description="Seq of the last event included; 0 if none yet.")]
    state: Annotated[RoomState, Meta(description="The room at `seq`.")]


class QuickPlayStatus(Message, frozen=True, kw_only=True, tag="quick_play_status"):
    """The quick-play queue as the waiting player sees it (v1.4): sent only to a connection
    that sent `quick_play`, every few seconds while it waits."""

    position: QueuePosition
    waiting: Annotated[
        int, Meta(ge=1, le=MAX_SAFE_INTEGER, description="Players in this queue now.")
    ]
    window: RatingWindow
    waited_ms: Annotated[
        int, Meta(ge=0, le=MAX_SAFE_INTEGER, description="How long the player has waited.")
    ]


class QuickPlayMatched(
    Message, _RoomFieldsChecked, frozen=True, kw_only=True, tag="quick_play_matched"
):
    """A room was made for the waiting player (v1.4): it is seated there as by `join` (keep
    the token), and enters it with `rejoin`. The game starts by itself (`auto_start`)."""

    _room_fields: ClassVar[tuple[str, ...]] = ("room",)

    room: RoomId
    invite_code: Annotated[
        InviteCode | None,
        Meta(description="The room's invite code (quick-play rooms are private)."),
    ]
    player: PlayerId
    seat: Seat
    token: Token
    opponents: Annotated[
        tuple[Name, ...],
        Meta(max_length=MAX_SEATS, description="Names of the other people seated."),
    ] = ()
    computers: Annotated[
        tuple[ComputerSeat, ...],
        Meta(
            max_length=MAX_SEATS,
            description="Computers that filled the seats no person took in time; empty: only "
            "people.",
        ),
    ] = ()
    waited_ms: Annotated[
        int, Meta(ge=0, le=MAX_SAFE_INTEGER, description="How long the player waited.")
    ] = 0


# --------------------------------------------------------------------------------------------
# Room events (in the room log)
# --------------------------------------------------------------------------------------------


class Event(Message, _RoomFieldsChecked, frozen=True, kw_only=True):
    """Base of room events: every event has the room id and its position in the room log."""

    _room_fields: ClassVar[tuple[str, ...]] = ("room",)

    room: RoomId
    seq: Seq


class PlayerJoined(Event, frozen=True, kw_only=True, tag="player_joined"):
    """A player took a seat."""

    _room_fields: ClassVar[tuple[str, ...]] = ("room", "dice_commitment", "seed")

    player: PlayerId
    name: Name
    seat: Seat
    dice_commitment: Annotated[
        DiceCommitment | None,
        Meta(description="The room's dice commitment (v1.1); null from a v1.0 server."),
    ] = None
    seed: Annotated[
        ClientSeed | None, Meta(description="The seed the player gave in `join`, or null.")
    ] = None
    computer: Annotated[
        Level | None, Meta(description="The level of a computer player; null for a person (v1.2).")
    ] = None


class PlayerLeft(Event, frozen=True, kw_only=True, tag="player_left"):
    """A player left the room."""

    player: PlayerId
    seat: Seat
    forfeited: Annotated[bool, Meta(description="True if they left a game in progress.")]


class PlayerDisconnected(Event, frozen=True, kw_only=True, tag="player_disconnected"):
    """A player's connection was lost; the seat is kept for `rejoin`."""

    player: PlayerId
    away_deadline_ms: Annotated[
        UnixMs | None,
        Meta(
            description="Unix time (ms) from which the server plays the player's turns while "
            "they stay away (SPEC 10.6); null when that grace is off, under a turn timer or "
            "after the game (v1.3)."
        ),
    ] = None


class PlayerReconnected(Event, frozen=True, kw_only=True, tag="player_reconnected"):
    """A player took their seat back with `rejoin`."""

    player: PlayerId


class HostChanged(Event, frozen=True, kw_only=True, tag="host_changed"):
    """Another player became host (the previous host left)."""

    player: Annotated[PlayerId | None, Meta(description="New host; null if nobody is left.")]


class GameStarted(Event, frozen=True, kw_only=True, tag="game_started"):
    """The game started; `order` is the turn order, first player first."""

    _room_fields: ClassVar[tuple[str, ...]] = ("room", "dice_commitment")

    order: Annotated[
        PlayerIds,
        Meta(min_length=1, description="Turn order of the whole game, first player first."),
    ]
    first_player: Annotated[FirstPlayer, Meta(description="The room's first_player option.")]
    dice_commitment: Annotated[
        DiceCommitment | None,
        Meta(description="The room's dice commitment (v1.1); null from a v1.0 server."),
    ] = None
    seeds: Annotated[
        Annotated[tuple[Annotated[str, Meta(max_length=64)], ...], Meta(max_length=MAX_SEATS)]
        | None,
        Meta(
            description="Client seeds of the players seated at the start, in seat order, "
            '"" for a player who gave none (v1.1); null from a v1.0 server.',
        ),
    ] = None


class RollOff(Event, frozen=True, kw_only=True, tag="roll_off"):
    """One round of the roll-off that picks the first player (highest total starts)."""

    round: Annotated[int, Meta(ge=1, le=MAX_SAFE_INTEGER, description="Roll-off round, 1, 2, ...")]
    rolls: Annotated[
        tuple[RollOffRoll, ...],
        Meta(min_length=1, max_length=MAX_SEATS, description="One roll per contender, by seat."),
    ]
    contenders_next: Annotated[
        PlayerIds,
        Meta(description="Tied players who roll again; empty when the first player is decided."),
    ]


class Rolled(Event, frozen=True, kw_only=True, tag="rolled"):
    """The player on turn rolled."""

    player: PlayerId
    dice: Dice5
    roll_number: Annotated[int, Meta(ge=1, le=3, description="1, 2 or 3.")]
    rolls_left: Annotated[int, Meta(ge=0, le=2, description="3 - roll_number.")]
    held: Annotated[
        DiceIndexes,
        Meta(description="Indexes of the dice that were kept: `keep`, ascending, no repeats."),
    ]
    preview: PreviewList
    yahtzee_bonus_pending: Annotated[
        bool, Meta(description="Scoring now pays the +100 extra-Yahtzee bonus.")
    ]
    joker: Annotated[
        bool | None,
        Meta(
            description="The Joker rule applies to these dice (extra Yahtzee, YAHTZEE box "
            "filled, extra_yahtzees on); null only from servers older than this field."
        ),
    ] = None


class Held(Event, frozen=True, kw_only=True, tag="held"):
    """The held set of the player on turn changed."""

    player: PlayerId
    held: Annotated[DiceIndexes, Meta(description="The whole held set now, ascending.")]


class Scored(Event, frozen=True, kw_only=True, tag="scored"):
    """A box was filled; the turn is over."""

    player: PlayerId
    box: Annotated[Box, Meta(description="The box filled.")]
    points: Annotated[Points, Meta(description="Points written in the box.")]
    upper_bonus: Annotated[Count, Meta(description="The player's upper bonus now.")]
    yahtzee_bonus: Annotated[Count, Meta(description="The player's extra-Yahtzee bonus now.")]
    joker: Annotated[
        bool,
        Meta(description="Five of a kind scored with the YAHTZEE box filled (extra_yahtzees on)."),
    ]
    automatic: Annotated[
        bool, Meta(description="Chosen by the server (turn timer expired), not the player.")
    ]
    total: Annotated[Count, Meta(description="The player's grand total now.")]


class BonusTaken(Event, frozen=True, kw_only=True, tag="bonus_taken"):
    """The player took the +100 of an extra Yahtzee and filled no box; the turn is over
    (room option `bonus_turn`, v1.2)."""

    player: PlayerId
    yahtzee_bonus: Annotated[Count, Meta(description="The player's extra-Yahtzee bonus now.")]
    automatic: Annotated[
        bool, Meta(description="Chosen by the server (turn timer expired), not the player.")
    ]
    total: Annotated[Count, Meta(description="The player's grand total now.")]


class TurnChanged(Event, frozen=True, kw_only=True, tag="turn_changed"):
    """A turn begins."""

    player: PlayerId
    round: Round
    deadline_ms: Annotated[
        UnixMs | None, Meta(description="Unix time (ms) the turn times out, or null.")
    ]
    server_time_ms: Annotated[
        UnixMs | None,
        Meta(description="The server's clock (Unix ms) when the turn began, or null."),
    ] = None


class GameOver(Event, frozen=True, kw_only=True, tag="game_over"):
    """The game ended; `results` are ordered by place, then seat."""

    _room_fields: ClassVar[tuple[str, ...]] = ("room", "server_seed")

    results: Annotated[
        tuple[Standing, ...],
        Meta(min_length=1, max_length=MAX_SEATS, description="Every player, by place then seat."),
    ]
    server_seed: Annotated[
        ServerSeed | None,
        Meta(description="The room's server seed, revealed (v1.1); null from a v1.0 server."),
    ] = None


class RematchOffered(Event, frozen=True, kw_only=True, tag="rematch_offered"):
    """A player offered a rematch of the finished game (v1.3): join `rematch_room`."""

    _room_fields: ClassVar[tuple[str, ...]] = ("room", "rematch_room")

    player: Annotated[PlayerId, Meta(description="The player who offered it first.")]
    rematch_room: Annotated[RoomId, Meta(description="The rematch room.")]
    invite_code: Annotated[
        InviteCode | None,
        Meta(
            description="The rematch room's invite code when this room is private (the "
            "rematch is private too); null for a public room."
        ),
    ] = None


class RatingChange(Object, frozen=True, kw_only=True):
    """What one archived game did to one person's ratings, with its skill and luck (v1.4)."""

    player: PlayerId
    identity: Annotated[
        str, Meta(min_length=1, max_length=64, description="The remembered player's id.")
    ]
    before: Annotated[int, Meta(description="Result rating before the game (shown form).")]
    after: Annotated[int, Meta(description="Result rating after the game.")]
    provisional: Annotated[
        bool, Meta(description='The rating after is provisional (shown with a "?").')
    ]
    accuracy: Annotated[
        float | None,
        Meta(
            description="Percent of the optimal expectation kept (SPEC 13.17); null: not analysed."
        ),
    ] = None
    luck: Annotated[
        float | None,
        Meta(description="Points the dice gave above an average game (negative: fewer)."),
    ] = None
    decision_rating: Annotated[
        int | None, Meta(description="Decision rating after the game; null: not analysed.")
    ] = None


class RatingsChanged(Event, frozen=True, kw_only=True, tag="ratings"):
    """The ratings a rated room's game moved, once the game is archived (v1.4). An older
    client ignores this message type (section 14)."""

    family: Annotated[Rules, Meta(description="The rule family the ratings are kept for.")]
    players: Annotated[
        tuple[RatingChange, ...],
        Meta(max_length=MAX_SEATS, description="The rated persons, in seat order."),
    ]


class Spectators(Event, frozen=True, kw_only=True, tag="spectators"):
    """The number of spectators changed."""

    count: Count


ServerMessage: TypeAlias = (
    Welcome
    | Ack
    | Error
    | Pong
    | Snapshot
    | QuickPlayStatus
    | QuickPlayMatched
    | PlayerJoined
    | PlayerLeft
    | PlayerDisconnected
    | PlayerReconnected
    | HostChanged
    | GameStarted
    | RollOff
    | Rolled
    | Held
    | Scored
    | BonusTaken
    | TurnChanged
    | GameOver
    | Spectators
    | RematchOffered
    | RatingsChanged
)
"""Any message the server may send."""


def _by_type(*classes: type[Message]) -> Mapping[str, type[Any]]:
    return MappingProxyType({message_type(cls): cls for cls in classes})


def _by_type_of_result(*classes: type[Result]) -> Mapping[str, type[Any]]:
    return MappingProxyType({str(cls.__struct_config__.tag): cls for cls in classes})


CLIENT_MESSAGE_TYPES: Final[Mapping[str, type[ClientMessage]]] = _by_type(*get_args(ClientMessage))
"""Client message classes by wire `type`, in definition order."""

SERVER_MESSAGE_TYPES: Final[Mapping[str, type[ServerMessage]]] = _by_type(*get_args(ServerMessage))
"""Server message classes by wire `type`, in definition order."""

RESULT_TYPES: Final[Mapping[str, type[AckResult]]] = _by_type_of_result(*get_args(AckResult))
"""Result class of the ack of each command type (`ping` is answered by `pong`, not `ack`)."""


def make_ack(command: Command, result: AckResult | None = None, *, seq: int | None = None) -> Ack:
    """Build the `ack` answering ``command``: ``make_ack(join, JoinResult(...), seq=4)``.

    ``result`` defaults to the command's result class without fields (``RollResult()`` for a
    `roll`); commands whose result has fields must pass it. ``seq`` is the room's seq after the
    command (covering every event it caused), or ``None`` when the connection is not in a room.
    Raises ``ValueError`` for a `ping` (answered by `pong`) or a result of another command.
    """
    cls = RESULT_TYPES.get(message_type(command))
    if cls is None:
        raise ValueError(f"a {message_type(command)!r} is not answered by an ack")
    value = cls() if result is None else result  # type: ignore[call-arg]
    if not isinstance(value, cls):
        raise ValueError(f"a {message_type(command)!r} is answered by {cls.__name__}")
    return Ack(id=command.id, seq=seq, result=value)
