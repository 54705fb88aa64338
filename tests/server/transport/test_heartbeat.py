"""The heartbeat wheel: every connection of a loop beaten once an interval by one timer."""

from __future__ import annotations

import asyncio
import itertools

import websockets
from inprocess import serve_in_process
from procs import scaled
from websockets.client import ClientProtocol
from websockets.frames import Close, Frame, Opcode
from wsclient import raw_client

from server.settings import Settings
from server.transport import heartbeat
from server.transport.heartbeat import HeartbeatWheel, wheel_for

INTERVAL = 0.3


class Beaten:
    """A connection that records its beats."""

    def __init__(self, loop: asyncio.AbstractEventLoop, wanted: int) -> None:
        self.beats: list[tuple[float, bytes, bytes]] = []
        self.wanted = wanted
        self.done: asyncio.Future[None] = loop.create_future()

    def heartbeat(self, ping_frame: bytes, payload: bytes, now: float) -> None:
        self.beats.append((now, ping_frame, payload))
        if len(self.beats) >= self.wanted and not self.done.done():
            self.done.set_result(None)


async def test_each_connection_is_beaten_once_an_interval_with_one_timer() -> None:
    loop = asyncio.get_running_loop()
    wheel = wheel_for(loop, INTERVAL)
    assert wheel.slots == 3
    assert abs(wheel.tick - 0.1) < 1e-9
    joined = loop.time()
    connections = [Beaten(loop, 3) for _ in range(4)]
    slots = [wheel.add(c) for c in connections]
    assert len(wheel) == 4
    try:
        async with asyncio.timeout(scaled(10)):
            await asyncio.gather(*(c.done for c in connections))
        for connection in connections:
            times = [at for at, _, _ in connection.beats]
            # the first Ping one interval after joining, then one an interval, give or take a
            # tick: a beat late by less than a tick shortens the next gap by as much (the
            # loop's clock has millisecond steps)
            slack = wheel.tick + 0.002
            assert times[0] >= joined + INTERVAL - slack
            assert all(b - a >= INTERVAL - slack for a, b in itertools.pairwise(times))
            for _, frame, payload in connection.beats:
                assert frame == b"\x89\x04" + payload  # a server's unmasked Ping
            assert len({payload for _, _, payload in connection.beats}) == len(connection.beats)
    finally:
        for connection, slot in zip(connections, slots, strict=True):
            wheel.discard(connection, slot)


async def test_an_empty_wheel_stops_and_leaves_the_registry() -> None:
    loop = asyncio.get_running_loop()
    wheel = wheel_for(loop, INTERVAL)
    assert wheel_for(loop, INTERVAL) is wheel
    kept, gone = Beaten(loop, 2), Beaten(loop, 1)
    kept_slot, gone_slot = wheel.add(kept), wheel.add(gone)
    wheel.discard(gone, gone_slot)
    wheel.discard(gone, gone_slot)  # twice: nothing more
    assert len(wheel) == 1
    async with asyncio.timeout(scaled(10)):
        await kept.done
    assert gone.beats == []
    wheel.discard(kept, kept_slot)
    assert len(wheel) == 0
    assert wheel._handle is None  # no timer for nobody
    assert wheel_for(loop, INTERVAL) is not wheel


class Broken(Beaten):
    def heartbeat(self, ping_frame: bytes, payload: bytes, now: float) -> None:
        super().heartbeat(ping_frame, payload, now)
        raise ConnectionError("a transport that fails")


async def test_a_failing_connection_does_not_stop_the_others_heartbeat() -> None:
    loop = asyncio.get_running_loop()
    wheel = wheel_for(loop, INTERVAL)
    broken, fine = Broken(loop, 2), Beaten(loop, 2)
    slots = [wheel.add(broken), wheel.add(fine)]
    try:
        async with asyncio.timeout(scaled(10)):
            await asyncio.gather(broken.done, fine.done)  # beaten again after the failures
    finally:
        for connection, slot in zip((broken, fine), slots, strict=True):
            wheel.discard(connection, slot)


def test_a_short_interval_has_fewer_buckets_and_a_long_one_longer_ticks() -> None:
    loop = asyncio.new_event_loop()
    try:
        assert HeartbeatWheel(loop, 0.05).slots == 1
        assert HeartbeatWheel(loop, 20).slots == 200
        long = HeartbeatWheel(loop, 600)
        assert long.slots == 600
        assert long.tick == 1.0
    finally:
        loop.close()


async def test_beating_a_bucket_sends_to_each_of_its_connections_once() -> None:
    loop = asyncio.get_running_loop()
    wheel = HeartbeatWheel(loop, 1.0)  # not registered: beaten by hand
    first, second = Beaten(loop, 1), Beaten(loop, 1)
    slots = [wheel.add(first), wheel.add(second)]
    try:
        assert slots[0] == slots[1] == wheel.slots - 1  # the bucket beaten last
        for _ in range(wheel.slots - 1):
            wheel.beat()
        assert first.beats == second.beats == []
        wheel.beat()
        assert len(first.beats) == len(second.beats) == 1
        assert first.beats[0][2] == second.beats[0][2]  # one frame for the bucket
    finally:
        for connection, slot in zip((first, second), slots, strict=True):
            wheel.discard(connection, slot)


