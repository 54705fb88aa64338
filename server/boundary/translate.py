"""The ONE place that translates between the rules engine and the wire protocol.

- commands: :func:`engine_command` turns a protocol play command into an engine command (the
  dice are left for the service to draw, see :func:`server.service.rooms.GameService`);
- events: :func:`wire_events` turns a commit's engine and room events into protocol events in
  one pass: numbered, with the turn's deadline and the fair-dice fields (the ``rolled`` event
  gains the preview of the state right after it);
- errors: :func:`error_code` gives the protocol code of every refusal the layers below raise
  (a test checks that each engine code has one);
- views (a room record, a hint, a game's analysis on the wire) are :mod:`server.boundary.views`.

The engine and the protocol evolve separately; only this module knows both.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import msgspec

import protocol.messages as pm
from protocol import fairdice
from protocol.errors import ERROR_CODES, ErrorCode
from protocol.types import Box, FirstPlayer, Level, Rules
from server import game
from server.domain import room
from server.domain.events import Occurred

__all__ = [
    "ENGINE_CODE_ALIASES",
    "engine_command",
    "engine_options",
    "error_code",
    "preview",
    "wire_events",
    "wire_options",
]

#: Engine codes that the protocol names differently.
ENGINE_CODE_ALIASES: Mapping[str, str] = {
    "name_taken": ErrorCode.INVALID_NAME,
    "invalid_command": ErrorCode.INVALID_FIELD,
}

PlayCommand = pm.Start | pm.Roll | pm.Hold | pm.Release | pm.Score | pm.TakeBonus


# -- commands -------------------------------------------------------------------------------------


def engine_command(command: PlayCommand, player: str) -> game.Command:
    """The engine command for a play command of ``player``. A ``Roll`` has no faces yet and a
    ``Start`` no random choice: the service, which owns randomness, fills them in."""
    if isinstance(command, pm.Start):
        return game.Start(player)
    if isinstance(command, pm.Roll):
        return game.Roll(player, (), frozenset(command.keep))
    if isinstance(command, pm.Hold):
        return game.Hold(player, frozenset(command.dice))
    if isinstance(command, pm.Release):
        return game.Release(player, frozenset(command.dice))
    if isinstance(command, pm.TakeBonus):
        return game.TakeBonus(player)
    return game.Score(player, game.Box(command.box.value))


def engine_options(options: pm.RoomOptions) -> game.RuleOptions:
    """The engine's rule options for the wire's room options."""
    return game.RuleOptions(
        rules=game.RuleSet(options.rules.value),
        extra_yahtzees=game.Toggle(options.extra_yahtzees.value),
        joker=game.JokerMode(options.joker.value),
        first_player=game.FirstPlayer(options.first_player.value),
        upper_first=game.Toggle(options.upper_first.value),
        bonus_turn=game.Toggle(options.bonus_turn.value),
    )


def wire_options(state: game.GameState) -> pm.RoomOptions:
    """The room options of a game, as the wire shows them."""
    return msgspec.convert(game.to_dict(state)["options"], pm.RoomOptions)


# -- errors ---------------------------------------------------------------------------------------


def error_code(code: str) -> str:
    """The protocol error code for a refusal's ``code`` (engine, room or service)."""
    code = ENGINE_CODE_ALIASES.get(code, code)
    if code not in ERROR_CODES:
        raise KeyError(f"no protocol error code for {code!r}")
    return code


# -- events ---------------------------------------------------------------------------------------

_NO_WIRE_FORM = frozenset({"roll_off_started"})


_WIRE_BOXES: Mapping[game.Box, Box] = {box: Box(box.value) for box in game.Box}


def preview(state: game.GameState) -> tuple[pm.PreviewEntry, ...]:
    return _wire_preview(game.preview(state))


def _wire_preview(boxes: Iterable[game.BoxPreview]) -> tuple[pm.PreviewEntry, ...]:
    wire_box = _WIRE_BOXES
    return tuple(
        pm.PreviewEntry(box=wire_box[p.box], allowed=p.allowed, points=p.points) for p in boxes
    )


def _room_event(event: room.RoomEvent, head: dict[str, Any]) -> pm.Event:
    if isinstance(event, room.PlayerBack):
        return pm.PlayerReconnected(**head, player=event.player)
    if isinstance(event, room.PlayerAway):
        return pm.PlayerDisconnected(
            **head, player=event.player, away_deadline_ms=event.deadline_ms
        )
    if isinstance(event, room.RematchOffer):
        return pm.RematchOffered(
            **head, player=event.player, rematch_room=event.room, invite_code=event.invite
        )
    if isinstance(event, room.RatingsAnnounced):
        return pm.RatingsChanged(
            **head,
            family=Rules(event.family),
            players=tuple(
                pm.RatingChange(
                    player=line.player,
                    identity=line.identity,
                    before=line.before,
                    after=line.after,
                    provisional=line.provisional,
                    accuracy=line.accuracy,
                    luck=line.luck,
                    decision_rating=line.decision_rating,
                )
                for line in event.lines
            ),
        )
    return pm.Spectators(**head, count=event.count)


