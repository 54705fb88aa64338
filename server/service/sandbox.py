"""The sandbox (``yahtzee serve --sandbox``, SPEC.md 13.15): rooms whose dice follow a seed the
client chose, and rooms that start at a given game position, so that a client author can test
the rare cases (the Joker rule, an extra Yahtzee, the last turn) without playing twelve turns.

Only a sandbox server has the route that reaches this module; a normal server draws every
room's secret seed at random (:func:`server.domain.dice.new_seed`) and nothing here runs.

A sandbox room is an ordinary room in every other way: its secret seed is derived from the
client's ``seed`` (:func:`dice_seed`) instead of drawn, and the provably fair draws (SPEC.md 12)
do the rest, so the same seed, the same seats' ``join.seed`` and the same commands in the same
order give the same dice. A position room seats its people (not connected until they ``rejoin``
with the tokens of the answer), starts in seat order, and writes the position as events a
client already knows: a ``scored`` (``automatic``) for each box filled in the position, a
``turn_changed`` for the player on turn and, when the turn has dice, a ``rolled``.
"""

from __future__ import annotations

import dataclasses
import hashlib

import protocol.messages as pm
from protocol.errors import ErrorCode
from server import game
from server.boundary import translate
from server.domain import room
from server.domain.events import Occurred
from server.game.boxes import five_of_a_kind_box, lower_boxes
from server.game.scoring import joker_points
from server.game.state import DICE_COUNT
from server.service.outcomes import Cached, Change, Seated, ServiceError
from server.service.rooms import GameService
from server.service.seats import Seats

__all__ = ["create_room", "dice_seed", "position_cards"]

_SEED_DOMAIN = b"yahtzee-sandbox-v1\x00"


def dice_seed(seed: str) -> str:
    """The room's secret dice seed (hex, as :func:`server.domain.dice.new_seed` makes them) for
    a sandbox ``seed``: the same text always gives the same dice."""
    return hashlib.sha256(_SEED_DOMAIN + seed.encode()).hexdigest()


def _refuse(message: str) -> ServiceError:
    return ServiceError(ErrorCode.INVALID_FIELD, message)


def _possible_points(rules: game.RuleSet) -> dict[game.Box, frozenset[int]]:
    """Every score each box can hold: a box's score under some roll, or 0 (scratched), plus the
    Joker's fixed scores for the lower boxes of the official rules."""
    rolls = [
        (a, b, c, d, e)
        for a in range(1, 7)
        for b in range(a, 7)
        for c in range(b, 7)
        for d in range(c, 7)
        for e in range(d, 7)
    ]
    possible: dict[game.Box, frozenset[int]] = {}
    for box in game.boxes_for(rules):
        points = {0} | {game.score_box(rules, box, dice) for dice in rolls}
        if rules is game.RuleSet.YAHTZEE and box in lower_boxes(rules):
            points |= {joker_points(box, (face,) * 5) for face in range(1, 7)}
        possible[box] = frozenset(points)
    return possible


def _card(options: game.RuleOptions, player: pm.SandboxPlayer) -> game.Scorecard:
    rules = options.rules
    possible = _possible_points(rules)
    card = game.Scorecard.empty(rules)
    for wire_box, points in player.scores.items():
        box = game.Box(wire_box.value)
        if box not in possible:
            raise _refuse(f"{box} is not a box of {rules}")
        if points not in possible[box]:
            raise _refuse(f"{player.name}: {points} points cannot be written in {box}")
        card = card.with_score(box, points)
    bonuses = player.yahtzee_bonus // 100
    if bonuses:
        five = five_of_a_kind_box(rules)
        if not options.extra_yahtzee_rules or rules is not game.RuleSet.YAHTZEE:
            raise _refuse("an extra-Yahtzee bonus needs the official rules with extra_yahtzees on")
        if card.get(five) != 50:
            raise _refuse(f"{player.name}: an extra-Yahtzee bonus needs 50 in {five}")
        card = dataclasses.replace(card, yahtzee_bonuses=bonuses)
    return card


