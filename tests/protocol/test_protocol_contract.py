"""The contract is complete and agrees with the server: every message type, error code and HTTP
route has a SPEC section and a vector; the vectors' numbers are the server's defaults; v1.0 and
v1.1 frames still decode (older peers keep working with v1.2)."""

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from starlette.routing import Route

from protocol import (
    CLIENT_MESSAGE_TYPES,
    DEFAULT_HEARTBEAT_SECONDS,
    DEFAULT_LIMITS,
    ERROR_CODES,
    RESULT_TYPES,
    SERVER_MESSAGE_TYPES,
    Ack,
    DecodeError,
    Encoding,
    Limits,
    decode_client,
    decode_server,
    decode_server_liberally,
    to_dict,
)
from server import app as server_app
from server import game
from server.settings import Settings

PROTOCOL_DIR = Path(__file__).resolve().parents[2] / "protocol"
VECTORS = PROTOCOL_DIR / "vectors"

HTTP_API = (
    "/rooms",
    "/rooms/{id}",
    "/rooms/{id}/events",
    "/rooms/{id}/analysis",
    "/healthz",
    "/readyz",
    "/metrics",
    "/lobby",
    "/players/me",
    "/players/{id}",
    "/players/{id}/games",
    "/players/{id}/turns",
    "/games/export",
    "/games/{id}",
    "/leaderboards/{board}",
    "/tournaments",
    "/tournaments/{id}",
    "/tournaments/{id}/standings",
    "/tournaments/{id}/entries/{room}/events",
)
"""The HTTP routes of the API (SPEC.md section 13; the analysis since v1.2, the lobby stream,
the leaderboards since v1.4)."""

NOT_API = {"/", "/static", "/ws"}  # the web page, its files and the WebSocket endpoint


def load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


@cache
def spec() -> str:
    return (PROTOCOL_DIR / "SPEC.md").read_text(encoding="utf-8")


@cache
def spec_prose() -> str:
    """SPEC.md without its generated blocks: what a human wrote about each thing."""
    return re.sub(r"<!-- BEGIN GENERATED: .*?<!-- END GENERATED: [^>]* -->", "", spec(), flags=re.S)


def headings() -> list[str]:
    return re.findall(r"^#{2,4} (\d+(?:\.\d+)*) (.+)$", spec(), flags=re.M)  # type: ignore[return-value]


def frame(row: dict[str, Any], encoding: Encoding) -> str | bytes:
    return row["json"] if encoding is Encoding.JSON else bytes.fromhex(row["msgpack_hex"])


# --------------------------------------------------------------------------------------------
# Every message type, error code and route has a section and a vector
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("tag", [*CLIENT_MESSAGE_TYPES, *SERVER_MESSAGE_TYPES])
def test_every_message_type_has_a_numbered_spec_section(tag: str) -> None:
    titles = [title for _, title in headings()]
    assert f"`{tag}`" in titles
    assert f"<!-- BEGIN GENERATED: message:{tag} -->" in spec()


@pytest.mark.parametrize("tag", [*CLIENT_MESSAGE_TYPES, *SERVER_MESSAGE_TYPES])
def test_every_message_type_has_a_vector(tag: str) -> None:
    file = "client.json" if tag in CLIENT_MESSAGE_TYPES else "server.json"
    assert tag in {row["type"] for row in load(VECTORS / file)["vectors"]}


@pytest.mark.parametrize("command", list(RESULT_TYPES))
def test_every_command_has_an_ack_vector_with_its_result(command: str) -> None:
    acks = [row for row in load(VECTORS / "server.json")["vectors"] if row["type"] == "ack"]
    assert command in {row["value"]["result"]["command"] for row in acks}


@pytest.mark.parametrize("code", list(ERROR_CODES))
def test_every_error_code_is_explained_in_the_prose_and_has_a_vector(code: str) -> None:
    assert f"`{code}`" in spec_prose(), f"{code} is only in the generated table"
    errors = [row for row in load(VECTORS / "server.json")["vectors"] if row["type"] == "error"]
    assert code in {row["value"]["code"] for row in errors}


