"""The contract is complete and agrees with the server: every message type, error code and HTTP
route has a SPEC section and a vector; the vectors' numbers are the server's defaults; v1.0
frames still decode (a v1.0 peer keeps working with v1.1)."""

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
V10 = VECTORS / "v1.0"

HTTP_API = (
    "/rooms",
    "/rooms/{id}",
    "/rooms/{id}/events",
    "/healthz",
    "/readyz",
    "/metrics",
    "/lobby",
)
"""The HTTP routes of the API (the lead's decision for v1.1, SPEC.md section 13)."""

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
            paths.add(re.sub(r"\{\w+\}", "{id}", path))
    return paths - NOT_API


def test_the_server_serves_exactly_the_documented_http_api() -> None:
    assert _server_paths() == set(HTTP_API)


@pytest.mark.parametrize("path", HTTP_API)
def test_every_http_route_has_a_spec_section_and_a_vector(path: str) -> None:
    titles = " ".join(title for number, title in headings() if number.startswith("13."))
    assert f"`GET {path}`" in titles
    assert path in {row["route"] for row in load(VECTORS / "http.json")["vectors"]}


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
    elif row["route"] == "/rooms/{id}/events":
        seqs = [event["seq"] for event in body["events"]]
        after_match = re.search(r"after=(\d+)", row["request"])
        after = int(after_match.group(1)) if after_match else 0
        assert seqs == list(range(after + 1, after + 1 + len(seqs)))
        assert body["next_after"] in (None, seqs[-1])
        for event in body["events"]:
            _validator("ServerMessage").validate(event)


# --------------------------------------------------------------------------------------------
# The numbers of the vectors and tables are the server's defaults
# --------------------------------------------------------------------------------------------


def _server_limits(settings: Settings) -> Limits:
    # As the server announces them in `welcome` (server/session.py).
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
# v1.0 peers keep working
# --------------------------------------------------------------------------------------------

V10_CLIENT = load(V10 / "client.json")["vectors"]
V10_SERVER = load(V10 / "server.json")["vectors"]
V10_INVALID = load(V10 / "invalid.json")["vectors"]
V10_COMMANDS = {row["value"]["id"]: row["type"] for row in V10_CLIENT}


def _is_v10_value_plus_defaults(decoded: dict[str, Any], v10: dict[str, Any]) -> bool:
    """Every v1.0 field keeps its value; fields new in v1.1 may be added (with defaults)."""
    for key, value in v10.items():
        if isinstance(value, dict) and isinstance(decoded.get(key), dict):
            if not _is_v10_value_plus_defaults(decoded[key], value):
                return False
        elif decoded.get(key) != value:
            return False
    return True


@pytest.mark.parametrize("encoding", list(Encoding))
@pytest.mark.parametrize("row", V10_CLIENT, ids=lambda row: row["name"])
def test_every_v10_client_vector_decodes_with_v11(row: dict[str, Any], encoding: Encoding) -> None:
    decoded = to_dict(decode_client(frame(row, encoding), encoding))
    assert _is_v10_value_plus_defaults(decoded, row["value"])


V10_LENIENT = [("client", row) for row in load(V10 / "client.json")["decode_only"]] + [
    ("server", row) for row in load(V10 / "server.json")["decode_only"]
]


@pytest.mark.parametrize(
    ("direction", "row"), V10_LENIENT, ids=[f"{d}-{row['name']}" for d, row in V10_LENIENT]
)
def test_every_v10_decode_only_frame_still_decodes(direction: str, row: dict[str, Any]) -> None:
    data = row["text"] if "text" in row else bytes.fromhex(row["binary_hex"])
    decode = decode_client if direction == "client" else decode_server
    decoded = to_dict(decode(data, Encoding(row["encoding"])))
    assert _is_v10_value_plus_defaults(decoded, row["value"])


@pytest.mark.parametrize("row", V10_INVALID, ids=lambda row: row["name"])
def test_every_v10_invalid_vector_is_still_refused_the_same_way(row: dict[str, Any]) -> None:
    data = row["text"] if "text" in row else bytes.fromhex(row["binary_hex"])
    with pytest.raises(DecodeError) as info:
        decode_client(data, Encoding(row["encoding"]), max_frame_bytes=row["max_frame_bytes"])
    assert (info.value.code, info.value.command_id) == (row["code"], row["id"])


@pytest.mark.parametrize("encoding", list(Encoding))
@pytest.mark.parametrize("row", V10_SERVER, ids=lambda row: row["name"])
def test_every_v10_server_vector_decodes_with_v11(row: dict[str, Any], encoding: Encoding) -> None:
    message = decode_server_liberally(frame(row, encoding), encoding, V10_COMMANDS.get)
    decoded = to_dict(message)
    if isinstance(message, Ack):
        assert decoded["result"].pop("command") == V10_COMMANDS[message.id]
    assert _is_v10_value_plus_defaults(decoded, row["value"])


def test_v10_acks_are_the_only_v10_server_vectors_that_need_liberal_reading() -> None:
    strict_failures = set()
    for row in V10_SERVER:
        try:
            decode_server(row["json"], Encoding.JSON)
        except DecodeError:
            strict_failures.add(row["type"])
    assert strict_failures == {"ack"}


@cache
def _v10_validator(direction: str) -> jsonschema.protocols.Validator:
    document = load(V10 / "schema.json")
    root = {"$defs": document["$defs"], "$ref": f"#/$defs/{direction}"}
    validator: jsonschema.protocols.Validator = jsonschema.validators.validator_for(document)(root)
    return validator


@pytest.mark.parametrize(
    "row", load(VECTORS / "server.json")["vectors"], ids=lambda row: str(row["name"])
)
def test_every_v11_server_vector_is_valid_for_a_v10_client(row: dict[str, Any]) -> None:
    # A v1.0 client accepts what its schema accepts (unknown fields are allowed there).
    _v10_validator("ServerMessage").validate(row["value"])


@pytest.mark.parametrize(
    "row", load(VECTORS / "client.json")["vectors"], ids=lambda row: str(row["name"])
)
def test_every_v11_client_vector_is_valid_v10_apart_from_new_optional_fields(
    row: dict[str, Any],
) -> None:
    _v10_validator("ClientMessage").validate(row["value"])
