"""The views of the protocol <-> domain boundary: what a room record, a hint and a game's
analysis look like on the wire (snapshots, room states and summaries, hint results, game
analyses), and the engine events of a room's log. The other half, commands, events and error
codes, is :mod:`server.boundary.translate`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import msgspec

import protocol.messages as pm
from protocol.types import Box, HintKind, Level, Phase, RoomStatus
from server import game, solver
from server.boundary import translate
from server.domain import room, roomlist
from server.strategy.computers import Hint

__all__ = [
    "engine_events",
    "game_analysis",
    "hint_result",
    "room_state",
    "room_summary",
    "snapshot",
]


# -- views ----------------------------------------------------------------------------------------


def _totals(t: game.Totals) -> pm.Totals:
    return pm.Totals(
        upper=t.upper,
        upper_bonus=t.upper_bonus,
        lower=t.lower,
        yahtzee_bonus=t.yahtzee_bonus,
        grand=t.grand,
    )


def _player_views(record: room.RoomRecord, grace_seconds: float) -> tuple[pm.PlayerView, ...]:
    views = []
    for seat, p in enumerate(record.game.players):
        card = p.card
        views.append(
            pm.PlayerView(
                player=p.player_id,
                name=p.name,
                seat=seat,
                connected=bool(record.connected.get(p.player_id, False)),
                forfeited=p.forfeited,
                scorecard={Box(b.value): card.get(b) for b in card.boxes},
                totals=_totals(card.totals()),
                computer=Level(p.computer) if p.computer is not None else None,
                away_deadline_ms=room.away_deadline(record, p.player_id, grace_seconds),
            )
        )
    return tuple(views)


def _round_number(state: game.GameState, current: str | None) -> int:
    if current is not None:
        player = state.player(current)
        return player.card.filled_count + 1 if player is not None else 0
    if state.phase == game.Phase.FINISHED:
        return len(game.boxes_for(state.options.rules))
    return 0


def room_state(room_id: str, record: room.RoomRecord, grace_seconds: float = 0.0) -> pm.RoomState:
    """The whole room as the wire shows it (no secrets: no tokens, invite or dice seed, nor the
    rematch's invite code). ``grace_seconds``: the absent-player grace (away deadlines)."""
    state = record.game
    current = game.current_player(state)
    rolled = state.phase == game.Phase.ROLLED
    return pm.RoomState(
        id=room_id,
        status=RoomStatus(roomlist.status(state)),
        public=record.meta.public,
        max_seats=state.max_seats,
        turn_seconds=0 if record.meta.correspondence else record.meta.turn_seconds,
        options=translate.wire_options(state),
        host=state.host,
        players=_player_views(record, grace_seconds),
        phase=Phase(state.phase.value if state.phase != game.Phase.ROLL_OFF else "lobby"),
        order=tuple(state.order),
        current_player=current,
        round=_round_number(state, current),
        dice=tuple(state.dice),
        held=tuple(sorted(state.held)),
        roll_number=state.rolls_used if current is not None else 0,
        rolls_left=game.rolls_left(state),
        preview=translate.preview(state) if rolled else (),
        turn_deadline_ms=record.deadline_ms,
        spectators=record.spectators,
        joker=game.joker_active(state) if rolled else False,
        hints=record.meta.hints,
        auto_start=record.meta.auto_start,
        rated=record.meta.rated,
        computer_delay_ms=record.meta.computer_delay_ms,
        rematch_room=record.rematch.room if record.rematch is not None else None,
        correspondence=correspondence(record),
    )


def correspondence(record: room.RoomRecord) -> pm.Correspondence | None:
    """The room's correspondence clock as the wire shows it (None: an ordinary room)."""
    if not record.meta.correspondence:
        return None
    return pm.Correspondence(seconds_per_move=record.meta.turn_seconds)


def snapshot(
    room_id: str, seq: int, record: room.RoomRecord, grace_seconds: float = 0.0
) -> pm.Snapshot:
    """The ``snapshot`` message of a room at ``seq``."""
    return pm.Snapshot(room=room_id, seq=seq, state=room_state(room_id, record, grace_seconds))


def room_summary(summary: Mapping[str, Any]) -> pm.RoomSummary:
    """A lobby entry (see :func:`server.domain.room.summary`) as the wire type."""
    return msgspec.convert(dict(summary), pm.RoomSummary)


# -- the advisor ----------------------------------------------------------------------------------


def _hint_option(option: solver.Option) -> pm.HintOption:
    action, expected = option.action, round(option.expected, 3)
    if isinstance(action, solver.Reroll):
        return pm.HintOption(kind=HintKind.ROLL, keep=tuple(sorted(action.hold)), expected=expected)
    if isinstance(action, solver.ScoreBox):
        return pm.HintOption(kind=HintKind.SCORE, box=Box(action.box.value), expected=expected)
    return pm.HintOption(kind=HintKind.TAKE_BONUS, expected=expected)


def hint_result(hint: Hint) -> pm.HintResult:
    """The ``hint`` ack result for the advisor's options."""
    options = tuple(_hint_option(o) for o in hint.options)
    return pm.HintResult(player=hint.player, rolls_left=hint.rolls_left, options=options)


def engine_events(log: Iterable[pm.Event]) -> list[game.Event]:
    """The engine events a room's log records, as far as the analysis needs them (seats, turns,
    rolls, scores). The wire's running bonus totals become the engine's per-event amounts."""
    out: list[game.Event] = []
    bonus: dict[str, int] = {}
    for event in log:
        if isinstance(event, pm.PlayerJoined):
            computer = event.computer.value if event.computer is not None else None
            out.append(game.PlayerJoined(event.player, event.name, event.seat, computer))
        elif isinstance(event, pm.PlayerLeft):
            out.append(game.PlayerLeft(event.player, event.seat, event.forfeited))
        elif isinstance(event, pm.TurnChanged):
            out.append(game.TurnChanged(event.player, event.round))
        elif isinstance(event, pm.Rolled):
            out.append(
                game.Rolled(
                    event.player, event.dice, event.roll_number, event.rolls_left, event.held
                )
            )
        elif isinstance(event, pm.Scored | pm.BonusTaken):
            earned = event.yahtzee_bonus - bonus.get(event.player, 0)
            bonus[event.player] = event.yahtzee_bonus
            if isinstance(event, pm.BonusTaken):
                out.append(game.BonusTaken(event.player, earned, event.automatic, event.total))
                continue
            out.append(
                game.Scored(
                    event.player,
                    game.Box(event.box.value),
                    event.points,
                    0,
                    earned,
                    event.joker,
                    event.automatic,
                    event.total,
                )
            )
    return out


def _keep(choice: solver.Choice) -> tuple[int, ...] | None:
    return choice if isinstance(choice, tuple) else None


def _box(choice: solver.Choice) -> Box | None:
    return Box(choice.value) if isinstance(choice, game.Box) else None


def game_analysis(
    room_id: str, seq: int, record: room.RoomRecord, analysis: solver.GameAnalysis
) -> pm.GameAnalysis:
    """The HTTP analysis of a room's game."""
    seats = {p.player_id: p for p in record.game.players}
    players = []
    for review in analysis.players:
        seat = seats.get(review.player)
        decisions = tuple(
            pm.DecisionReview(
                player=d.player,
                turn=d.turn,
                roll=d.roll,
                kind=d.kind,
                chosen_keep=_keep(d.chosen) if d.kind == "keep" else None,
                best_keep=_keep(d.best) if d.kind == "keep" else None,
                chosen_box=_box(d.chosen) if d.kind == "box" else None,
                best_box=_box(d.best) if d.kind == "box" else None,
                chosen_expected=round(d.chosen_expected, 3),
                best_expected=round(d.best_expected, 3),
                loss=round(d.loss, 3),
            )
            for d in review.decisions
        )
        players.append(
            pm.PlayerAnalysis(
                player=review.player,
                name=seat.name if seat is not None else review.player,
                computer=Level(seat.computer) if seat is not None and seat.computer else None,
                decisions=decisions,
                total_loss=round(review.total_loss, 3),
                mean_loss=round(review.mean_loss, 3),
            )
        )
    return pm.GameAnalysis(
        room=room_id, seq=seq, options=translate.wire_options(record.game), players=tuple(players)
    )