def _server_paths() -> set[str]:
    paths = set()
    for route in server_app.routes():
        path = getattr(route, "path", None)
        if isinstance(path, str) and (not isinstance(route, Route) or "GET" in route.methods):
            paths.add(re.sub(r"\{\w+_id\}", "{id}", path))  # /leaderboards/{board} stays
    return paths - NOT_API


def test_the_server_serves_exactly_the_documented_http_api() -> None:
    assert _server_paths() == set(HTTP_API)


@pytest.mark.parametrize("path", HTTP_API)
def test_every_http_route_has_a_spec_section_and_a_vector(path: str) -> None:
    titles = " ".join(title for number, title in headings() if number.startswith("13."))
    assert f"`GET {path}`" in titles
    assert path in {row["route"] for row in load(VECTORS / "http.json")["vectors"]}


PROFILE_FIELDS = (
    "player", "name", "since_ms", "linked", "games", "wins", "average_score", "best_score",
    "yahtzees", "yahtzee_rate", "upper_bonus_rate", "accuracy", "ratings",
)  # fmt: skip
"""The fields of a player's profile (v1.3, SPEC.md 13.10; v1.4: ``ratings``)."""
PROFILE_RATING_FIELDS = (
    "rating", "rating_provisional", "rated_games", "decision_rating", "decision_provisional",
    "analysed_games", "accuracy", "luck",
)  # fmt: skip
"""The fields of one rule family's ratings in a profile (v1.4, SPEC.md 13.10, 13.17)."""
TURN_ENTRY_FIELDS = ("room", "my_turn", "deadline_ms", "round", "players", "on_turn")
"""The fields of an entry of `GET /players/{id}/turns` (v1.4, SPEC.md 13.14)."""
GAME_ROW_FIELDS = (
    "game", "room", "outcome", "public", "options", "finished_ms", "players", "seat", "place",
    "total", "forfeited", "accuracy",
)  # fmt: skip
"""The fields of a row of a player's games (v1.3, SPEC.md 13.11)."""
ARCHIVED_GAME_FIELDS = (
    "game", "room", "game_no", "outcome", "public", "name", "options", "seats", "turn_seconds",
    "hints", "created_ms", "finished_ms", "dice_commitment", "server_seed", "player_seeds",
    "players", "event_count", "events", "rated",
)  # fmt: skip
"""The fields of an archived game (v1.3, SPEC.md 13.12)."""
ARCHIVED_SEAT_FIELDS = (
    "seat", "player", "name", "computer", "identity", "place", "total", "forfeited", "scores",
    "yahtzee_bonuses", "upper_bonus", "yahtzees", "accuracy", "skill",
)  # fmt: skip
SKILL_FIELDS = (
    "decisions", "expected_start", "total_loss", "luck", "accuracy", "rating_before",
    "rating_after",
)  # fmt: skip
LEADERBOARD_ROW_FIELDS = ("rank", "player", "name", "value", "provisional")
TOURNAMENT_FIELDS = (
    "tournament", "name", "options", "starts_ms", "ends_ms", "status", "entry_limit", "entries",
    "public", "attempts", "rated", "daily", "watch_delay_seconds", "dice_commitment", "seed",
    "optimal_score",
)  # fmt: skip
"""The fields of a tournament (v1.4, SPEC.md 13.20)."""
LIVE_STANDING_FIELDS = ("place", "name", "score")
FINAL_STANDING_FIELDS = (
    *LIVE_STANDING_FIELDS, "player", "finished", "accuracy", "room", "invite_code",
)  # fmt: skip
"""The fields of a row of the standings, open and final (v1.4, SPEC.md 13.22)."""


