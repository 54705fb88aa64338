"""Generate the golden vectors, the JSON Schema, SPEC-APPENDIX.md and the blocks of SPEC.md.

Usage::

    python -m protocol.tools.generate           # rewrite vectors/*.json, schema.json, SPEC.md,
                                                # SPEC-APPENDIX.md, asyncapi.json, openapi.json
    python -m protocol.tools.generate --check   # exit 1 if any of them is out of date

Build-time tooling: ``protocol/tools/`` has no ``__init__.py`` and is not part of the installed
``protocol`` package (it is a namespace directory, importable from a checkout only).

Everything is derived from the code: the message classes (field names, types, bounds,
descriptions via the JSON Schema that msgspec builds from them), ``protocol/tools/examples.py``
(encoded with :mod:`protocol.codec`), the error and close code tables. SPEC.md is hand-written
prose with blocks between ``<!-- BEGIN GENERATED: name -->`` and ``<!-- END GENERATED: name -->``
that this module owns: a one-line field summary and example per message, and the few tables a
client author needs while reading. The enumerations, the objects, the full field tables, every
example with its MessagePack bytes, the whole transcript and the invalid frames go to
SPEC-APPENDIX.md, which is generated entirely.
The tests fail when any output differs from what is on disk.
"""

import argparse
import inspect
import json
import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import msgspec

from protocol import messages
from protocol.codec import decode_client, decode_server, encode_json, encode_msgpack, to_dict
from protocol.errors import ERROR_CODES, DecodeError
from protocol.messages import (
    CLIENT_MESSAGE_TYPES,
    DEFAULT_LIMITS,
    RESULT_TYPES,
    SERVER_MESSAGE_TYPES,
    ClientMessage,
    Message,
    ServerMessage,
    message_type,
)
from protocol.tools import apispec, examples
from protocol.transport import (
    CLOSE_CODES,
    DEFAULT_HEARTBEAT_SECONDS,
    MAX_CLIENT_FRAME_BYTES,
    MAX_NESTING_DEPTH,
    MAX_SERVER_FRAME_BYTES,
    PROTOCOL_MINOR,
    PROTOCOL_VERSION,
    SUBPROTOCOLS,
    Encoding,
)
from protocol.types import MAX_SAFE_INTEGER, Rules, boxes_for

__all__ = [
    "HTTP_OBJECTS",
    "OBJECTS",
    "PACKAGE_DIR",
    "appendix",
    "fill_spec",
    "main",
    "outputs",
    "schema",
    "spec_blocks",
    "vector_files",
]

PACKAGE_DIR: Final = Path(__file__).resolve().parent.parent
SPEC_PATH: Final = PACKAGE_DIR / "SPEC.md"
APPENDIX_PATH: Final = PACKAGE_DIR / "SPEC-APPENDIX.md"
APPENDIX: Final = "SPEC-APPENDIX.md"
SCHEMA_PATH: Final = PACKAGE_DIR / "schema.json"
ASYNCAPI_PATH: Final = PACKAGE_DIR / "asyncapi.json"
OPENAPI_PATH: Final = PACKAGE_DIR / "openapi.json"
VECTORS_DIR: Final = PACKAGE_DIR / "vectors"
GENERATOR: Final = "python -m protocol.tools.generate"

OBJECTS: Final = (
    "RoomOptions",
    "RoomSummary",
    "RoomState",
    "PlayerView",
    "Totals",
    "PreviewEntry",
    "RollOffRoll",
    "Standing",
    "Limits",
    "ComputerSeat",
    "HintOption",
    "Correspondence",
    "RatingChange",
    "GameAnalysis",
    "PlayerAnalysis",
    "DecisionReview",
    "RememberedPlayer",
    "SandboxRoomRequest",
    "SandboxPosition",
    "SandboxPlayer",
    "SandboxRoom",
    "SandboxSeat",
)
"""Nested objects, in full in SPEC-APPENDIX.md B (SPEC.md section 5.5 links there), in order
(`GameAnalysis` and the objects in it are the body of the HTTP analysis, section 13.7; the
`Sandbox*` objects the body and answer of the sandbox's `POST /sandbox/rooms`, 13.15)."""

