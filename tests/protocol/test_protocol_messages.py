"""Message definitions, constants, negotiation helpers, error table, package boundary."""

import ast
import subprocess
import sys
import types
from pathlib import Path
from typing import get_args

import msgspec
import pytest

import protocol
import protocol.messages as pm
from protocol import (
    CLIENT_MESSAGE_TYPES,
    CLOSE_CODES,
    DEFAULT_LIMITS,
    ERROR_CODES,
    PROTOCOL_VERSION,
    RESULT_TYPES,
    SERVER_MESSAGE_TYPES,
    SUBPROTOCOL_REFUSAL_REASON,
    SUBPROTOCOLS,
    YAHTZEE_BOXES,
    YATZY_BOXES,
    Box,
    ClientMessage,
    CloseCode,
    Command,
    Encoding,
    ErrorCode,
    Event,
    Join,
    Ping,
    RoomState,
    Rules,
    ServerMessage,
    Snapshot,
    boxes_for,
    message_type,
    select_subprotocol,
    subprotocol_for,
)

PROTOCOL_DIR = Path(__file__).resolve().parents[2] / "protocol"
FORBIDDEN = {
    *("asyncio", "socket", "ssl", "selectors", "redis", "websockets", "starlette", "uvicorn"),
    "server",
}


def test_subprotocols() -> None:
    assert PROTOCOL_VERSION == 1
    assert dict(SUBPROTOCOLS) == {
        "yahtzee.v1.msgpack": Encoding.MSGPACK,
        "yahtzee.v1.json": Encoding.JSON,
    }
    assert list(SUBPROTOCOLS) == ["yahtzee.v1.msgpack", "yahtzee.v1.json"]
    assert subprotocol_for(Encoding.JSON) == "yahtzee.v1.json"
    assert subprotocol_for(Encoding.MSGPACK) == "yahtzee.v1.msgpack"


@pytest.mark.parametrize(
    ("offered", "selected"),
    [
        (["yahtzee.v1.json", "yahtzee.v1.msgpack"], "yahtzee.v1.json"),
        (["yahtzee.v2.json", "yahtzee.v1.msgpack"], "yahtzee.v1.msgpack"),
        (["chat", "yahtzee.v1.msgpack"], "yahtzee.v1.msgpack"),
        (["Yahtzee.v1.json"], None),
        ([], None),
    ],
)
def test_select_subprotocol_follows_the_client_preference(
    offered: list[str], selected: str | None
) -> None:
    assert select_subprotocol(offered) == selected


def test_refusal_reason_fits_a_close_frame_and_lists_the_subprotocols() -> None:
    assert len(SUBPROTOCOL_REFUSAL_REASON.encode()) <= 123
    for name in SUBPROTOCOLS:
        assert name in SUBPROTOCOL_REFUSAL_REASON


def test_close_codes() -> None:
    assert {int(code) for code in CloseCode} == {
        1000,
        1002,
        1007,
        1008,
        1009,
        1011,
        1012,
        1013,
        4000,
        4001,
    }
    assert set(CLOSE_CODES) == set(CloseCode)


def test_default_limits() -> None:
    assert DEFAULT_LIMITS.max_frame_bytes == 16384
    assert DEFAULT_LIMITS.max_messages_per_second == 20
    assert DEFAULT_LIMITS.burst == 60
    assert DEFAULT_LIMITS.max_name_length == 32
    assert DEFAULT_LIMITS.max_id_length == 64


def test_error_code_table_covers_the_contract() -> None:
    required = {
        *("malformed", "unknown_type", "missing_field", "invalid_field", "out_of_range"),
        *("frame_too_large", "too_deep", "string_too_long", "wrong_frame_type"),
        *("rate_limited", "room_not_found", "invite_required", "room_full", "bad_token"),
        *("not_in_room", "already_in_room", "spectator_cannot_act", "conflict"),
        *("internal_error", "unsupported", "wrong_phase", "game_not_started"),
        *("game_already_started", "game_over", "already_joined", "not_a_player", "not_host"),
        *("not_your_turn", "must_roll_first", "no_rolls_left", "invalid_dice"),
        *("nothing_to_roll", "category_taken", "box_not_allowed", "unknown_box", "invalid_name"),
        "stale_state",
        "unavailable",
    }
    assert required <= set(ERROR_CODES)
    assert set(ERROR_CODES) == {code.value for code in ErrorCode}
    retryable = {code for code, info in ERROR_CODES.items() if info.retryable}
    assert retryable == {"rate_limited", "conflict", "internal_error", "unavailable"}
    assert ERROR_CODES["stale_state"].category == "service"
    for info in ERROR_CODES.values():
        assert info.meaning.endswith(".")
        assert len(info.meaning) <= 1024