def _check_tournament(body: dict[str, Any]) -> None:
    assert set(body) == set(TOURNAMENT_FIELDS)
    _validator("RoomOptions").validate(body["options"])
    assert body["status"] in ("upcoming", "open", "closed")
    assert (body["seed"] is None) is (body["status"] != "closed")  # never before the end


def _check_archived_game(body: dict[str, Any]) -> None:
    assert set(body) == set(ARCHIVED_GAME_FIELDS)
    assert body["outcome"] in ("finished", "abandoned")
    _validator("RoomOptions").validate(body["options"])
    for seat in body["players"]:
        assert set(seat) == set(ARCHIVED_SEAT_FIELDS)
        skill = seat["skill"]
        if skill is not None:  # luck = final - V0 + loss (SPEC.md 13.17)
            assert set(skill) == set(SKILL_FIELDS)
            assert skill["luck"] == pytest.approx(
                seat["total"] - skill["expected_start"] + skill["total_loss"], abs=1e-3
            )
    for event in body["events"]:
        _validator("ServerMessage").validate(event)


@cache
def _validator(name: str) -> jsonschema.protocols.Validator:
    document = load(PROTOCOL_DIR / "schema.json")
    root = {"$defs": document["$defs"], "$ref": f"#/$defs/{name}"}
    validator: jsonschema.protocols.Validator = jsonschema.validators.validator_for(document)(root)
    return validator


@pytest.mark.parametrize(
    "row", load(VECTORS / "http.json")["vectors"], ids=lambda row: str(row["name"])
)
def test_http_vectors_carry_protocol_objects(row: dict[str, Any]) -> None:
    body = row["body"]
    assert row["request"].startswith("GET /")
    assert "invite" not in row["request"].lower(), "invite codes never go in URLs"
    if row["route"] == "/readyz":
        assert body["ready"] is (row["status"] == 200)
    elif row["status"] >= 400:
        assert body["code"] in ERROR_CODES
    elif row["route"] == "/rooms":
        for summary in body["rooms"]:
            _validator("RoomSummary").validate(summary)
    elif row["route"] == "/lobby":
        assert body.startswith("retry: ")
        events = [block for block in body.split("\n\n") if block.startswith("event: rooms\n")]
        assert events
        assert body.endswith("\n\n")
        for block in events:
            _, data = block.split("\n")
            assert data.startswith("data: ")
            for summary in json.loads(data.removeprefix("data: "))["rooms"]:
                _validator("RoomSummary").validate(summary)
    elif row["route"] == "/rooms/{id}":
        _validator("Snapshot").validate(body)
    elif row["route"] in ("/rooms/{id}/events", "/tournaments/{id}/entries/{room}/events"):
        seqs = [event["seq"] for event in body["events"]]
        after_match = re.search(r"after=(\d+)", row["request"])
        after = int(after_match.group(1)) if after_match else 0
        assert seqs == list(range(after + 1, after + 1 + len(seqs)))
        assert body["next_after"] in (None, seqs[-1])
        for event in body["events"]:
            _validator("ServerMessage").validate(event)
    elif row["route"] == "/rooms/{id}/analysis":
        _validator("GameAnalysis").validate(body)
        for player in body["players"]:
            assert player["total_loss"] == pytest.approx(
                sum(d["loss"] for d in player["decisions"])
            )
            for decision in player["decisions"]:
                assert decision["loss"] == pytest.approx(
                    decision["best_expected"] - decision["chosen_expected"]
                )
    elif row["route"] == "/players/me":
        assert set(body) == {"player", "name", "linked"}
    elif row["route"] == "/players/{id}":
        assert set(body) == set(PROFILE_FIELDS)
        for family, ratings in body["ratings"].items():
            assert family in ("yahtzee", "yatzy")
            assert set(ratings) == set(PROFILE_RATING_FIELDS)
    elif row["route"] == "/players/{id}/games":
        assert set(body) == {"player", "games", "next_before"}
        for game_row in body["games"]:
            assert set(game_row) == set(GAME_ROW_FIELDS)
    elif row["route"] == "/players/{id}/turns":
        assert set(body) == {"player", "server_time_ms", "turns", "games"}
        for entry in body["turns"] + body["games"]:
            assert set(entry) == set(TURN_ENTRY_FIELDS)
            assert entry["my_turn"] is (entry in body["turns"])
    elif row["route"] == "/games/{id}":
        _check_archived_game(body)
    elif row["route"] == "/games/export":
        for line in body.splitlines():
            _check_archived_game(json.loads(line))
    elif row["route"] == "/leaderboards/{board}":
        assert set(body) == {"board", "family", "period", "players", "rows", "references"}
        ranks = [r["rank"] for r in body["rows"]]
        assert ranks == list(range(ranks[0], ranks[0] + len(ranks)))
        values = [r["value"] for r in body["rows"]]
        assert values == sorted(values, reverse=True)
        for board_row in body["rows"]:
            assert set(board_row) == set(LEADERBOARD_ROW_FIELDS)
    elif row["route"] == "/tournaments":
        for tournament in body["tournaments"]:
            _check_tournament(tournament)
    elif row["route"] == "/tournaments/{id}":
        _check_tournament(body)
    elif row["route"] == "/tournaments/{id}/standings":
        assert set(body) == {"tournament", "status", "final", "optimal_score", "entries"}
        if body["final"]:
            assert all(set(entry) == set(FINAL_STANDING_FIELDS) for entry in body["entries"])
        else:  # the room of a live entry only to watch it with a delay (13.23), no invite code
            live = ({*LIVE_STANDING_FIELDS}, {*LIVE_STANDING_FIELDS, "room"})
            assert all(set(entry) in live for entry in body["entries"])
    elif row["route"] not in ("/healthz", "/metrics"):  # pragma: no cover - a new route
        raise AssertionError(f"no check for {row['route']}")