HTTP_OBJECTS: Final = ("GameAnalysis", "SandboxRoomRequest", "SandboxRoom")
"""Objects that are HTTP bodies only (in no message): added to the schema's ``$defs``."""

RESULTS: Final = tuple(cls.__name__ for cls in RESULT_TYPES.values())
"""Ack result objects, one per command, in command order."""

_BEGIN = re.compile(r"<!-- BEGIN GENERATED: ([\w:.-]+) -->\n")
_END = "<!-- END GENERATED: {} -->"
_WIDTH = 96


# --------------------------------------------------------------------------------------------
# JSON Schema
# --------------------------------------------------------------------------------------------


def _clean(node: Any) -> Any:
    if isinstance(node, dict):
        return {
            key: inspect.cleandoc(value) if key == "description" else _clean(value)
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [_clean(item) for item in node]
    return node


def schema() -> dict[str, Any]:
    """Build the JSON Schema (draft 2020-12) of every message from the message classes."""
    results: list[Any] = [getattr(messages, name) for name in (*RESULTS, *HTTP_OBJECTS)]
    (client, server, *_), components = msgspec.json.schema_components(
        [ClientMessage, ServerMessage, *results], ref_template="#/$defs/{name}"
    )
    defs = {"ClientMessage": client, "ServerMessage": server}
    defs.update(sorted(components.items()))
    for name in RESULTS:  # msgspec leaves the tag field undescribed
        tag = defs[name]["properties"]["command"]
        tag["description"] = "The command this result answers (v1.1; absent from v1.0 servers)."
    document: dict[str, Any] = _clean(
        {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": f"Yahtzee wire protocol, version {PROTOCOL_VERSION}.{PROTOCOL_MINOR}",
            "description": (
                "Every message of the protocol, as the JSON value of one frame (MessagePack "
                "frames carry the same value). Generated from the code by "
                f"`{GENERATOR}`; see SPEC.md. Unknown fields are allowed and ignored. "
                f"Integers are at most {MAX_SAFE_INTEGER} in magnitude."
            ),
            "anyOf": [{"$ref": "#/$defs/ClientMessage"}, {"$ref": "#/$defs/ServerMessage"}],
            "$defs": defs,
        }
    )
    return document


# --------------------------------------------------------------------------------------------
# Vectors
# --------------------------------------------------------------------------------------------


def _frame_fields(frame: str | bytes) -> dict[str, str]:
    if isinstance(frame, str):
        return {"text": frame}
    return {"binary_hex": frame.hex()}


def _canonical(
    named: Iterable[tuple[str, Message]], decode: Callable[[str | bytes, Encoding], Message]
) -> list[dict[str, Any]]:
    rows = []
    for name, message in named:
        text, data = encode_json(message), encode_msgpack(message)
        for frame, encoding in ((text, Encoding.JSON), (data, Encoding.MSGPACK)):
            if decode(frame, encoding) != message:  # pragma: no cover - a broken example
                raise AssertionError(f"vector {name} does not round-trip in {encoding}")
        rows.append(
            {
                "name": name,
                "type": message_type(message),
                "value": to_dict(message),
                "json": text,
                "msgpack_hex": data.hex(),
            }
        )
    return rows


def _lenient(direction: str) -> list[dict[str, Any]]:
    rows = []
    for example in examples.LENIENT_EXAMPLES:
        if example.direction != direction:
            continue
        decode = decode_client if direction == "client" else decode_server
        if decode(example.frame, example.encoding) != example.message:  # pragma: no cover
            raise AssertionError(f"lenient vector {example.name} decodes differently")
        rows.append(
            {
                "name": example.name,
                "encoding": str(example.encoding),
                **_frame_fields(example.frame),
                "value": to_dict(example.message),
                "note": example.note,
            }
        )
    return rows


def _invalid() -> list[dict[str, Any]]:
    rows = []
    for example in examples.INVALID_EXAMPLES:
        limit = example.max_frame_bytes or MAX_CLIENT_FRAME_BYTES
        try:
            decode_client(example.frame, example.encoding, max_frame_bytes=limit)
        except DecodeError as exc:
            if (exc.code, exc.command_id) != (example.code, example.command_id):
                raise AssertionError(  # pragma: no cover - a broken example
                    f"invalid vector {example.name}: got {exc.code} {exc.command_id!r}"
                ) from None
        else:  # pragma: no cover - a broken example
            raise AssertionError(f"invalid vector {example.name} was accepted")
        rows.append(
            {
                "name": example.name,
                "encoding": str(example.encoding),
                **_frame_fields(example.frame),
                "max_frame_bytes": limit,
                "code": example.code,
                "id": example.command_id,
                "note": example.note,
            }
        )
    return rows


def _check_coverage() -> None:
    for table, named in (
        (CLIENT_MESSAGE_TYPES, examples.CLIENT_EXAMPLES),
        (SERVER_MESSAGE_TYPES, examples.SERVER_EXAMPLES),
    ):
        missing = set(table) - {message_type(message) for _, message in named}
        if missing:  # pragma: no cover - a forgotten example
            raise AssertionError(f"no example for {sorted(missing)}")


def vector_files() -> dict[str, dict[str, Any]]:
    """Build the contents of ``vectors/client.json``, ``server.json`` and ``invalid.json``."""
    _check_coverage()
    common = {
        "protocol_version": PROTOCOL_VERSION,
        "protocol_minor": PROTOCOL_MINOR,
        "generated_by": GENERATOR,
    }
    how = (
        "Each vector: `value` is the message as a JSON value; `json` is the exact text and "
        "`msgpack_hex` the exact bytes (hex) this implementation sends for it. Decoding either "
        "must give `value`; your encoder may differ in bytes (key order, integer widths) as "
        "long as it decodes to the same value. `decode_only` frames are valid, non-canonical "
        "inputs (`text`: a text frame, `binary_hex`: a binary frame) and the value they "
        "decode to."
    )
    return {
        "client.json": {
            **common,
            "description": "Client-to-server messages. " + how,
            "vectors": _canonical(examples.CLIENT_EXAMPLES, decode_client),
            "decode_only": _lenient("client"),
        },
        "server.json": {
            **common,
            "description": "Server-to-client messages. " + how,
            "vectors": _canonical(examples.SERVER_EXAMPLES, decode_server),
            "decode_only": _lenient("server"),
        },
        "invalid.json": {
            **common,
            "description": (
                "Client frames the server rejects. `encoding` is the connection's encoding; the "
                "frame is `text` (a text frame) or `binary_hex` (a binary frame). The server "
                "answers an `error` with `code` and `id` (null when the id could not be read) "
                "and keeps the connection open."
            ),
            "vectors": _invalid(),
        },
        "http.json": {
            **common,
            "description": (
                "Requests of the HTTP API (SPEC.md section 13) and the answers: `status`, and "
                "`body` as a JSON value (Content-Type application/json) or a string "
                "(text/plain; for `/lobby`, text/event-stream: the beginning of the stream). "
                "`route` is the documented route the request belongs to."
            ),
            "vectors": [
                {
                    "name": example.name,
                    "route": example.route,
                    "request": f"GET {example.path}",
                    "headers": dict(example.headers),
                    "status": example.status,
                    "body": example.body,
                    "note": example.note,
                }
                for example in examples.HTTP_EXAMPLES
            ],
        },
    }


# --------------------------------------------------------------------------------------------
# SPEC.md blocks
# --------------------------------------------------------------------------------------------


def _anchor(kind: str, name: str) -> str:
    return f"{kind}-{name.lower().replace('_', '-')}"


def _ref_name(node: Mapping[str, Any]) -> str:
    return str(node["$ref"]).rsplit("/", 1)[-1]


def _link(name: str, defs: Mapping[str, Any]) -> str:
    kind = "enum" if "enum" in defs.get(name, {}) else "obj"
    return f"[{name}](#{_anchor(kind, name)})"


def _bounds(low: Any, high: Any, unit: str = "") -> str:
    if low is not None and high is not None:
        return f"{low}" if low == high else f"{low}..{high}"
    if low is not None:
        return f">= {low}"
    if high is not None:
        return f"<= {high}"
    return ""


def render_type(node: Mapping[str, Any], defs: Mapping[str, Any]) -> str:
    """Describe a JSON Schema node in a few words of Markdown."""
    if "$ref" in node:
        return _link(_ref_name(node), defs)
    if "anyOf" in node and node.get("type") != "object":
        return " or ".join(render_type(option, defs) for option in node["anyOf"])
    if "enum" in node:
        return " \\| ".join(f'`"{value}"`' for value in node["enum"])
    kind = node.get("type")
    if kind == "integer":
        high = node.get("maximum")
        bounds = _bounds(node.get("minimum"), None if high == MAX_SAFE_INTEGER else high)
        return f"integer {bounds}".rstrip()
    if kind == "number":  # v1.2: expected scores, server to client only (SPEC.md 4.5)
        return f"number {_bounds(node.get('minimum'), node.get('maximum'))}".rstrip()
    if kind == "string":
        text = "string"
        length = _bounds(node.get("minLength"), node.get("maxLength"))
        if length:
            text += f", {length} chars"
        if "pattern" in node:
            text += f", pattern `{node['pattern']}`"
        return text
    if kind == "array":
        text = "array of " + render_type(node["items"], defs)
        if "not" in node:
            return text + " (0 or 5 items)"
        count = _bounds(node.get("minItems"), node.get("maxItems"))
        return text + (f" ({count} items)" if count else "")
    if kind == "object":
        if "anyOf" in node:
            return "object: " + ", ".join(render_type(option, defs) for option in node["anyOf"])
        if "additionalProperties" in node:
            keys = node.get("propertyNames")
            key = render_type(keys, defs) if keys else "string"
            return f"map of {key} to {render_type(node['additionalProperties'], defs)}"
        return "object"
    if kind in ("boolean", "null"):
        return str(kind)
    raise ValueError(f"cannot render schema node {node!r}")  # pragma: no cover


def _table(rows: Sequence[Sequence[str]], header: Sequence[str]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell.replace("\n", " ") for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def _fields(name: str, defs: Mapping[str, Any]) -> str:
    component = defs[name]
    required = set(component.get("required", ()))
    rows = []
    for field, node in component.get("properties", {}).items():
        if field in required:
            presence = "yes"
        elif "default" not in node:  # msgspec.UNSET: left out unless it has a value (v1.3)
            presence = "no, absent when unused"
        else:
            presence = "no, default `" + json.dumps(node.get("default"), ensure_ascii=False) + "`"
        description = "Message type." if field == "type" else node.get("description", "")
        rows.append([f"`{field}`", render_type(node, defs), presence, description])
    if not rows:
        return "No fields: an empty map `{}`."
    return _table(rows, ["field", "type", "required", "description"])


def _pretty(value: Any, indent: int = 0, width: int = _WIDTH) -> str:
    compact = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    if not isinstance(value, dict | list) or indent + len(compact) <= width:
        return compact
    pad = " " * (indent + 2)
    if isinstance(value, list):
        items = [pad + _pretty(item, indent + 2, width) for item in value]
        return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"
    items = [
        pad + json.dumps(key) + ": " + _pretty(item, indent + 2, width)
        for key, item in value.items()
    ]
    return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"


def _hex_block(data: str) -> str:
    return "\n".join(data[i : i + 64] for i in range(0, len(data), 64))


def _walkthrough_values() -> list[Any]:
    return [to_dict(step.message) for step in examples.WALKTHROUGH if step.message is not None]


def _example(vector: Mapping[str, Any], file: str) -> str:
    text: str = vector["json"]
    if len(text) <= _WIDTH:
        shown = f"JSON text frame:\n\n```json\n{text}\n```"
    elif vector["value"] in _walkthrough_values():
        # Long messages already shown in the transcript (A) are not repeated.
        shown = (
            f"JSON text frame: in [the transcript](#a-transcript) (vector `{vector['name']}` in "
            f"`vectors/{file}`)."
        )
    else:
        shown = (
            "JSON text frame (indented here for reading; the exact compact text is vector "
            f"`{vector['name']}` in `vectors/{file}`):\n\n```json\n{_pretty(vector['value'])}\n```"
        )
    return (
        f"Example `{vector['name']}`. {shown}\n\nMessagePack binary frame, "
        f"{len(vector['msgpack_hex']) // 2} bytes (hex):\n\n"
        f"```text\n{_hex_block(vector['msgpack_hex'])}\n```"
    )


def _message_class(tag: str) -> tuple[type[Message], str]:
    if tag in CLIENT_MESSAGE_TYPES:
        return CLIENT_MESSAGE_TYPES[tag], "client.json"
    return SERVER_MESSAGE_TYPES[tag], "server.json"


def _message_rows(tag: str, vectors: Mapping[str, Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    file = _message_class(tag)[1]
    return [vector for vector in vectors[file]["vectors"] if vector["type"] == tag]


def _more_examples(tag: str, vectors: Mapping[str, Mapping[str, Any]]) -> str:
    file = _message_class(tag)[1]
    rows = _message_rows(tag, vectors)
    named = [row["name"] for row in rows[1:] if row["name"] not in examples.ERROR_CODE_VECTORS]
    others = ", ".join(f"`{name}`" for name in named)
    if tag == "error":
        others += ", and `error_<code>` for every other error code"
    return f"More examples in `vectors/{file}`: {others}." if others else ""


def _message_block(
    tag: str, defs: Mapping[str, Any], vectors: Mapping[str, Mapping[str, Any]]
) -> str:
    """The full reference of one message: field tables, example, MessagePack bytes (appendix)."""
    cls, file = _message_class(tag)
    parts = [_fields(cls.__name__, defs)]
    if tag in RESULT_TYPES:
        parts.append(_result_block(tag, defs))
    elif tag == "ping":
        parts.append("Reply: `pong` with the same `id` (not an `ack`).")
    parts.append(_example(_message_rows(tag, vectors)[0], file))
    more = _more_examples(tag, vectors)
    if more:
        parts.append(more)
    return "\n\n".join(parts)


def _field_summary(name: str, defs: Mapping[str, Any]) -> str:
    component = defs[name]
    required = set(component.get("required", ()))
    fields = [field for field in component.get("properties", {}) if field not in ("type",)]
    needed = [f"`{field}`" for field in fields if field in required]
    optional = [f"`{field}`" for field in fields if field not in required]
    text = ", ".join(needed) if needed else ""
    if optional:
        text += ("; optional " if text else "optional ") + ", ".join(optional)
    return text or "none"


_SHORT_EXAMPLE_CHARS: Final = 330
"""Longest example SPEC.md shows inline; a longer one is named and shown in the appendix."""


def _inline_code(text: str) -> str:
    """``text`` as Markdown inline code, with a longer fence when it holds a backtick."""
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def _short_message_block(
    tag: str, defs: Mapping[str, Any], vectors: Mapping[str, Mapping[str, Any]]
) -> str:
    """What SPEC.md shows of one message, in one line: its fields, its reply, one example."""
    cls, file = _message_class(tag)
    link = f"{APPENDIX}#{_anchor('msg', tag)}"
    text = f"Fields: {_field_summary(cls.__name__, defs)} ([types, bounds, defaults]({link}))."
    if tag in RESULT_TYPES:
        name = RESULT_TYPES[tag].__name__
        if set(defs[name]["properties"]) == {"command"}:
            text += f' Reply: `ack` with `result` `{{"command": "{tag}"}}`.'
        else:
            text += f" Reply: `ack` with `result` `{name}`: {_field_summary(name, defs)}."
    elif tag == "ping":
        text += " Reply: `pong` with the same `id` (not an `ack`)."
    vector = _message_rows(tag, vectors)[0]
    # Spaces after the separators let a Markdown viewer wrap the example.
    spaced = json.dumps(vector["value"], ensure_ascii=False, separators=(", ", ": "))
    if len(spaced) <= _SHORT_EXAMPLE_CHARS:
        return f"{text} Example: {_inline_code(spaced)}"
    return (
        f"{text} Example: vector `{vector['name']}` of `vectors/{file}`, shown in "
        f"[{APPENDIX}]({link})."
    )


def _result_block(command: str, defs: Mapping[str, Any]) -> str:
    # Each command's result is documented with the command, where a reader looks for it.
    name = RESULT_TYPES[command].__name__
    head = f'<a id="{_anchor("obj", name)}"></a>Reply: `ack` whose `result` is `{name}`'
    if set(defs[name]["properties"]) == {"command"}:
        return f'{head}, always `{{"command": "{command}"}}`.'
    return f"{head}: {defs[name].get('description', '')}\n\n{_fields(name, defs)}"


def _objects_block(names: Iterable[str], defs: Mapping[str, Any]) -> str:
    parts = []
    for name in names:
        description = defs[name].get("description", "")
        parts.append(
            f'<a id="{_anchor("obj", name)}"></a>\n\n#### `{name}`\n\n{description}\n\n'
            + _fields(name, defs)
        )
    return "\n\n".join(parts)


def _enums_block(defs: Mapping[str, Any]) -> str:
    rows = []
    for name, node in defs.items():
        if "enum" in node and "properties" not in node:
            values = ", ".join(f"`{value}`" for value in node["enum"])
            description = node.get("description", "").replace("\n", " ")
            anchor = f'<a id="{_anchor("enum", name)}"></a>`{name}`'
            rows.append([anchor, values, description])
    return _table(rows, ["enumeration", "values", "meaning"])


def _errors_block() -> str:
    rows = [
        [f"`{code}`", info.category, "yes" if info.retryable else "no", info.meaning]
        for code, info in ERROR_CODES.items()
    ]
    return _table(rows, ["code", "category", "retryable", "meaning"])


def _errors_summary() -> str:
    """SPEC.md 9.1's line about the table of error codes, which is in the appendix (G)."""
    counts = {category: 0 for category in ("decode", "service", "rules")}
    for info in ERROR_CODES.values():
        counts[str(info.category)] += 1
    kinds = ", ".join(f"{n} {category}" for category, n in counts.items())
    retryable = [f"`{code}`" for code, info in ERROR_CODES.items() if info.retryable]
    return (
        f"{len(ERROR_CODES)} codes ({kinds}), each with its category, whether it is retryable "
        f"and what it means: [{APPENDIX} G]({APPENDIX}#error-codes). The retryable ones: "
        f"{', '.join(retryable[:-1])} and {retryable[-1]}; no other code is."
    )


def _close_block() -> str:
    rows = [[str(int(code)), meaning, action] for code, (meaning, action) in CLOSE_CODES.items()]
    return _table(rows, ["code", "meaning", "client action"])


def _boxes_block() -> str:
    rows = [
        [
            f"`{rules}`",
            str(len(boxes_for(rules))),
            ", ".join(f"`{box}`" for box in boxes_for(rules)),
        ]
        for rules in Rules
    ]
    return _table(rows, ["rules", "boxes", "scorecard order"])


def _subprotocols_block() -> str:
    frames = {Encoding.MSGPACK: "binary", Encoding.JSON: "text (UTF-8)"}
    rows = [[f"`{name}`", f"`{enc}`", frames[enc]] for name, enc in SUBPROTOCOLS.items()]
    return _table(rows, ["subprotocol", "encoding", "frames"])


def _limits_block(defs: Mapping[str, Any]) -> str:
    props = defs["Limits"]["properties"]
    rows = [
        [f"`limits.{field}`", str(getattr(DEFAULT_LIMITS, field)), props[field]["description"]]
        for field in DEFAULT_LIMITS.__struct_fields__
    ]
    rows += [
        [
            "`heartbeat_seconds`",
            str(DEFAULT_HEARTBEAT_SECONDS),
            "Interval of server WebSocket pings (announced in `welcome`).",
        ],
        [
            "server frame size",
            str(MAX_SERVER_FRAME_BYTES),
            "Largest frame the server sends; clients must accept frames this large.",
        ],
        [
            "nesting depth",
            str(MAX_NESTING_DEPTH),
            "Deepest nesting of maps and arrays; the top-level map is level 1.",
        ],
        ["integers", str(MAX_SAFE_INTEGER), "Largest magnitude of any integer (2^53 - 1)."],
    ]
    return _table(rows, ["limit", "default", "meaning"])


def _invalid_block(vectors: Mapping[str, Mapping[str, Any]]) -> str:
    rows = []
    for vector in vectors["invalid.json"]["vectors"]:
        if "text" in vector:
            frame = vector["text"]
            shown = "text " + (frame if len(frame) <= 60 else frame[:57] + "...")
        else:
            data = vector["binary_hex"]
            shown = "binary " + (data if len(data) <= 60 else data[:57] + "...")
        shown = shown.replace("|", "\\|").replace("`", "'")
        command_id = "null" if vector["id"] is None else f'`"{vector["id"]}"`'
        rows.append(
            [
                f"`{vector['name']}`",
                f"`{vector['encoding']}`",
                f"`{shown}`",
                f"`{vector['code']}`",
                command_id,
                vector["note"],
            ]
        )
    return _table(rows, ["vector", "conn.", "frame", "code", "error `id`", "why"])


def _walkthrough_block() -> str:
    lines = []
    for step in examples.WALKTHROUGH:
        if step.message is None:
            lines.append(f"# {step.note}")
            continue
        head = f"{step.sender} -> {step.receiver}:"
        value = to_dict(step.message)
        compact = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        if step.note:
            lines.append(f"# {step.note}")
        if len(head) + 1 + len(compact) <= 120:
            lines.append(f"{head} {compact}")
        else:
            lines.append(head)
            lines.append("    " + _pretty(value, width=112).replace("\n", "\n    "))
    return "```text\n" + "\n".join(lines) + "\n```"


def spec_blocks() -> dict[str, str]:
    """Return the text of every generated SPEC.md block, by block name."""
    defs = schema()["$defs"]
    vectors = vector_files()
    blocks = {
        "subprotocols": _subprotocols_block(),
        "boxes": _boxes_block(),
        "errors": _errors_summary(),
        "close-codes": _close_block(),
        "limits": _limits_block(defs),
        "invalid": (
            f"{len(vectors['invalid.json']['vectors'])} frames, each with the code and `id` "
            f"of the answer and why: [{APPENDIX}]({APPENDIX}#invalid-frames)."
        ),
    }
    for tag in (*CLIENT_MESSAGE_TYPES, *SERVER_MESSAGE_TYPES):
        blocks[f"message:{tag}"] = _short_message_block(tag, defs, vectors)
    return blocks


def _spec_numbers(spec: str) -> dict[str, str]:
    """The section number of every message in SPEC.md, by message type."""
    found = re.findall(r"^#{3,4} ([\d.]+) `(\w+)`$", spec, flags=re.MULTILINE)
    return {tag: number for number, tag in found}


def appendix(spec: str) -> str:
    """Return SPEC-APPENDIX.md: the generated reference material SPEC.md links to."""
    defs = schema()["$defs"]
    vectors = vector_files()
    numbers = _spec_numbers(spec)
    parts = [
        f"# Yahtzee service wire protocol, version {PROTOCOL_VERSION}.{PROTOCOL_MINOR}: appendix",
        "The reference tables and examples of [SPEC.md](SPEC.md), generated from the reference "
        f"implementation by `{GENERATOR}`: do not edit this file by hand. SPEC.md says what the "
        "messages mean and how to use them; this file lists every field with its type, bounds "
        "and default, every example as JSON and as MessagePack bytes, the whole transcript of "
        "the quick start, the enumerations, the objects, the invalid frames and the error codes. "
        "The exact frames are the vectors in "
        "[`vectors/`](vectors/).",
        "Contents: [A. Transcript](#a-transcript) · "
        "[B. Objects and enumerations](#b-objects-and-enumerations) · "
        "[C. Client commands](#c-client-commands) · "
        "[D. Replies and snapshots](#d-replies-and-snapshots) · [E. Events](#e-events) · "
        "[F. Invalid frames](#f-invalid-frames) · [G. Error codes](#error-codes)",
        "## A. Transcript",
        "A short game, the example of SPEC.md section 1, every message in full (JSON; Bob's "
        "msgpack frames shown as JSON). Each `#` line explains the message below it.",
        _walkthrough_block(),
        "## B. Objects and enumerations",
        "The enumerations (SPEC.md 5.4), then the objects nested in messages (SPEC.md 5.5). Ack "
        "results are listed with their commands.",
        _enums_block(defs),
        _objects_block(OBJECTS, defs),
    ]
    sections = (
        ("C. Client commands", CLIENT_MESSAGE_TYPES),
        ("D. Replies and snapshots", [t for t in SERVER_MESSAGE_TYPES if t in _REPLIES]),
        ("E. Events", [t for t in SERVER_MESSAGE_TYPES if t not in _REPLIES]),
    )
    for title, tags in sections:
        parts.append(f"## {title}")
        for tag in tags:
            number = numbers.get(tag, "")
            where = f"SPEC.md [{number}](SPEC.md#{number.replace('.', '')}-{tag})"
            parts.append(
                f'<a id="{_anchor("msg", tag)}"></a>\n\n### `{tag}`\n\nDescribed in {where}.'
            )
            parts.append(_message_block(tag, defs, vectors))
    parts += [
        '<a id="invalid-frames"></a>\n\n## F. Invalid frames',
        "Client frames the server rejects (SPEC.md 9.2), all in `vectors/invalid.json`.",
        _invalid_block(vectors),
        '<a id="error-codes"></a>\n\n## G. Error codes',
        "Every error code (SPEC.md 9.1 says how to handle them, 9.2 the decode errors).",
        _errors_block(),
    ]
    return "\n\n".join(parts) + "\n"


_REPLIES: Final = frozenset({"welcome", "ack", "error", "pong", "snapshot"})


def fill_spec(text: str, blocks: Mapping[str, str] | None = None) -> str:
    """Replace the content of every generated block of SPEC.md.

    Raises ``ValueError`` for an unknown block name, a block without its END marker, or a
    known block missing from the text.
    """
    blocks = spec_blocks() if blocks is None else blocks
    out: list[str] = []
    seen: set[str] = set()
    position = 0
    for match in _BEGIN.finditer(text):
        if match.start() < position:
            raise ValueError(f"nested generated block {match.group(1)!r}")
        name = match.group(1)
        if name not in blocks:
            raise ValueError(f"unknown generated block {name!r}")
        end = text.find(_END.format(name), match.end())
        if end < 0:
            raise ValueError(f"generated block {name!r} has no END marker")
        out.append(text[position : match.end()])
        out.append(blocks[name] + "\n")
        position = end
        seen.add(name)
    out.append(text[position:])
    missing = set(blocks) - seen
    if missing:
        raise ValueError(f"SPEC.md lacks generated blocks: {sorted(missing)}")
    return "".join(out)


# --------------------------------------------------------------------------------------------
# Files
# --------------------------------------------------------------------------------------------


def _dump(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def outputs() -> dict[Path, str]:
    """Return the expected content of every generated file, by path."""
    document = schema()
    files = {SCHEMA_PATH: _dump(document)}
    for name, content in vector_files().items():
        files[VECTORS_DIR / name] = _dump(content)
    spec = fill_spec(SPEC_PATH.read_text(encoding="utf-8"))
    files[SPEC_PATH] = spec
    files[APPENDIX_PATH] = appendix(spec)
    files[ASYNCAPI_PATH] = _dump(apispec.asyncapi(document))
    files[OPENAPI_PATH] = _dump(apispec.openapi(document))
    return files


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the process exit status."""
    parser = argparse.ArgumentParser(prog=GENERATOR, description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report stale files")
    args = parser.parse_args(argv)
    stale = []
    for path, content in outputs().items():
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current == content:
            continue
        stale.append(path)
        if not args.check:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content, encoding="utf-8")
    for path in stale:
        verb = "stale" if args.check else "wrote"
        print(f"{verb}: {path.relative_to(PACKAGE_DIR.parent)}")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
