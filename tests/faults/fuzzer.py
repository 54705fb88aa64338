"""A frame fuzzer for a live server, run as its own process by ``test_fuzz_e2e.py`` (so that its
CPU is not charged to the honest clients it is compared with).

    python fuzzer.py WS_URL CONNECTIONS SECONDS SEED

Each connection (half JSON, half MessagePack) sends, at about 40 frames a second (twice the
default rate limit), frames of these kinds: random bytes or text, mutated valid frames (the
golden vectors with bytes flipped, inserted, deleted, cut), oversize frames (over the frame limit,
and now and then over 64 times it), deeply nested values, valid commands with a field of the
wrong type, MessagePack headers that announce huge containers, and frames of the wrong WebSocket
type. It reads every reply and reconnects when closed. At the end it prints one JSON object:
frames sent by kind, replies by type, error codes, close codes, and replies it could not decode.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import msgpack
import websockets
from websockets.typing import Subprotocol

from protocol import Encoding, decode_server, message_type
from protocol.messages import Error

VECTORS = Path(__file__).resolve().parents[2] / "protocol" / "vectors" / "client.json"
LIMIT = 16384
KINDS = ("random", "mutated", "oversize", "deep", "wrong_type", "bomb", "wrong_frame")
WRONG_VALUES: list[Any] = [
    None, True, 0, -1, 2**63, 1.5, "", "x" * 200, [], [1, 2], {}, {"a": [{}]}, "\u0000", 7,
]  # fmt: skip


def _vectors() -> tuple[list[str], list[bytes], list[dict[str, Any]]]:
    texts, binaries, values = [], [], []
    for vector in json.loads(VECTORS.read_text(encoding="utf-8"))["vectors"]:
        texts.append(vector["json"])
        binaries.append(bytes.fromhex(vector["msgpack_hex"]))
        values.append(json.loads(vector["json"]))
    return texts, binaries, values


TEXTS, BINARIES, VALUES = _vectors()


def _pack(value: Any, encoding: Encoding) -> str | bytes:
    if encoding is Encoding.JSON:
        return json.dumps(value)
    try:
        packed: bytes = msgpack.packb(value)
    except (OverflowError, ValueError):
        packed = msgpack.packb({"type": "hello", "id": "overflow"})
    return packed


def _mutate(data: bytes, rng: random.Random) -> bytes:
    buffer = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        at = rng.randint(0, len(buffer))
        operation = rng.choice(("flip", "insert", "delete", "truncate"))
        if operation == "flip" and at < len(buffer):
            buffer[at] ^= rng.randint(1, 255)
        elif operation == "insert":
            buffer.insert(at, rng.randint(0, 255))
        elif operation == "delete" and at < len(buffer):
            del buffer[at]
        elif operation == "truncate":
            del buffer[at:]
    return bytes(buffer)


def frame(kind: str, encoding: Encoding, rng: random.Random) -> str | bytes:
    """One fuzz frame of ``kind`` for a connection speaking ``encoding``."""
    text = encoding is Encoding.JSON
    if kind == "random":
        data = rng.randbytes(rng.randint(0, 600))
        return data.decode("latin-1") if text else data
    if kind == "mutated":
        source = rng.choice(TEXTS).encode() if text else rng.choice(BINARIES)
        mutated = _mutate(source, rng)
        return mutated.decode("utf-8", "replace") if text else mutated
    if kind == "oversize":
        size = LIMIT * 64 + 10 if rng.random() < 0.02 else LIMIT + rng.randint(1, 3 * LIMIT)
        return _pack({"type": "hello", "id": "big", "client": "A" * size}, encoding)
    if kind == "deep":
        depth = rng.choice((33, 64, 1000, 5000))
        if text:
            return '{"type":"hello","id":"deep","client":' + "[" * depth + "]" * depth + "}"
        return b"\x83\xa4type\xa5hello\xa2id\xa4deep\xa6client" + b"\x91" * depth + b"\xc0"
    if kind == "wrong_type":
        value = dict(rng.choice(VALUES))
        field = rng.choice(list(value))
        value[field] = rng.choice(WRONG_VALUES)
        return _pack(value, encoding)
    if kind == "bomb":  # headers announcing 4 billion elements or bytes, then almost nothing
        header = rng.choice(
            (b"\xdd\xff\xff\xff\xff", b"\xdf\xff\xff\xff\xff", b"\xdb\xff\xff\xff\xff")
        )
        data = b"\x81\xa4type" + header + b"\x00" * rng.randint(0, 20)
        return data.decode("latin-1") if text else data
    if kind == "worst":  # a valid command padded to the limit with nested empty arrays: the
        # most structure a frame the limits admit can carry (every byte a container)
        return _worst(encoding)
    # wrong_frame: a valid command in the other WebSocket frame type
    valid = rng.choice(TEXTS)
    return valid.encode() if text else valid


def _worst(encoding: Encoding) -> str | bytes:
    chain_depth = 14  # with the map and the pad array: 16 levels, the deepest admitted
    if encoding is Encoding.JSON:
        chain = "[" * chain_depth + "]" * chain_depth
        count = (LIMIT - 64) // (len(chain) + 1)
        return '{"type":"ping","id":"w","pad":[' + ",".join([chain] * count) + "]}"
    chain = b"\x91" * (chain_depth - 1) + b"\x90"
    count = (LIMIT - 64) // len(chain)
    head = b"\x83\xa4type\xa4ping\xa2id\xa1w\xa3pad\xdc" + count.to_bytes(2, "big")
    return head + chain * count


async def connection(
    url: str,
    encoding: Encoding,
    until: float,
    rng: random.Random,
    tally: dict[str, Counter[str]],
    kinds: tuple[str, ...] = KINDS,
) -> None:
    loop = asyncio.get_running_loop()
    protocol = f"yahtzee.v1.{encoding.value}"
    while loop.time() < until:
        try:
            async with websockets.connect(
                url,
                subprotocols=[Subprotocol(protocol)],
                max_size=2**20,
                open_timeout=10,
                close_timeout=3,
            ) as ws:
                tally["connections"]["opened"] += 1

                async def read() -> None:
                    async for reply in ws:
                        try:
                            message = decode_server(reply, encoding)
                        except Exception:
                            tally["replies"]["undecodable"] += 1
                            continue
                        tally["replies"][message_type(message)] += 1
                        if isinstance(message, Error):
                            tally["errors"][message.code] += 1

                reader = asyncio.create_task(read())
                try:
                    while loop.time() < until and not reader.done():
                        kind = rng.choice(kinds)
                        tally["sent"][kind] += 1
                        await ws.send(frame(kind, encoding, rng))
                        await asyncio.sleep(0.025)  # the fuzzer's pace
                finally:
                    reader.cancel()
                    with contextlib.suppress(BaseException):
                        await reader
            if ws.protocol.close_rcvd is not None:  # the server's close frame
                tally["closes"][str(ws.protocol.close_rcvd.code)] += 1
            else:
                # the fuzzer closed at the end of its run and the server's answer did not come
                # within the close timeout: its close frame waits behind the frames it sent
                # before (a refused frame's connection is read at the rate limit's pace)
                tally["connections"]["closed by the fuzzer, no answer in time"] += 1
        except websockets.ConnectionClosed as closed:
            code = closed.rcvd.code if closed.rcvd is not None else None
            tally["closes"][str(code)] += 1
        except (OSError, websockets.InvalidHandshake, TimeoutError) as exc:
            tally["connections"][f"failed {type(exc).__name__}"] += 1
            await asyncio.sleep(0.1)


async def main(
    url: str, connections: int, seconds: float, seed: int, kinds: tuple[str, ...] = KINDS
) -> None:
    tally: dict[str, Counter[str]] = {
        k: Counter() for k in ("sent", "replies", "errors", "closes", "connections")
    }
    until = asyncio.get_running_loop().time() + seconds
    await asyncio.gather(
        *(
            connection(
                url, list(Encoding)[i % 2], until, random.Random(seed * 1000 + i), tally, kinds
            )
            for i in range(connections)
        )
    )
    print(json.dumps({k: dict(v) for k, v in tally.items()}), flush=True)


if __name__ == "__main__":
    only = tuple(sys.argv[5].split(",")) if len(sys.argv) > 5 else KINDS  # e.g. "worst"
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), only))