# --------------------------------------------------------------------------------------------
# The numbers of the vectors and tables are the server's defaults
# --------------------------------------------------------------------------------------------


def _server_limits(settings: Settings) -> Limits:
    # As the server announces them in `welcome` (server/transport/session.py).
    return Limits(
        max_frame_bytes=settings.max_frame_bytes,
        max_messages_per_second=max(1, int(settings.rate_per_second)),
        burst=settings.rate_burst,
        max_name_length=min(settings.max_name_length, game.MAX_NAME_LENGTH),
        max_id_length=64,
        send_queue_limit=settings.send_queue_size,
    )


def test_default_limits_are_the_server_defaults() -> None:
    settings = Settings()
    assert _server_limits(settings) == DEFAULT_LIMITS
    assert round(settings.heartbeat_seconds) == DEFAULT_HEARTBEAT_SECONDS


@pytest.mark.parametrize("name", ["welcome", "welcome_msgpack"])
def test_welcome_vectors_announce_the_server_defaults(name: str) -> None:
    row = next(r for r in load(VECTORS / "server.json")["vectors"] if r["name"] == name)
    assert row["value"]["limits"] == to_dict(_server_limits(Settings()))
    assert row["value"]["heartbeat_seconds"] == round(Settings().heartbeat_seconds)


# --------------------------------------------------------------------------------------------
# Older peers keep working: the vectors of every earlier minor version
# --------------------------------------------------------------------------------------------

OLD_VERSIONS = ("v1.0", "v1.1", "v1.2", "v1.3")
"""Earlier minor versions whose vectors are kept, unchanged, in vectors/<version>/."""


def _old(version: str, file: str, key: str = "vectors") -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = load(VECTORS / version / file)[key]
    return rows


def _each(file: str, key: str = "vectors") -> list[tuple[str, dict[str, Any]]]:
    return [(version, row) for version in OLD_VERSIONS for row in _old(version, file, key)]


def _ids(pairs: list[tuple[str, dict[str, Any]]]) -> list[str]:
    return [f"{version}-{row['name']}" for version, row in pairs]