def position_cards(
    options: game.RuleOptions, position: pm.SandboxPosition
) -> tuple[game.Scorecard, ...]:
    """The players' cards of ``position``, checked: every score possible in its box, a bonus
    only with 50 in the YAHTZEE box, the player on turn with an open box, dice and rolls that
    agree. ``invalid_field`` otherwise."""
    cards = tuple(_card(options, player) for player in position.players)
    if position.turn >= len(cards):
        raise _refuse(f"turn {position.turn}: there are {len(cards)} players")
    if cards[position.turn].is_complete:
        raise _refuse("the player on turn has no open box")
    if position.dice and len(position.dice) != DICE_COUNT:
        raise _refuse("dice: five faces, or none before the turn's first roll")
    if bool(position.dice) != (position.rolls_used > 0):
        raise _refuse("rolls_used: 0 without dice, 1..3 with them")
    if position.held and not position.dice:
        raise _refuse("held: no dice to hold before the first roll")
    return cards


def _positioned(
    state: game.GameState, position: pm.SandboxPosition, cards: tuple[game.Scorecard, ...]
) -> tuple[game.GameState, list[Occurred]]:
    """The started ``state`` moved to ``position``, and the events that show it: a ``scored``
    for each filled box (each with the card as it stood then), ``turn_changed`` and ``rolled``."""
    events: list[Occurred] = []
    players = list(state.players)
    for seat, card in enumerate(cards):
        running = game.Scorecard.empty(card.rules)
        five = five_of_a_kind_box(card.rules)
        for box, points in card.filled().items():
            running = running.with_score(box, points)
            if box == five:  # the bonuses were earned with it
                running = dataclasses.replace(running, yahtzee_bonuses=card.yahtzee_bonuses)
            players[seat] = dataclasses.replace(players[seat], card=running)
            now = dataclasses.replace(state, players=tuple(players))
            total = running.totals().grand
            scored = game.Scored(players[seat].player_id, box, points, 0, 0, False, True, total)
            events.append(Occurred(scored, now))
    data = game.to_dict(dataclasses.replace(state, players=tuple(players)))
    data.update(
        phase=(game.Phase.ROLLED if position.dice else game.Phase.AWAITING_ROLL).value,
        turn=position.turn,
        dice=list(position.dice),
        held=sorted(set(position.held)),
        rolls_used=position.rolls_used,
    )
    final = game.from_dict(data)  # the engine's own check of the position
    player = final.order[position.turn]
    events.append(Occurred(game.TurnChanged(player, cards[position.turn].filled_count + 1), final))
    if position.dice:
        rolled = game.Rolled(
            player,
            tuple(position.dice),
            position.rolls_used,
            game.MAX_ROLLS - position.rolls_used,
            tuple(sorted(set(position.held))),
        )
        events.append(Occurred(rolled, final))
    return final, events


async def create_room(
    service: GameService, seats: Seats, request: pm.SandboxRoomRequest
) -> pm.SandboxRoom:
    """Create the sandbox room ``request`` asks for; with a position, seat its players, start
    the game and move it to the position (three steps: the room is playable after the last)."""
    options = translate.engine_options(request.options)
    position = request.position
    cards: tuple[game.Scorecard, ...] = ()
    if position is not None:  # a position plays in seat order
        options = dataclasses.replace(options, first_player=game.FirstPlayer.SEAT_ORDER)
        cards = position_cards(options, position)
    created = await service.create_room(
        options=options,
        seats=len(cards) or request.seats,
        public=False,
        turn_seconds=request.turn_seconds,
        hints=request.hints,
        dice_seed=dice_seed(request.seed),
    )
    assert created.invite is not None  # a private room
    if position is None:
        return pm.SandboxRoom(room=created.room, invite_code=created.invite)
    placed: list[pm.SandboxSeat] = []
    for player in position.players:
        outcome = await seats.join(created.room, player.name, created.invite, present=False)
        seat = outcome.result
        assert isinstance(seat, Seated)
        assert seat.token is not None
        placed.append(
            pm.SandboxSeat(player=seat.player, seat=seat.seat, name=player.name, token=seat.token)
        )

    def start_at_position(cached: Cached) -> Change:
        record = cached.record
        host = record.game.host
        assert host is not None
        record, events = service.apply(created.room, record, [game.Start(host)])
        state, shown = _positioned(record.game, position, cards)
        record = room.after_game(record, state, True, service.clock())
        return Change(record, events + shown)

    await service.transact(created.room, start_at_position)
    return pm.SandboxRoom(room=created.room, invite_code=created.invite, seats=tuple(placed))