def test_registries_match_the_unions() -> None:
    assert list(CLIENT_MESSAGE_TYPES.values()) == list(get_args(ClientMessage))
    assert list(SERVER_MESSAGE_TYPES.values()) == list(get_args(ServerMessage))
    assert not set(CLIENT_MESSAGE_TYPES) & set(SERVER_MESSAGE_TYPES)
    for tag, cls in {**CLIENT_MESSAGE_TYPES, **SERVER_MESSAGE_TYPES}.items():
        assert message_type(cls) == tag
        assert cls.__struct_config__.tag_field == "type"
        assert cls.__struct_config__.frozen
        assert not cls.__struct_config__.forbid_unknown_fields
        assert cls.__doc__
    for cls in CLIENT_MESSAGE_TYPES.values():
        assert issubclass(cls, Command)
        assert cls.__struct_fields__[0] == "id"
    events = [cls for cls in SERVER_MESSAGE_TYPES.values() if issubclass(cls, Event)]
    assert len(events) == 16
    for cls in events:
        assert cls.__struct_fields__[:2] == ("room", "seq")


def test_every_command_but_ping_has_an_ack_result() -> None:
    assert set(RESULT_TYPES) == set(CLIENT_MESSAGE_TYPES) - {"ping"}


def test_messages_are_frozen_and_keyword_only() -> None:
    message = Ping(id="p")
    with pytest.raises(AttributeError):
        message.id = "q"  # type: ignore[misc]
    with pytest.raises(TypeError):
        Join("c", "r", "n")  # type: ignore[call-arg]
    assert message_type(message) == "ping"


def test_post_init_guards() -> None:
    with pytest.raises(ValueError, match="pattern in field `room`"):
        Join(id="c", room="room\n", name="n")
    with pytest.raises(ValueError, match="pattern in field `seed`"):
        Join(id="c", room="room", name="n", seed="lucky\n")
    state = msgspec.json.decode(
        b'{"id":"r","status":"lobby","public":true,"max_seats":2,"turn_seconds":0,"options":{},'
        b'"host":null,"players":[],"phase":"lobby","order":[],"current_player":null,"round":0,'
        b'"dice":[],"held":[],"roll_number":0,"rolls_left":0,"preview":[],'
        b'"turn_deadline_ms":null,"spectators":0}',
        type=RoomState,
    )
    with pytest.raises(ValueError, match="0 or 5"):
        msgspec.structs.replace(state, dice=(1, 2, 3))
    assert Snapshot(room="r", seq=0, state=state).state.dice == ()


def test_boxes() -> None:
    assert len(YAHTZEE_BOXES) == 13
    assert len(YATZY_BOXES) == 15
    assert set(YAHTZEE_BOXES) | set(YATZY_BOXES) == set(Box)
    assert boxes_for(Rules.YAHTZEE) == YAHTZEE_BOXES
    assert boxes_for(Rules.YATZY) == YATZY_BOXES
    assert boxes_for("yahtzee") == YAHTZEE_BOXES  # type: ignore[arg-type]
    assert str(Box.ACES) == "aces"


def test_package_reexports_its_public_api() -> None:
    for name in protocol.__all__:
        assert hasattr(protocol, name), name
    for module in ("codec", "errors", "messages", "transport", "types"):
        submodule = getattr(protocol, module)
        for name in submodule.__all__:
            assert name in protocol.__all__ or module == "types", name


def test_public_api_has_docstrings() -> None:
    for name in protocol.__all__:
        value = getattr(protocol, name)
        if isinstance(value, type | types.FunctionType):
            assert value.__doc__, name


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("path", sorted(PROTOCOL_DIR.glob("*.py")), ids=lambda path: path.name)
def test_no_io_or_server_imports_in_source(path: Path) -> None:
    assert not _imports(path) & FORBIDDEN


def test_importing_protocol_loads_no_io_library() -> None:
    code = (
        "import sys, protocol, protocol.codec, protocol.tools.examples, protocol.tools.generate;"
        "print(','.join(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=PROTOCOL_DIR.parent,
    )
    loaded = set(result.stdout.strip().split(","))
    assert not loaded & FORBIDDEN


def _string_patterns(kind: msgspec.inspect.Type) -> list[str]:
    if isinstance(kind, msgspec.inspect.Metadata):
        return _string_patterns(kind.type)
    if isinstance(kind, msgspec.inspect.StrType):
        return [kind.pattern] if kind.pattern else []
    if isinstance(kind, msgspec.inspect.UnionType):
        return [p for member in kind.types for p in _string_patterns(member)]
    return []


def test_every_anchored_string_field_is_checked_for_a_final_newline() -> None:
    """msgspec lets ``$`` match before a final newline; the structs whose fields have an
    anchored pattern list them in ``_room_fields`` and check them in ``__post_init__`` (a
    mixin only they have: a struct without one is built without a Python call)."""
    checked = 0
    for name, cls in vars(pm).items():
        if not (isinstance(cls, type) and issubclass(cls, msgspec.Struct)):
            continue
        anchored = {
            field.name
            for field in msgspec.inspect.type_info(cls).fields  # type: ignore[attr-defined]
            if any(p.endswith("$") for p in _string_patterns(field.type))
        }
        assert anchored <= set(cls._room_fields), name  # type: ignore[attr-defined]
        assert hasattr(cls, "__post_init__") == bool(anchored), name
        checked += bool(anchored)
    assert checked >= 10  # the room ids and client seeds of commands, results and events