def _commands(version: str) -> dict[str, str]:
    return {row["value"]["id"]: row["type"] for row in _old(version, "client.json")}


def _is_old_value_plus_defaults(decoded: Any, old: Any) -> bool:
    """Every field of the old value keeps its value, in nested objects and in the objects of
    arrays too; fields added since may be present (with their defaults)."""
    if isinstance(old, dict):
        if not isinstance(decoded, dict):
            return False
        return all(
            key in decoded and _is_old_value_plus_defaults(decoded[key], value)
            for key, value in old.items()
        )
    if isinstance(old, list):
        return (
            isinstance(decoded, list)
            and len(decoded) == len(old)
            and all(map(_is_old_value_plus_defaults, decoded, old))
        )
    return bool(decoded == old) and type(decoded) is type(old)


def test_the_old_value_check_sees_a_changed_value_inside_an_array() -> None:
    old = {"rooms": [{"room": "a", "seats": 2}]}
    assert _is_old_value_plus_defaults({"rooms": [{"room": "a", "seats": 2, "hints": None}]}, old)
    assert not _is_old_value_plus_defaults({"rooms": [{"room": "a", "seats": 3}]}, old)
    assert not _is_old_value_plus_defaults({"rooms": [{"room": "a"}]}, old)
    assert not _is_old_value_plus_defaults({"rooms": []}, old)
    assert not _is_old_value_plus_defaults({"n": 1.0}, {"n": 1})


def test_every_old_version_is_kept_complete() -> None:
    for version in OLD_VERSIONS:
        for file in ("client.json", "server.json", "invalid.json", "schema.json"):
            assert (VECTORS / version / file).is_file(), f"{version}/{file}"
    assert load(VECTORS / "v1.1" / "client.json")["protocol_minor"] == 1
    assert load(VECTORS / "v1.2" / "client.json")["protocol_minor"] == 2


OLD_CLIENT = _each("client.json")


@pytest.mark.parametrize("encoding", list(Encoding))
@pytest.mark.parametrize(("version", "row"), OLD_CLIENT, ids=_ids(OLD_CLIENT))
def test_every_old_client_vector_still_decodes(
    version: str, row: dict[str, Any], encoding: Encoding
) -> None:
    decoded = to_dict(decode_client(frame(row, encoding), encoding))
    assert _is_old_value_plus_defaults(decoded, row["value"])


OLD_LENIENT = [
    (version, direction, row)
    for version in OLD_VERSIONS
    for direction in ("client", "server")
    for row in _old(version, f"{direction}.json", "decode_only")
]


@pytest.mark.parametrize(
    ("version", "direction", "row"),
    OLD_LENIENT,
    ids=[f"{v}-{d}-{row['name']}" for v, d, row in OLD_LENIENT],
)
def test_every_old_decode_only_frame_still_decodes(
    version: str, direction: str, row: dict[str, Any]
) -> None:
    data = row["text"] if "text" in row else bytes.fromhex(row["binary_hex"])
    decode = decode_client if direction == "client" else decode_server
    decoded = to_dict(decode(data, Encoding(row["encoding"])))
    assert _is_old_value_plus_defaults(decoded, row["value"])


OLD_INVALID = _each("invalid.json")


@pytest.mark.parametrize(("version", "row"), OLD_INVALID, ids=_ids(OLD_INVALID))
def test_every_old_invalid_vector_is_still_refused_the_same_way(
    version: str, row: dict[str, Any]
) -> None:
    data = row["text"] if "text" in row else bytes.fromhex(row["binary_hex"])
    with pytest.raises(DecodeError) as info:
        decode_client(data, Encoding(row["encoding"]), max_frame_bytes=row["max_frame_bytes"])
    assert (info.value.code, info.value.command_id) == (row["code"], row["id"])


OLD_SERVER = _each("server.json")


