"""Duplicate tournaments: every entry is a solitaire room rolling the tournament's dice.

A tournament (PostgreSQL, :mod:`server.storage.tournaments`) has a secret seed whose
commitment is public from its creation; the seed is served only once the end time has passed.
Entering (``enter``) creates a private one-seat room whose dice are the tournament's duplicate
dice (:mod:`protocol.duplicate`), seats the identity in it (the seat token is returned once) and
records the entry; the room starts by itself and is played over the WebSocket like any other
(``rejoin`` with the token). Its commits keep the live leaderboard (Redis sorted set,
:mod:`server.storage.standings`) up to date; play stops at the end time (``tournament_closed``).

Nothing leaks future dice before the close: the entry has no hints, its ``game_over`` does not
reveal the seed, its room is private (the invite codes are shown after the close), the
reference line of the optimal player is computed and shown only after the close. A tournament
with a watch delay shows its entries' events that old while open
(:mod:`server.service.tournament_watch`); the request parsing is
:mod:`server.service.tournament_spec`.

The close (``close_due``, run by every process's loop, written once thanks to
``closed_at IS NULL``) reads every entry's room, computes its accuracy against optimal play and
the optimal player's total on the tournament's dice, and archives the results. The loop also
creates the daily tournament, once per UTC day whoever comes first (``daily_of`` is unique).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import functools
import hmac
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import msgspec

import protocol.messages as pm
from protocol import duplicate, fairdice
from server import game
from server.boundary import translate
from server.domain import record_format, room
from server.service import steps
from server.service.outcomes import Seated
from server.service.rooms import GameService
from server.service.seats import Seats
from server.service.tournament_spec import Spec, TournamentError, at, ms
from server.service.tournament_watch import WatchPage, watch_page
from server.settings import Settings
from server.solver import computer_player
from server.solver.duplicate import total_on_dice
from server.solver.players import ComputerPlayer
from server.storage.standings import Standings
from server.storage.tournaments import (
    EntryRefusedError,
    EntryResult,
    EntryRow,
    TournamentRepository,
    TournamentRow,
)
from server.strategy import computers

__all__ = ["Entered", "TournamentError", "Tournaments", "WatchPage"]

log = logging.getLogger("yahtzee.tournaments")

LISTING_LIMIT = 100
DAILY_NAME = "Daily duplicate"


@dataclass(frozen=True, slots=True)
class Entered:
    """A new entry: the room to play and the seat token (shown this once)."""

    tournament: TournamentRow
    entry: EntryRow
    seat: int
    token: str


Analyse = Callable[[room.RoomRecord, list[bytes]], Awaitable[Mapping[str, float] | None]]
"""A finished room's record and log -> each player's share of optimal decisions."""
Reference = Callable[[game.RuleOptions], Awaitable[ComputerPlayer | None]]
"""The optimal computer player of a rule set (``None`` while its table is not loaded)."""


class Tournaments:
    """The tournaments of the service (see the module docstring)."""

    def __init__(
        self,
        repo: TournamentRepository,
        standings: Standings,
        service: GameService,
        seats: Seats,
        settings: Settings,
        *,
        analyse: Analyse | None = None,
        reference: Reference | None = None,
    ) -> None:
        self.repo = repo
        self.standings = standings
        self.service = service
        self.seats = seats
        self.settings = settings
        self.analyse = analyse
        self.reference = reference
        self.closed = 0
        #: seconds from an entry's commit to its total in the leaderboard (the figure)
        self.update_seconds: list[float] = []

    def now(self) -> int:
        return self.service.clock()

    # -- who may create -----------------------------------------------------------------------

    def is_admin(self, credential: str | None) -> bool:
        """Whether ``credential`` is the operator's admin token (constant-time compare)."""
        token = self.settings.admin_token
        if not token or credential is None:
            return False
        return hmac.compare_digest(credential.encode(), token.encode())

    # -- creating and reading -----------------------------------------------------------------

    async def create(
        self, body: Mapping[str, Any], created_by: str | None, *, daily_of: dt.date | None = None
    ) -> tuple[TournamentRow, str | None]:
        """A new tournament and, for an invite-only one, its invite code (shown this once)."""
        spec = Spec.parse(body, self.now(), self.settings.tournament_watch_delay_seconds)
        seed = fairdice.new_server_seed()
        invite = None if spec.public else steps.new_invite()
        row = TournamentRow(
            id="t" + steps.new_room_id(),
            name=spec.name,
            options=msgspec.to_builtins(spec.options),
            starts_at=at(spec.starts_ms),
            ends_at=at(spec.ends_ms),
            entry_limit=spec.entry_limit,
            public=spec.public,
            invite_hash=room.hash_secret(invite) if invite else None,
            attempts=spec.attempts,
            rated=spec.rated,
            seed=seed.hex(),
            commitment=fairdice.commitment(seed),
            created_by=created_by,
            daily_of=daily_of,
            watch_delay_seconds=spec.watch_delay_seconds,
        )
        made = await self.repo.create(row)
        return made, invite if made is row else None

    async def get(self, tournament_id: str, invite: str | None) -> TournamentRow:
        """The tournament; ``tournament_not_found`` for an unknown one and for an invite-only
        one without its code."""
        found = await self.repo.get(tournament_id)
        if found is None or not _admits(found, invite):
            raise TournamentError("tournament_not_found", "no tournament has this id", 404)
        return found

    async def listing(self) -> list[TournamentRow]:
        """Public tournaments not ended for more than a day, soonest end first."""
        since = at(self.now() - 86_400_000)
        return [t for t in await self.repo.listing(since, LISTING_LIMIT) if t.public]

    def view(self, t: TournamentRow) -> dict[str, Any]:
        """The tournament as the HTTP API shows it: the seed only once it is over."""
        now = self.now()
        over = now >= ms(t.ends_at)
        status = "closed" if over else ("open" if now >= ms(t.starts_at) else "upcoming")
        return {
            "tournament": t.id,
            "name": t.name,
            "options": dict(t.options),
            "starts_ms": ms(t.starts_at),
            "ends_ms": ms(t.ends_at),
            "status": status,
            "entry_limit": t.entry_limit,
            "entries": t.entries,
            "public": t.public,
            "attempts": t.attempts,
            "rated": t.rated,
            "daily": t.daily_of is not None,
            "watch_delay_seconds": t.watch_delay_seconds,
            "dice_commitment": t.commitment,
            "seed": t.seed if over else None,
            "optimal_score": t.optimal_score if over else None,
        }

    # -- entering -----------------------------------------------------------------------------

    async def enter(
        self, tournament_id: str, identity: str, name: str, invite: str | None
    ) -> Entered:
        """A new entry for ``identity`` (see the module docstring)."""
        t = await self.get(tournament_id, invite)
        now = self.now()
        if now < ms(t.starts_at):
            raise TournamentError("tournament_not_started", "the tournament has not started", 409)
        if now >= ms(t.ends_at):
            raise TournamentError("tournament_closed", "the tournament is over", 409)
        if await self.repo.attempts_of(t.id, identity) >= t.attempts:
            raise TournamentError("already_entered", "you used every attempt", 409)
        if t.entry_limit is not None and t.entries >= t.entry_limit:
            raise TournamentError("tournament_full", "the tournament is full", 409)
        options = translate.engine_options(msgspec.convert(t.options, pm.RoomOptions))
        code = steps.new_invite()  # keeps the entry private: shown after the close
        created = await self.service.create_room(
            options=options,
            seats=1,
            public=False,
            invite=code,
            hints=False,  # the advisor would play for the entrant
            computer_delay_ms=0,
            auto_start=True,
            tournament=(t.id, t.seed, ms(t.ends_at)),
        )
        outcome = await self.seats.join(created.room, name, code, present=False, identity=identity)
        seated = outcome.result
        assert isinstance(seated, Seated)
        assert seated.token is not None
        entry = EntryRow(t.id, identity, 0, created.room, code, seated.player, name)
        try:
            entry = await self.repo.add_entry(t, entry)
        except EntryRefusedError as exc:  # a racing request took it (the room just expires)
            raise TournamentError(exc.reason, "no entry left for you", 409) from None
        await self.standings.enter(t.id, created.room, name)
        return Entered(t, entry, seated.seat, seated.token)

    # -- standings ----------------------------------------------------------------------------

    async def on_commit(
        self, tournament_id: str, room_id: str, total: int, last_seq: int, now: int
    ) -> None:
        """An entry committed events up to ``last_seq`` at ``now`` and its total is ``total``
        (told by the service right after each commit)."""
        started = asyncio.get_running_loop().time()
        await self.standings.committed(tournament_id, room_id, total, last_seq, now)
        if len(self.update_seconds) < 100_000:
            self.update_seconds.append(asyncio.get_running_loop().time() - started)

    async def standings_view(
        self, tournament_id: str, invite: str | None, limit: int
    ) -> dict[str, Any]:
        """The leaderboard: live from Redis while open; archived (with the entries' rooms,
        invite codes, accuracy and the optimal reference) once closed."""
        t = await self.get(tournament_id, invite)
        over = self.now() >= ms(t.ends_at)
        rows: list[dict[str, Any]] = []
        if over and t.closed_at is not None:
            for e in (await self.repo.entries(t.id))[:limit]:
                rows.append(
                    {
                        "place": e.place,
                        "name": e.name,
                        "player": e.identity_id,
                        "score": e.score or 0,
                        "finished": bool(e.finished),
                        "accuracy": e.accuracy,
                        "room": e.room_id,
                        "invite_code": e.invite,
                    }
                )
        else:
            board = await self.standings.top(t.id, limit)
            board.sort(key=lambda row: (-row[2], row[1], row[0]))
            for place, (room_id, name, score) in enumerate(board, start=1):
                row: dict[str, Any] = {"place": place, "name": name, "score": score}
                if over or t.watch_delay_seconds is not None:  # watched late (13.23)
                    row["room"] = room_id
                rows.append(row)
        return {
            "tournament": t.id,
            "status": "closed" if over else "open",
            "final": over and t.closed_at is not None,
            "optimal_score": t.optimal_score if over else None,
            "entries": rows,
        }

    async def watch(
        self, tournament_id: str, room_id: str, invite: str | None, after: int, limit: int
    ) -> WatchPage:
        """An entry's events that may be shown now (:mod:`server.service.tournament_watch`)."""
        t = await self.get(tournament_id, invite)
        return await watch_page(
            t,
            room_id,
            after,
            limit,
            now=self.now(),
            repo=self.repo,
            standings=self.standings,
            store=self.service.store,
        )

    # -- the close and the daily tournament -----------------------------------------------------

    async def close_due(self) -> int:
        """Archive the results of every tournament past its end (once); how many closed."""
        done = 0
        for t in await self.repo.due_for_close(at(self.now())):
            results = await self._results(t)
            optimal = await self._optimal(t)
            if await self.repo.close(t.id, optimal, results):
                done += 1
                log.info("tournament %s closed: %d entries", t.id, len(results))
        self.closed += done
        return done

    async def _results(self, t: TournamentRow) -> list[EntryResult]:
        scored: list[tuple[int, bool, float | None, str]] = []
        for entry in await self.repo.entries(t.id):
            stored = await self.service.store.load(entry.room_id)
            if stored is None:  # expired unplayed: nothing scored
                scored.append((0, False, None, entry.room_id))
                continue
            record = record_format.decode_record(stored.record)
            state = record.game
            total = game.totals(state, entry.player_id).grand if state.players else 0
            finished = state.phase is game.Phase.FINISHED
            accuracy = None
            if self.analyse is not None and state.players:
                log_entries = await self.service.store.read_events(entry.room_id, 0, 10_000)
                shares = await self.analyse(record, [data for _, data in log_entries])
                accuracy = None if shares is None else shares.get(entry.player_id)
            scored.append((total, finished, accuracy, entry.room_id))
        scored.sort(key=lambda s: -s[0])
        results = []
        for index, (total, finished, accuracy, room_id) in enumerate(scored):
            place = 1 + sum(1 for other in scored[:index] if other[0] > total)
            results.append(EntryResult(room_id, total, finished, accuracy, place))
        return results

    async def _optimal(self, t: TournamentRow) -> int | None:
        if self.reference is None:
            return None
        options = translate.engine_options(msgspec.convert(t.options, pm.RoomOptions))
        player = await self.reference(options)
        if player is None:
            return None
        dice = functools.partial(duplicate.duplicate_roll, bytes.fromhex(t.seed))
        return await asyncio.to_thread(total_on_dice, player, dice)

    async def ensure_daily(self) -> TournamentRow:
        """Today's (UTC) daily tournament, created if no process made it yet."""
        now = self.now()
        day = at(now).date()
        existing = await self.repo.daily(day)
        if existing is not None:
            return existing
        midnight = dt.datetime.combine(day, dt.time(), dt.UTC)
        body = {
            "name": f"{DAILY_NAME} {day.isoformat()}",
            "starts_ms": ms(midnight),
            "ends_ms": ms(midnight + dt.timedelta(days=1)),
        }
        made, _ = await self.create(body, None, daily_of=day)
        return made

    async def run(self) -> None:
        """Every process: close what is due and make the daily tournament, for ever."""
        while True:
            try:
                if self.settings.daily_tournament:
                    await self.ensure_daily()
                await self.close_due()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a database or Redis down: the next pass tries again
                log.warning("tournaments: %s", exc)
            await asyncio.sleep(self.settings.tournament_poll_seconds)


def _admits(t: TournamentRow, invite: str | None) -> bool:
    if t.public:
        return True
    return invite is not None and t.invite_hash == room.hash_secret(invite)


def reference_player(
    advisor: computers.Advisor,
) -> Reference:
    """The optimal player of a rule set from the process's advisor (waits for its table)."""

    async def reference(options: game.RuleOptions) -> ComputerPlayer | None:
        table = await advisor.ready(options, within=30.0)
        if table is None:
            return None
        return computer_player("optimal", table)

    return reference
