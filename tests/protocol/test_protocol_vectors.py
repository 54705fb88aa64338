"""Golden vectors, JSON Schema and SPEC.md: byte-for-byte checks and drift detection."""

import itertools
import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from protocol import (
    CLIENT_MESSAGE_TYPES,
    ERROR_CODES,
    SERVER_MESSAGE_TYPES,
    CloseCode,
    DecodeError,
    Encoding,
    decode_client,
    decode_server,
    encode,
    to_dict,
)
from protocol.tools import generate

PROTOCOL_DIR = Path(__file__).resolve().parents[2] / "protocol"
VECTORS = PROTOCOL_DIR / "vectors"


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((VECTORS / name).read_text(encoding="utf-8"))
    return data


def canonical(name: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = load(name)["vectors"]
    return rows


def ids(rows: list[dict[str, Any]]) -> list[str]:
    return [row["name"] for row in rows]


def frame(row: dict[str, Any]) -> str | bytes:
    return row["text"] if "text" in row else bytes.fromhex(row["binary_hex"])


CLIENT = canonical("client.json")
SERVER = canonical("server.json")
INVALID = canonical("invalid.json")
LENIENT = [("client", row) for row in load("client.json")["decode_only"]] + [
    ("server", row) for row in load("server.json")["decode_only"]
]

# --------------------------------------------------------------------------------------------
# Generated files are up to date
# --------------------------------------------------------------------------------------------


@cache
def expected_outputs() -> dict[Path, str]:
    return generate.outputs()


@pytest.mark.parametrize(
    "path",
    [
        PROTOCOL_DIR / "schema.json",
        VECTORS / "client.json",
        VECTORS / "server.json",
        VECTORS / "invalid.json",
        VECTORS / "http.json",
        PROTOCOL_DIR / "SPEC.md",
        PROTOCOL_DIR / "SPEC-APPENDIX.md",
    ],
    ids=lambda path: path.name,
)
def test_generated_file_is_up_to_date(path: Path) -> None:
    expected = expected_outputs()[path]
    actual = path.read_text(encoding="utf-8")
    assert actual == expected, f"{path.name} is stale: run `python -m protocol.tools.generate`"


def test_generator_check_mode_reports_nothing_stale(capsys: pytest.CaptureFixture[str]) -> None:
    assert generate.main(["--check"]) == 0
    assert capsys.readouterr().out == ""


# --------------------------------------------------------------------------------------------
# The codec against the vectors, byte for byte
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("row", CLIENT, ids=ids(CLIENT))
def test_client_vector(row: dict[str, Any]) -> None:
    check_canonical(row, decode_client)


@pytest.mark.parametrize("row", SERVER, ids=ids(SERVER))
def test_server_vector(row: dict[str, Any]) -> None:
    check_canonical(row, decode_server)


def check_canonical(row: dict[str, Any], decode: Any) -> None:
    binary = bytes.fromhex(row["msgpack_hex"])
    from_json = decode(row["json"], Encoding.JSON)
    from_msgpack = decode(binary, Encoding.MSGPACK)
    assert from_json == from_msgpack
    assert to_dict(from_json) == row["value"]
    assert encode(from_json, Encoding.JSON) == row["json"]
    assert encode(from_msgpack, Encoding.MSGPACK) == binary
    assert row["type"] == row["value"]["type"]
    assert json.loads(row["json"]) == row["value"]


@pytest.mark.parametrize(("direction", "row"), LENIENT, ids=[row["name"] for _, row in LENIENT])
def test_decode_only_vector(direction: str, row: dict[str, Any]) -> None:
    decode = decode_client if direction == "client" else decode_server
    message = decode(frame(row), Encoding(row["encoding"]))
    assert to_dict(message) == row["value"]


@pytest.mark.parametrize("row", INVALID, ids=ids(INVALID))
def test_invalid_vector(row: dict[str, Any]) -> None:
    with pytest.raises(DecodeError) as info:
        decode_client(frame(row), Encoding(row["encoding"]), max_frame_bytes=row["max_frame_bytes"])
    assert (info.value.code, info.value.command_id) == (row["code"], row["id"])


def test_every_message_type_has_a_vector() -> None:
    assert {row["type"] for row in CLIENT} == set(CLIENT_MESSAGE_TYPES)
    assert {row["type"] for row in SERVER} == set(SERVER_MESSAGE_TYPES)


def test_every_decode_error_code_has_an_invalid_vector() -> None:
    decode_codes = {code for code, info in ERROR_CODES.items() if info.category == "decode"}
    assert {row["code"] for row in INVALID} == decode_codes


def test_vector_names_are_unique() -> None:
    for rows in (CLIENT, SERVER, INVALID, [row for _, row in LENIENT]):
        names = ids(rows)
        assert len(names) == len(set(names))


# --------------------------------------------------------------------------------------------
# JSON Schema
# --------------------------------------------------------------------------------------------


@cache
def validator(definition: str) -> Any:
    document = json.loads((PROTOCOL_DIR / "schema.json").read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(document)
    cls.check_schema(document)
    return cls({"$defs": document["$defs"], "$ref": f"#/$defs/{definition}"})


@pytest.mark.parametrize("row", CLIENT, ids=ids(CLIENT))
def test_client_vector_validates_against_schema(row: dict[str, Any]) -> None:
    validator("ClientMessage").validate(row["value"])
    assert not validator("ServerMessage").is_valid(row["value"])


@pytest.mark.parametrize("row", SERVER, ids=ids(SERVER))
def test_server_vector_validates_against_schema(row: dict[str, Any]) -> None:
    validator("ServerMessage").validate(row["value"])


@pytest.mark.parametrize(("direction", "row"), LENIENT, ids=[row["name"] for _, row in LENIENT])
def test_decode_only_values_validate_against_schema(direction: str, row: dict[str, Any]) -> None:
    definition = "ClientMessage" if direction == "client" else "ServerMessage"
    validator(definition).validate(row["value"])
    if "text" in row:  # the non-canonical input itself is also valid
        validator(definition).validate(json.loads(row["text"]))


# Field-level rejections the schema can express. The rest are syntax, size, depth, and the
# two differences documented in SPEC.md section 13: JSON Schema's `integer` accepts 4.0, and
# Python's `$` (used by Python validators) matches before a final newline.
SCHEMA_EXPRESSIBLE = {
    "unknown_type",
    "missing_field",
    "invalid_field",
    "out_of_range",
    "string_too_long",
}


@pytest.mark.parametrize(
    "row",
    [
        row
        for row in INVALID
        if row["code"] in SCHEMA_EXPRESSIBLE
        and "text" in row
        and row["name"]
        not in {
            "invalid_field_float_for_int",
            "invalid_field_room_trailing_newline",
        }
    ],
    ids=lambda row: row["name"],
)
def test_schema_rejects_what_the_codec_rejects(row: dict[str, Any]) -> None:
    assert not validator("ClientMessage").is_valid(json.loads(row["text"]))


def test_schema_describes_every_field() -> None:
    document = json.loads((PROTOCOL_DIR / "schema.json").read_text(encoding="utf-8"))
    undocumented = [
        f"{name}.{field}"
        for name, component in document["$defs"].items()
        for field, node in component.get("properties", {}).items()
        if field != "type" and not node.get("description")
    ]
    assert undocumented == []
    for name, component in document["$defs"].items():
        if name not in ("ClientMessage", "ServerMessage"):
            assert component.get("description"), name


def test_schema_tags_match_the_registries() -> None:
    document = json.loads((PROTOCOL_DIR / "schema.json").read_text(encoding="utf-8"))
    for definition, table in (
        ("ClientMessage", CLIENT_MESSAGE_TYPES),
        ("ServerMessage", SERVER_MESSAGE_TYPES),
    ):
        mapping = document["$defs"][definition]["discriminator"]["mapping"]
        assert set(mapping) == set(table)


# --------------------------------------------------------------------------------------------
# SPEC.md
# --------------------------------------------------------------------------------------------

SPEC = (PROTOCOL_DIR / "SPEC.md").read_text(encoding="utf-8")


def test_spec_has_the_numbered_sections() -> None:
    numbers = re.findall(r"^## (\d+)\. ", SPEC, flags=re.MULTILINE)
    assert numbers == [str(n) for n in range(1, 16)]
    assert "\n## 1. Quick start\n" in SPEC


@pytest.mark.parametrize("tag", [*CLIENT_MESSAGE_TYPES, *SERVER_MESSAGE_TYPES])
def test_spec_documents_every_message_type(tag: str) -> None:
    assert re.search(rf"^#{{3,4}} [\d.]+ `{tag}`$", SPEC, flags=re.MULTILINE)
    assert f"<!-- BEGIN GENERATED: message:{tag} -->" in SPEC


def test_spec_lists_every_error_and_close_code() -> None:
    appendix = (PROTOCOL_DIR / "SPEC-APPENDIX.md").read_text(encoding="utf-8")
    for code in ERROR_CODES:  # the table is in the appendix (G), 9.1 links to it
        assert f"| `{code}` |" in appendix
    for close in CloseCode:
        assert f"| {int(close)} |" in SPEC


def test_fill_spec_rejects_broken_templates() -> None:
    blocks = {"a": "x"}
    assert generate.fill_spec(
        "<!-- BEGIN GENERATED: a -->\nold\n<!-- END GENERATED: a -->\n", blocks
    ) == ("<!-- BEGIN GENERATED: a -->\nx\n<!-- END GENERATED: a -->\n")
    with pytest.raises(ValueError, match="unknown"):
        generate.fill_spec("<!-- BEGIN GENERATED: b -->\n<!-- END GENERATED: b -->", blocks)
    with pytest.raises(ValueError, match="no END"):
        generate.fill_spec("<!-- BEGIN GENERATED: a -->\n", blocks)
    with pytest.raises(ValueError, match="lacks"):
        generate.fill_spec("no blocks", blocks)


def test_walkthrough_seqs_are_consecutive() -> None:
    from protocol import Event
    from protocol.tools.examples import WALKTHROUGH

    seqs = [step.message.seq for step in WALKTHROUGH if isinstance(step.message, Event)]
    # Events appear in log order; the repeated seq is the replay to Bob; one gap is the elision.
    distinct = sorted(set(seqs))
    gaps = [(a, b) for a, b in itertools.pairwise(distinct) if b != a + 1]
    assert len(gaps) == 1
    assert seqs == sorted(seqs)


def _server_values() -> list[dict[str, Any]]:
    data = json.loads((VECTORS / "server.json").read_text(encoding="utf-8"))
    return [v["value"] for v in data["vectors"]]


def test_examples_agree_with_each_other() -> None:
    """Examples describing the same room or game must not contradict each other."""
    values = _server_values()
    summaries = [
        room
        for v in values
        if v["type"] == "ack"
        for room in v["result"].get("rooms", [v["result"].get("room")])
        if isinstance(room, dict)
    ]
    for room in summaries:  # only a lobby has seats a join can take
        assert room["status"] == "lobby" or room["open_seats"] == 0, room
    roll_off_rooms = {v["room"] for v in values if v["type"] == "roll_off"}
    for room in summaries:
        if room["room"] in roll_off_rooms:
            assert room["options"]["first_player"] == "roll_off", room
    for v in values:  # running totals can hold the boxes they imply
        if v["type"] == "scored" and v["yahtzee_bonus"]:
            # the YAHTZEE box holds 50; an upper bonus needs 63 upper points
            floor = 50 + v["yahtzee_bonus"] + (63 + 35 if v["upper_bonus"] else 0)
            assert v["total"] >= floor + v["points"] * (not v["upper_bonus"]), v