@pytest.mark.parametrize("encoding", list(Encoding))
@pytest.mark.parametrize(("version", "row"), OLD_SERVER, ids=_ids(OLD_SERVER))
def test_every_old_server_vector_still_decodes(
    version: str, row: dict[str, Any], encoding: Encoding
) -> None:
    commands = _commands(version)
    message = decode_server_liberally(frame(row, encoding), encoding, commands.get)
    decoded = to_dict(message)
    if isinstance(message, Ack) and "command" not in row["value"]["result"]:
        assert decoded["result"].pop("command") == commands[message.id]
    assert _is_old_value_plus_defaults(decoded, row["value"])


@pytest.mark.parametrize("version", OLD_VERSIONS)
def test_only_v10_acks_need_liberal_reading(version: str) -> None:
    strict_failures = set()
    for row in _old(version, "server.json"):
        try:
            decode_server(row["json"], Encoding.JSON)
        except DecodeError:
            strict_failures.add(row["type"])
    assert strict_failures == ({"ack"} if version == "v1.0" else set())


@cache
def _old_schema(version: str) -> dict[str, Any]:
    return load(VECTORS / version / "schema.json")


@cache
def _old_validator(version: str, direction: str) -> jsonschema.protocols.Validator:
    document = _old_schema(version)
    root = {"$defs": document["$defs"], "$ref": f"#/$defs/{direction}"}
    validator: jsonschema.protocols.Validator = jsonschema.validators.validator_for(document)(root)
    return validator


def _old_types(version: str, direction: str) -> set[str]:
    """The message types of an old version's schema, in one direction."""
    mapping: dict[str, str] = _old_schema(version)["$defs"][direction]["discriminator"]["mapping"]
    return set(mapping)


def _reaches_an_old_client(version: str, value: dict[str, Any]) -> bool:
    """Whether an old client can receive this server message: not a new message type (old
    clients ignore those, 4.3) and not the ack of a new command (they never send one). New
    error codes reach them (any string is a valid code in every version's schema)."""
    if value["type"] not in _old_types(version, "ServerMessage"):
        return False
    if value["type"] == "ack":
        return value["result"]["command"] in _old_types(version, "ClientMessage")
    return True


SERVER_ROWS = load(VECTORS / "server.json")["vectors"]


@pytest.mark.parametrize("version", OLD_VERSIONS)
@pytest.mark.parametrize("row", SERVER_ROWS, ids=lambda row: str(row["name"]))
def test_every_server_vector_an_old_client_can_get_is_valid_for_it(
    version: str, row: dict[str, Any]
) -> None:
    # An old client accepts what its schema accepts (unknown fields are allowed there).
    if _reaches_an_old_client(version, row["value"]):
        _old_validator(version, "ServerMessage").validate(row["value"])


def test_new_server_messages_are_only_those_old_clients_ignore_or_never_ask_for() -> None:
    new = {row["type"] for row in SERVER_ROWS if not _reaches_an_old_client("v1.1", row["value"])}
    # v1.2, v1.3, v1.4 events (`ratings`: old clients ignore an unknown type, SPEC.md 14);
    # v1.4: messages only a connection that sent `quick_play` gets
    assert new == {
        "bonus_taken",
        "rematch_offered",
        "ratings",
        "ack",
        "quick_play_status",
        "quick_play_matched",
    }
    assert _reaches_an_old_client("v1.1", {"type": "error", "code": "hints_disabled"})


CLIENT_ROWS = load(VECTORS / "client.json")["vectors"]


@pytest.mark.parametrize("version", OLD_VERSIONS)
@pytest.mark.parametrize("row", CLIENT_ROWS, ids=lambda row: str(row["name"]))
def test_every_client_vector_of_an_old_command_is_valid_old_apart_from_new_optional_fields(
    version: str, row: dict[str, Any]
) -> None:
    if row["type"] in _old_types(version, "ClientMessage"):
        _old_validator(version, "ClientMessage").validate(row["value"])