class _Commit:
    """What every event of one commit shares: the room, the turn's clock, the fair dice."""

    def __init__(
        self, record: room.RoomRecord | None, deadline_ms: int | None, now: int | None
    ) -> None:
        self.record = record
        self.deadline_ms = deadline_ms
        self.now = now
        self._commitment: str | None = None

    @property
    def commitment(self) -> str | None:
        """The room's commitment to its dice seed (SPEC 12), made once per commit."""
        if self._commitment is None and self.record is not None:
            self._commitment = fairdice.commitment(bytes.fromhex(self.record.meta.dice_seed))
        return self._commitment

    def seed_of(self, player: str) -> str | None:
        return self.record.seeds.get(player) if self.record is not None else None

    def seeds(self) -> tuple[str, ...] | None:
        """The seats' client seeds, in seat order ("" for none)."""
        if self.record is None:
            return None
        return tuple(self.record.seeds.get(p.player_id, "") for p in self.record.game.players)

    @property
    def server_seed(self) -> str | None:
        if self.record is None or self.record.meta.tournament:
            return None  # a tournament's seed is revealed by the tournament, at its close
        return self.record.meta.dice_seed


def _game_event(
    event: game.Event, state: game.GameState, ctx: dict[str, Any], commit: _Commit
) -> pm.Event | None:
    """The wire event for one engine event (``state``: the state right after it), with the
    fair-dice fields: the commitment on ``player_joined`` and ``game_started`` with the
    players' seeds, the seed itself on ``game_over``."""
    if isinstance(event, game.PlayerJoined):
        return pm.PlayerJoined(
            **ctx,
            player=event.player,
            name=event.name,
            seat=event.seat,
            computer=Level(event.computer) if event.computer is not None else None,
            dice_commitment=commit.commitment,
            seed=commit.seed_of(event.player),
        )
    if isinstance(event, game.PlayerLeft):
        return pm.PlayerLeft(**ctx, player=event.player, seat=event.seat, forfeited=event.forfeited)
    if isinstance(event, game.HostChanged):
        return pm.HostChanged(**ctx, player=event.player)
    if isinstance(event, game.RollOffRolled):
        rolls = tuple(
            pm.RollOffRoll(player=r.player, dice=tuple(r.faces), total=r.total) for r in event.rolls
        )
        following = tuple(event.contenders_next) if len(event.contenders_next) > 1 else ()
        return pm.RollOff(**ctx, round=event.round, rolls=rolls, contenders_next=following)
    if isinstance(event, game.GameStarted):
        return pm.GameStarted(
            **ctx,
            order=tuple(event.order),
            first_player=FirstPlayer(event.first_player_mode.value),
            dice_commitment=commit.commitment,
            seeds=commit.seeds(),
        )
    if isinstance(event, game.TurnChanged):
        return pm.TurnChanged(
            **ctx,
            player=event.player,
            round=event.round,
            deadline_ms=commit.deadline_ms,
            server_time_ms=commit.now,
        )
    if isinstance(event, game.Rolled):
        shown = game.roll_view(state)
        return pm.Rolled(
            **ctx,
            player=event.player,
            dice=tuple(event.dice),
            roll_number=event.roll_number,
            rolls_left=event.rolls_left,
            held=tuple(event.held),
            preview=_wire_preview(shown.boxes),
            yahtzee_bonus_pending=shown.yahtzee_bonus_pending,
            joker=shown.joker,
        )
    if isinstance(event, game.HoldChanged):
        return pm.Held(**ctx, player=event.player, held=tuple(event.held))
    if isinstance(event, game.Scored):
        totals = game.totals(state, event.player)
        return pm.Scored(
            **ctx,
            player=event.player,
            box=_WIRE_BOXES[event.box],
            points=event.points,
            upper_bonus=totals.upper_bonus,
            yahtzee_bonus=totals.yahtzee_bonus,
            joker=event.joker,
            automatic=event.automatic,
            total=event.total,
        )
    if isinstance(event, game.BonusTaken):
        return pm.BonusTaken(
            **ctx,
            player=event.player,
            yahtzee_bonus=game.totals(state, event.player).yahtzee_bonus,
            automatic=event.automatic,
            total=event.total,
        )
    if isinstance(event, game.GameOver):
        names = {p.player_id: p.name for p in state.players}
        results = tuple(
            pm.Standing(
                player=s.player,
                name=names.get(s.player, s.player),
                total=s.total,
                place=s.place,
                forfeited=s.forfeited,
            )
            for s in event.results
        )
        return pm.GameOver(**ctx, results=results, server_seed=commit.server_seed)
    if event.type in _NO_WIRE_FORM:
        return None
    raise ValueError(f"no wire form for engine event {event.type!r}")  # pragma: no cover


def wire_events(
    room_id: str,
    events: Iterable[Occurred],
    record: room.RoomRecord | None,
    first_seq: int,
    *,
    deadline_ms: int | None = None,
    now: int | None = None,
) -> list[pm.Event]:
    """The protocol events of one commit, each made once and whole: numbered from
    ``first_seq``, ``turn_changed`` with the turn's deadline and the clock reading that set it
    (``now``), the fair-dice fields from ``record`` (the room as committed; None: left
    unset, as a v1.0 server sends them)."""
    commit = _Commit(record, deadline_ms, now)
    out: list[pm.Event] = []
    for event, state in events:
        head: dict[str, Any] = {"room": room_id, "seq": first_seq + len(out)}
        if isinstance(
            event,
            room.PlayerBack
            | room.PlayerAway
            | room.SpectatorCount
            | room.RematchOffer
            | room.RatingsAnnounced,
        ):
            out.append(_room_event(event, head))
        else:
            wire = _game_event(event, state, head, commit)
            if wire is not None:
                out.append(wire)
    return out