async def _closed_without_answering_pings(ws: str) -> int:
    """Connect to ``ws``, never answer a Ping; the close code the server sends."""
    client, reader, writer = await raw_client(ws)
    try:
        while True:
            data = await reader.read(65536)
            assert data, "the connection ended without a close frame"
            client.receive_data(data)
            for event in client.events_received():
                if isinstance(event, Frame) and event.opcode is Opcode.CLOSE:
                    return Close.parse(event.data).code
            client.data_to_send()  # dropped: no Pong ever reaches the server
    finally:
        writer.close()


async def test_a_pong_deadline_other_than_the_interval_keeps_uvicorn_s_own_timers(
    redis_url: str, redis_prefix: str
) -> None:
    """The server sets the Pong's deadline to the interval, and its connections share the
    loop's wheel; configured otherwise, each connection keeps uvicorn's own timers, which
    still ping it and close it with 1011 when it does not answer."""
    settings = Settings(redis_url=redis_url, redis_prefix=redis_prefix, preload_tables="none")
    loop = asyncio.get_running_loop()
    async with (
        # a Pong deadline long enough for a busy machine; any deadline but the interval
        # leaves the Pings to uvicorn's timers
        serve_in_process(settings, ws_ping_interval=0.3, ws_ping_timeout=scaled(2)) as served,
        websockets.connect(served.ws, subprotocols=["yahtzee.v1.json"]) as answering,
    ):
        await answering.recv()  # welcome
        async with asyncio.timeout(scaled(10)):
            assert await _closed_without_answering_pings(served.ws) == 1011
        assert loop not in heartbeat._WHEELS  # uvicorn's timers did it
        # pinged all the while too (websockets answers each Ping): still served
        await answering.send('{"type": "ping", "id": "p1"}')
        assert '"pong"' in str(await answering.recv())
    async with (
        serve_in_process(settings, ws_ping_interval=20, ws_ping_timeout=20) as served,
        websockets.connect(served.ws, subprotocols=["yahtzee.v1.json"]) as connection,
    ):
        await connection.recv()  # welcome
        assert len(heartbeat._WHEELS[loop][20]) == 1  # on the wheel, not on timers of its own


async def _frames_through(
    client: ClientProtocol, reader: asyncio.StreamReader, last: Opcode
) -> list[Frame]:
    """The frames received up to the next one of opcode ``last``, itself included (Pongs never
    sent)."""
    frames: list[Frame] = []
    while not any(frame.opcode is last for frame in frames):
        data = await reader.read(65536)
        assert data, f"the connection ended before a {last.name} frame"
        client.receive_data(data)
        frames += [event for event in client.events_received() if isinstance(event, Frame)]
        client.data_to_send()  # dropped: this client never answers a Ping
    return frames


async def test_a_connection_heard_from_since_the_last_beat_is_not_pinged(
    redis_url: str, redis_prefix: str
) -> None:
    """SPEC 11.2: a message from the client proves it alive, so the beat after it sends no Ping
    and forgives one still unanswered; a beat with nothing heard pings as before, and the next
    one closes with 1011. The wheel is turned by hand (an interval of 600 s: its own timer
    reaches this connection's bucket only after some 600 s), and each check reads up to the
    reply to a message sent after the beats: a Ping written by them would come before it."""
    settings = Settings(redis_url=redis_url, redis_prefix=redis_prefix, preload_tables="none")
    loop = asyncio.get_running_loop()
    async with serve_in_process(settings, ws_ping_interval=600, ws_ping_timeout=600) as served:
        client, reader, writer = await raw_client(served.ws)
        try:
            async with asyncio.timeout(scaled(20)):
                assert [f.opcode for f in await _frames_through(client, reader, Opcode.TEXT)] == [
                    Opcode.PING,  # the handshake's own
                    Opcode.TEXT,  # the welcome
                ]
                wheel = heartbeat._WHEELS[loop][600]

                def turn_the_wheel() -> None:  # every bucket beaten once
                    for _ in range(wheel.slots):
                        wheel.beat()

                async def say(id_: str) -> list[Opcode]:
                    client.send_text(f'{{"type": "ping", "id": "{id_}"}}'.encode())
                    writer.write(b"".join(client.data_to_send()))
                    return [f.opcode for f in await _frames_through(client, reader, Opcode.TEXT)]

                turn_the_wheel()  # nothing heard from the client yet
                assert await say("1") == [Opcode.PING, Opcode.TEXT]
                turn_the_wheel()  # "1" heard: no Ping, and the unanswered one is forgiven
                assert await say("2") == [Opcode.TEXT]
                turn_the_wheel()  # "2" heard
                turn_the_wheel()  # nothing heard: a Ping
                turn_the_wheel()  # nothing heard, the Ping unanswered: closed
                frames = await _frames_through(client, reader, Opcode.CLOSE)
                assert [f.opcode for f in frames] == [Opcode.PING, Opcode.CLOSE]
                assert Close.parse(frames[-1].data).code == 1011
        finally:
            writer.close()
