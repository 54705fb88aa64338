"""Room logs of whole games played by the real engine with dice from ``protocol.fairdice``.

:func:`fair_game_log` plays a game the way a protocol v1.1 service does: it draws every face
from the generator (counting draws in log order), turns the engine's events into the room-log
entries of ``server.boundary.translate`` and adds the v1.1 fields (``dice_commitment`` and ``seed``
on
``player_joined``, ``dice_commitment`` and ``seeds`` on ``game_started``, ``server_seed`` on
``game_over``). The result is the list of JSON event objects ``GET /rooms/{id}/events`` returns,
so the verifier tests and the ``yahtzee verify`` tests can tamper with real-looking logs.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from protocol import fairdice
from protocol.codec import to_dict
from server import game
from server.boundary.translate import wire_events
from server.domain.events import occurred

Event = dict[str, Any]


@dataclass(frozen=True)
class Seat:
    """A player who joins: id, name and client seed (``None``: none given)."""

    player: str
    name: str
    seed: str | None = None


@dataclass
class _Room:
    """The service's side of one game: state, log, draw counter."""

    room: str
    server_seed: bytes
    state: game.GameState
    log: list[Event]
    seeds_by_player: dict[str, str | None]
    entropy: bytes = b""
    draws: int = 0
    stop_before_game_over: bool = False

    def draw(self, count: int) -> tuple[int, ...]:
        faces = fairdice.faces(self.server_seed, self.entropy, self.draws, count)
        self.draws += 1
        return faces

    def apply(self, command: game.Command) -> None:
        self.state, events = game.apply(self.state, command)
        for event in wire_events(self.room, occurred(events, self.state), None, 1):
            self._append(to_dict(event))

    def _append(self, entry: dict[str, Any]) -> None:
        commitment = fairdice.commitment(self.server_seed)
        if entry["type"] == "player_joined":
            entry["dice_commitment"] = commitment
            entry["seed"] = self.seeds_by_player[entry["player"]]
        elif entry["type"] == "game_started":
            entry["dice_commitment"] = commitment
            entry["seeds"] = self.seat_seeds()
        elif entry["type"] == "game_over":
            if self.stop_before_game_over:
                return
            entry["server_seed"] = self.server_seed.hex()
        fields = {k: v for k, v in entry.items() if k not in ("type", "room", "seq")}
        self.log.append(
            {"type": entry["type"], "room": self.room, "seq": len(self.log) + 1, **fields}
        )

    def seat_seeds(self) -> list[str]:
        return [self.seeds_by_player[p.player_id] or "" for p in self.state.players]


def _choose_keep(dice: Sequence[int]) -> frozenset[int]:
    """Keep the most common face (a plain strategy that exercises held dice)."""
    face, _ = Counter(dice).most_common(1)[0]
    return frozenset(i for i, d in enumerate(dice) if d == face)


def _best_box(state: game.GameState) -> game.Box:
    allowed = [p for p in game.preview(state) if p.allowed]
    return max(allowed, key=lambda p: p.points).box


def _play_turn(room: _Room, player: str, rolls: int) -> None:
    room.apply(game.Roll(player, faces=room.draw(len(game.dice_to_roll(room.state)))))
    for _ in range(rolls - 1):
        keep = _choose_keep(room.state.dice)
        if len(keep) == len(room.state.dice):
            break  # five of a kind: nothing left to roll
        count = len(game.dice_to_roll(room.state, keep))
        room.apply(game.Roll(player, faces=room.draw(count), keep=keep))
    room.apply(game.Score(player, _best_box(room.state)))


def fair_game_log(
    server_seed: bytes,
    seats: Sequence[Seat],
    *,
    room: str = "r-fair",
    lobby_leaver: Seat | None = None,
    forfeit_after_turns: int | None = None,
    first_player: str = "roll_off",
    finish: bool = True,
    max_turns: int | None = None,
) -> list[Event]:
    """The log of one game: ``seats`` join (``lobby_leaver`` joins second and leaves before the
    start), the first one starts, everyone plays with the generator's dice. Turns use 1, 2 or 3
    rolls in rotation. ``forfeit_after_turns``: the last seat leaves after that many turns.
    ``finish=False`` drops ``game_over`` (a game not over); ``max_turns`` stops earlier."""
    everyone = [*seats, *([lobby_leaver] if lobby_leaver else [])]
    state = game.new_game(game.RuleOptions(first_player=first_player), max_seats=len(everyone))
    service = _Room(room, server_seed, state, [], {s.player: s.seed for s in everyone})
    service.stop_before_game_over = not finish
    joining = list(seats)
    if lobby_leaver is not None:
        joining.insert(1, lobby_leaver)
    for seat in joining:
        service.apply(game.Join(seat.player, seat.name))
    if lobby_leaver is not None:
        service.apply(game.Leave(lobby_leaver.player))
    service.entropy = fairdice.client_entropy(service.seat_seeds())
    service.apply(game.Start(seats[0].player))
    while service.state.phase is game.Phase.ROLL_OFF:
        contenders = service.state.contenders
        rolls = {p: service.draw(fairdice.DICE_COUNT) for p in contenders}
        service.apply(game.RollOff(rolls))
    turns = 0
    while service.state.phase is not game.Phase.FINISHED:
        if max_turns is not None and turns >= max_turns:
            break
        player = game.current_player(service.state)
        assert player is not None
        _play_turn(service, player, rolls=turns % 3 + 1)
        turns += 1
        if turns == forfeit_after_turns:
            service.apply(game.Leave(seats[-1].player))
    return service.log


def tampered(log: Sequence[Event], seq: int, **changes: Any) -> list[Event]:
    """A deep copy of ``log`` with the fields of event ``seq`` replaced by ``changes``."""
    copied = copy.deepcopy(list(log))
    copied[seq - 1].update(changes)
    return copied


def first(log: Sequence[Event], kind: str, **where: Any) -> Event:
    """The first event of type ``kind`` whose fields equal ``where``."""
    return next(
        e for e in log if e["type"] == kind and all(e.get(k) == v for k, v in where.items())
    )
