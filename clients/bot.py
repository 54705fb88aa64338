"""``yahtzee bot``: computer players that speak the protocol like any other client.

Each bot is one :class:`~clients.client.Client` (one connection, one seat). It plays with the
greedy strategy of :mod:`clients.strategy`, from nothing but what the server sends: the dice, the
rolls left and the per-box preview. A bot that is the host starts the game once every seat is
taken. Its commands carry ``expect_seq``; a ``stale_state`` refusal makes it wait for the newer
events and decide again. :func:`run_bots` creates a room (or joins an existing one) and fills N
seats.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from clients.client import Client, CommandError
from clients.model import RoomModel
from clients.strategy import choose_box, decide
from protocol import Encoding, Phase, RoomOptions, RoomStatus, Standing, Toggle

__all__ = ["BotConfig", "play_seat", "run_bots"]

log = logging.getLogger("yahtzee.bot")

DEFAULT_NAMES = ("Robo", "Dicey", "Chip", "Bolt", "Gizmo", "Pixel", "Sprocket", "Widget")


@dataclass
class BotConfig:
    """What :func:`run_bots` needs."""

    url: str = "ws://127.0.0.1:8000/ws"
    room: str | None = None
    invite_code: str | None = None
    bots: int = 1
    seats: int | None = None  # when creating a room: seats in it (default: ``bots``)
    public: bool = True
    turn_seconds: int = 0
    options: RoomOptions = field(default_factory=RoomOptions)
    names: Sequence[str] = DEFAULT_NAMES
    encoding: Encoding = Encoding.MSGPACK
    delay: float = 0.0  # seconds to wait before each action (to let humans follow)


async def _act(client: Client, model: RoomModel) -> None:
    """Take the next step of the bot's turn."""
    if model.phase is Phase.AWAITING_ROLL:
        await client.roll()
        return
    decision = decide(model.dice, model.rolls_left, model.preview)
    if decision.score is not None:
        await client.score(decision.score)
    else:
        # `keep` alone decides what is re-rolled; the `rolled` event shows it as held.
        await client.roll(keep=decision.keep)


def _caught_up(seq: int) -> Callable[[RoomModel], bool]:
    return lambda model: model.seq >= seq


def _finished(model: RoomModel) -> bool:
    return model.status is RoomStatus.FINISHED


async def play_seat(client: Client, *, delay: float = 0.0) -> list[Standing]:
    """Play the seat ``client`` holds until the game is over; returns the final standings.

    The client must have joined a room. Acts once per new room state (by ``seq``): on its own
    turn it rolls or scores; as host in a full lobby it starts the game.
    """
    me = client.player
    acted_at = -1

    def needs_me(model: RoomModel) -> bool:
        if _finished(model):
            return True
        if model.seq == acted_at:
            return False
        if model.status is RoomStatus.LOBBY:
            return model.host == me and len(model.players) >= model.max_seats
        return (
            model.current_player == me
            and not model.turn_over
            and model.phase in (Phase.AWAITING_ROLL, Phase.ROLLED)
        )

    while True:
        model = await client.wait_for(needs_me)
        if _finished(model):
            return list(model.results)
        acted_at = model.seq
        if delay:
            await asyncio.sleep(delay)
        try:
            if model.status is RoomStatus.LOBBY:
                await client.start()
            else:
                await _act(client, model)
        except CommandError as exc:
            log.info("bot %s: %s", me, exc)
            if exc.code == "stale_state" and exc.seq is not None:
                # Decided on an old view (another event came in first): decide again once the
                # model has caught up with the room.
                await client.wait_for(_caught_up(exc.seq))
            elif exc.retryable:  # still failing after the client's own retries: pause, then retry
                await asyncio.sleep(0.5)
                acted_at = -1
            elif model.phase is Phase.ROLLED and model.current_player == me and not model.turn_over:
                # The strategy's move was refused: fall back to the plainest legal move, so
                # that a bot never stalls its table.
                with contextlib.suppress(CommandError):
                    await client.score(choose_box(model.preview))


async def run_bots(config: BotConfig) -> list[Standing]:
    """Create a room (unless ``config.room``), seat ``config.bots`` bots, play to the end."""
    clients = [Client(config.url, encoding=config.encoding) for _ in range(config.bots)]
    try:
        for client in clients:
            await client.connect()
        room, invite = config.room, config.invite_code
        if room is None:
            created = await clients[0].create_room(
                seats=config.seats or config.bots,
                public=config.public,
                turn_seconds=config.turn_seconds,
                rules=config.options.rules,
                extra_yahtzees=config.options.extra_yahtzees,
                joker=config.options.joker,
                first_player=config.options.first_player,
                upper_first=config.options.upper_first is Toggle.ON,
                bonus_turn=config.options.bonus_turn is Toggle.ON,
            )
            room, invite = created.room, created.invite_code
            print(f"room {room}" + (f" invite {invite}" if invite else ""), flush=True)
        taken: set[str] = set()
        if clients:
            summary = await clients[0].get_room(room, invite)
            taken = set(summary.players)
        names = [n for n in config.names if n not in taken] or list(config.names)
        for i, client in enumerate(clients):
            name = names[i % len(names)] + ("" if i < len(names) else f" {i + 1}")
            await client.join(room, name, invite)
            log.info("bot %s joined %s", name, room)
        results = await asyncio.gather(*(play_seat(c, delay=config.delay) for c in clients))
        return results[0] if results else []
    finally:
        for client in clients:
            await client.close()
