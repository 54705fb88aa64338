"""The service's dice: every die of a room drawn from its provably fair sequence.

A room's secret seed is made when the room is created; draw ``n`` of the room
(:func:`protocol.fairdice.faces`) gives the faces of the ``n``-th roll in log order. The log
carries the seed's commitment before any player's seed is used, the seats' seeds when the
game starts, and the seed itself at game over, so anyone can recompute every roll.

A tournament entry (``meta.tournament``) draws duplicate dice instead
(:mod:`protocol.duplicate`): the face of a rolled slot depends only on the tournament's seed,
the turn, the throw and the slot, so every entrant holding the same dice sees the same faces.
"""

from __future__ import annotations

from collections.abc import Callable

from protocol import duplicate, fairdice
from server import game
from server.domain import room

__all__ = ["Dice", "Draws", "new_seed"]

Dice = Callable[[int], tuple[int, ...]]
"""``count`` -> that many faces (tests choose dice with one; the service's own are fair)."""


def new_seed() -> str:
    """A new room's secret seed (hex)."""
    return fairdice.new_server_seed().hex()


class Draws:
    """The dice of one room: draw ``n`` of the room's provably fair sequence
    (:mod:`protocol.fairdice`), counted in log order; or dice a test chose."""

    def __init__(self, record: room.RoomRecord, chosen: Dice | None) -> None:
        self.seed = bytes.fromhex(record.meta.dice_seed)
        self.count = record.draws
        self.chosen = chosen
        self._entropy: bytes | None = None
        self._players = record.game.players
        self._seeds = record.seeds
        self.duplicate = bool(record.meta.tournament)

    def roll(self, state: game.GameState, slots: tuple[int, ...]) -> tuple[int, ...]:
        """The faces of the dice at ``slots`` that the player on turn rolls now."""
        if not self.duplicate or self.chosen is not None:
            return self(len(slots))
        self.count += 1
        player = game.current_player(state)
        assert player is not None  # a roll is only drawn for the player on turn
        turn = game.scorecard(state, player).filled_count + 1
        return duplicate.duplicate_roll(self.seed, turn, state.rolls_used + 1, slots)

    def __call__(self, count: int) -> tuple[int, ...]:
        n, self.count = self.count, self.count + 1
        if self.chosen is not None:
            return self.chosen(count)
        if self._entropy is None:  # the seeds of the players seated when the dice first roll
            seeds = [self._seeds.get(p.player_id, "") for p in self._players]
            self._entropy = fairdice.client_entropy(seeds)
        return fairdice.faces(self.seed, self._entropy, n, count)
