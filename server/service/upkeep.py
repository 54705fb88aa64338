"""What the service does on its own, not for a command: turn timers, absent players, computer
players' moves, the players of a dead process, and the spectator count.

Each job is claimed so that one process does it (deadlines and expired leases are claimed
atomically in Redis) and each change is a normal compare-and-set transition of the room, so a
job is done exactly once however many processes look at it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from server import game
from server.domain import deadlines, room
from server.domain.events import Occurred, occurred
from server.ops.cancel import cancel_and_wait
from server.service.outcomes import Cached, Change
from server.service.rooms import GameService
from server.service.seats import Seats, revoked
from server.storage.redis_store import lease_member, parse_lease
from server.strategy import computers
from server.strategy.computers import Advisor
from server.strategy.plan_batch import PlanBatcher

__all__ = ["Upkeep"]

log = logging.getLogger("yahtzee.upkeep")

TABLE_WAIT_MS = 500
"""How long a computer's move waits, again and again, while its strategy table loads."""

LEASE_SLICE = 500
"""Player leases renewed by one script call (a round trip each slice)."""

RECOUNT_WAVE = 64
"""Rooms recounted at once by a flush of the spectator counts: a Redis Cluster client's pool
does not wait for a free connection but fails the call, and thousands of rooms due at once
(every spectator of a dead process arriving elsewhere) would take the connections the players'
commands need."""

WAKE_TICK_MS = 10
"""Local wake-ups are grouped in ticks of this many milliseconds: the computers' moves of every
room due in one tick are made in one turn of the loop, so their plans are made in one batch and
their commits leave in one Redis write, and the loop wakes once for them all (at 3,000 rooms of
computers, about 1,650 moves a second, some 16 a tick). A move is at most a tick later."""


class Upkeep:
    """The background jobs of one process, on top of its :class:`GameService`."""

    def __init__(self, service: GameService, seats: Seats, advisor: Advisor | None = None) -> None:
        self.service = service
        self.seats = seats
        self.store = service.store
        self.advisor = advisor or Advisor()
        self.plans = PlanBatcher()
        self.decisions = computers.Decisions()
        self._counts_due: set[str] = set()
        self._wakes: dict[str, int] = {}  # room -> the tick its wake-up waits for
        self._ticks: dict[int, tuple[asyncio.TimerHandle, list[str]]] = {}
        self._firing: set[asyncio.Task[None]] = set()

    # -- local wake-ups: a computer's move made on time ---------------------------------------

    def wake_soon(self, room_id: str, at_ms: int) -> None:
        """Fire the room's deadline at ``at_ms`` from this process, in the first tick of
        :data:`WAKE_TICK_MS` after it (the shared schedule, polled every ``timer_poll_seconds``
        by every process, stays the fallback)."""
        # + 1 ms: the loop's timers round to its millisecond clock, and one in seven fired a
        # millisecond before the record's due time (measured with uvloop)
        tick = -(-(at_ms + 1) // WAKE_TICK_MS) * WAKE_TICK_MS
        self._wakes[room_id] = tick  # a later call moves the room to its new tick
        waiting = self._ticks.get(tick)
        if waiting is not None:
            waiting[1].append(room_id)
            return
        delay = max(0.0, (tick - self.service.clock()) / 1000)
        handle = asyncio.get_running_loop().call_later(delay, self._tick, tick)
        self._ticks[tick] = (handle, [room_id])

    def _tick(self, tick: int) -> None:
        _, rooms = self._ticks.pop(tick)
        for room_id in dict.fromkeys(rooms):
            if self._wakes.get(room_id) == tick:  # not moved to another tick since
                del self._wakes[room_id]
                self._wake(room_id)

    def _wake(self, room_id: str) -> None:
        seen = self.service.cached(room_id)
        due = seen.record.computer_ms if seen is not None else None
        if due is not None and due > self.service.clock():
            # Woken before the move is due (the loop's clock is coarser than the record's, and
            # it lags under load): fired now, the move would not be due, and only the polled
            # schedule would make it, up to ``timer_poll_seconds`` late. Wait the rest.
            self.wake_soon(room_id, due)
            return
        task = asyncio.create_task(self._fire_logged(room_id), name=f"wake-{room_id}")
        self._firing.add(task)
        task.add_done_callback(self._firing.discard)

    async def _fire_logged(self, room_id: str) -> None:
        try:
            await self.fire_timer(room_id)
        except Exception as exc:  # the polled schedule tries again
            log.warning("room %s: a computer's move failed: %r", room_id, exc)

    async def stop(self) -> None:
        """Cancel the pending wake-ups (shutdown)."""
        for handle, _ in self._ticks.values():
            handle.cancel()
        self._ticks.clear()
        self._wakes.clear()
        await cancel_and_wait(self._firing, 5)  # (copied by it before any await)

    # -- deadlines: the turn timer and absent players ------------------------------------------

    async def fire_due_timers(self) -> int:
        """Claim and fire every due deadline. Returns how many this process acted on."""
        now = self.service.clock()
        fired = 0
        due = await self.store.due_deadlines(now)
        # the computers' plans of every due room in one batch, not one by one as they fire
        await asyncio.gather(*map(self._plan_ahead, due))
        for room_id in due:
            if await self.store.claim_deadline(room_id, now) and await self.fire_timer(room_id):
                fired += 1
        return fired

    async def fire_timer(self, room_id: str) -> bool:
        """Act on a due deadline: play the turn (roll if needed, then the best box, marked
        automatic) when the turn timer ran out or the player on turn is absent; make the move
        of a computer player on turn; remove an absent host who blocks the lobby. Returns
        whether this call acted."""
        service = self.service
        acted = False
        await self._plan_ahead(room_id)
        # The seats' fields only matter to remove an absent host from a lobby. A room leaves
        # its lobby once and never comes back, so when this process saw it past the lobby the
        # round trip is saved (most timers fire for computers' moves in games under way).
        seen = service.cached(room_id)
        in_lobby = seen is None or seen.record.game.phase == game.Phase.LOBBY
        fields = await self.store.seat_fields(room_id) if in_lobby else None

        def step(cached: Cached) -> Change | None:
            nonlocal acted
            record, now = cached.record, service.clock()
            events: list[Occurred] = []
            turn_due = record.deadline_ms is not None and record.deadline_ms <= now
            absent_due = record.absent_ms is not None and record.absent_ms <= now
            computer_due = record.computer_ms is not None and record.computer_ms <= now
            acted = False
            if not (turn_due or absent_due or computer_due):
                return None
            state = record.game
            computer = deadlines.computer_on_turn(state)
            if computer_due and computer is not None and not turn_due:
                change = self._computer_moves(room_id, record, *computer, now)
                acted = bool(change.events)
                return change
            if state.phase == game.Phase.LOBBY:
                host = state.host
                if not absent_due or host is None or fields is None:
                    return None  # (fields is None only if the room had left its lobby)
                acted = True
                record, events = service.apply(room_id, record, [game.Leave(host)])
                return Change(room.forget(record, host), events, seats=revoked(fields, host))
            player = game.current_player(state)
            if player is None:
                return None
            acted = True
            if state.phase == game.Phase.AWAITING_ROLL:
                record, events = service.apply(room_id, record, [game.Roll(player, ())])
            score = game.Score(player, game.best_auto_score(record.game), automatic=True)
            record, more = service.apply(room_id, record, [score])
            return Change(record, events + more)

        outcome = await service.if_exists(service.transact(room_id, step))
        if outcome is None:
            await self.store.set_deadline(room_id, None)  # the room expired
            return False
        if acted:
            service.metrics.timer_fired.inc()
        elif outcome.record is not None:  # not due (yet): the hint follows the record
            await self.store.set_deadline(room_id, deadlines.wake_at(outcome.record))
        return acted

    async def _plan_ahead(self, room_id: str) -> None:
        """When the room (as this process saw it last) has a computer on turn, have the plan of
        its turn computed in a batch with other computers' (:class:`PlanBatcher`) before the
        move: the move's decision then finds it in the memo."""
        cached = self.service.cached(room_id)
        if cached is None or cached.record.computer_ms is None:
            return
        if self.decisions.pending(room_id):  # the move carries out a decision: no plan needed
            return
        state = cached.record.game
        computer = deadlines.computer_on_turn(state)
        brain = self.advisor.player(state.options, computer[1]) if computer else None
        if computer is None or brain is None:
            return
        card = game.scorecard(state, computer[0])
        if state.phase is game.Phase.AWAITING_ROLL:  # the roll needs no plan: ask, go on
            self.plans.request(brain.table, card)
        else:
            await self.plans.ready(brain.table, card)

    def _computer_moves(
        self, room_id: str, record: room.RoomRecord, player: str, level: str, now: int
    ) -> Change:
        """The computer's next move (with no delay: its whole turn). While its strategy table
        loads, the move waits a little (the change only moves the time)."""
        brain = self.advisor.player(record.game.options, level)
        if brain is None:
            return Change(record.replace(computer_ms=now + TABLE_WAIT_MS))
        show_holds = record.meta.computer_delay_ms > 0
        events: list[Occurred] = []
        while deadlines.computer_on_turn(record.game) == (player, level):
            seed = record.meta.dice_seed
            move = self.decisions.next_move(room_id, brain, record.game, player, seed, show_holds)
            record, more = self.service.apply(room_id, record, [move])
            events += more
            if show_holds:
                break
        # cleared: the commit sets the next move's time if a computer is (still) on turn
        return Change(record.replace(computer_ms=None), events)

    # -- player leases --------------------------------------------------------------------------

    async def renew_lease(self, room_id: str, player: str, conn_id: str, lease_ms: int) -> bool:
        """Renew a player connection's lease; True when it had been swept (then the seat is
        claimed back, unless another connection holds it by now)."""
        member = lease_member(room_id, player, conn_id)
        swept = await self.store.lease_put(member, room_id, self.service.clock() + lease_ms)
        if swept:
            await self.seats.claim_seat(room_id, player, conn_id, reclaim=True)
        return swept

    async def renew_leases(self, leases: Sequence[tuple[str, str, str]], lease_ms: int) -> int:
        """Renew many player connections' leases (``(room, player, conn_id)``), a round trip
        per :data:`LEASE_SLICE`; the seats of those swept meanwhile are claimed back, as
        :meth:`renew_lease` does. Returns how many had been swept."""
        members = {lease_member(*lease): lease for lease in leases}
        expires = self.service.clock() + lease_ms
        pairs = [(m, r) for m, (r, _, _) in members.items()]
        swept: list[str] = []
        # in slices: one script call for every connection of a process held Redis and this
        # loop (the arguments built, the reply read) for tens of ms at thousands of them
        for start in range(0, len(pairs), LEASE_SLICE):
            swept += await self.store.leases_put(pairs[start : start + LEASE_SLICE], expires)
        for member in swept:
            room_id, player, conn_id = members[member]
            await self.seats.claim_seat(room_id, player, conn_id, reclaim=True)
        return len(swept)

    async def drop_lease(self, room_id: str, player: str, conn_id: str) -> None:
        await self.store.lease_drop(lease_member(room_id, player, conn_id), room_id)

    async def sweep_player_leases(self) -> int:
        """Mark the players of expired leases (a dead process's) disconnected; each lease is
        claimed by exactly one sweeper. Returns how many this call claimed."""
        now = self.service.clock()
        claimed = 0
        for member in await self.store.expired_leases(now):
            room_id, player_id, conn_id = parse_lease(member)
            if await self.store.claim_lease(member, room_id, now):
                claimed += 1
                await self.seats.release_seat(room_id, player_id, conn_id)
        return claimed

    # -- spectators: counted in leases, announced at most once per flush --------------------

    async def spectator_joined(self, room_id: str, conn_id: str, lease_ms: int) -> None:
        await self.store.spectator_put(room_id, conn_id, lease_ms, self.service.clock())
        self._counts_due.add(room_id)

    async def spectator_left(self, room_id: str, conn_id: str) -> None:
        await self.store.spectator_drop(room_id, conn_id, self.service.clock())
        self._counts_due.add(room_id)

    async def renew_spectators(self, spectators: dict[str, list[str]], lease_ms: int) -> None:
        """Renew the leases of many spectator connections (room -> connection ids) at once
        (:meth:`~server.storage.interface.Store.spectators_renew_rooms`: on a single Redis a
        script call for up to 200 rooms, on a Cluster one a room, several at a time). A room
        whose count (after the expired leases of dead processes were pruned) differs from the
        one this process last saw, or whose renewal failed, is counted at the next flush; an
        unchanged one costs nothing more. The first error met is raised once every room was
        seen to."""
        now = self.service.clock()
        try:
            counts = await self.store.spectators_renew_rooms(
                list(spectators.items()), lease_ms, now
            )
        except Exception:
            self._counts_due.update(spectators)  # not read this time: counted at the next flush
            raise
        for room_id, count in zip(spectators, counts, strict=True):
            cached = self.service.cached(room_id)
            if cached is None or cached.record.spectators != count:
                self._counts_due.add(room_id)
        _raise_first(counts)

    async def flush_spectator_counts(self) -> None:
        """Announce the spectator count of every room whose count may have changed since the
        last flush: one ``spectators`` event per room and flush at most, however many joined.
        The rooms are counted :data:`RECOUNT_WAVE` at a time; a room whose count failed (Redis)
        is counted next time."""
        due, self._counts_due = self._counts_due, set()
        rooms = list(due)
        done: list[object] = []
        for start in range(0, len(rooms), RECOUNT_WAVE):
            wave = rooms[start : start + RECOUNT_WAVE]
            done += await asyncio.gather(*map(self._flush_count, wave), return_exceptions=True)
        self._counts_due.update(r for r, d in zip(rooms, done, strict=True) if d is not None)
        _raise_first(done)

    async def _flush_count(self, room_id: str) -> None:
        count = await self.store.spectator_drop(room_id, "", self.service.clock())
        await self.set_spectators(room_id, count)

    async def set_spectators(self, room_id: str, count: int) -> None:
        """Announce ``count`` as the room's spectator count unless it is the count already.
        When another process wrote a count between this process's read and its commit (the
        step saw the room's count change), ``count`` may be the older one: the room is counted
        again at the next flush."""
        seen: set[int] = set()

        def step(cached: Cached) -> Change | None:
            seen.add(cached.record.spectators)
            if cached.record.spectators == count:
                return None
            record = cached.record.replace(spectators=count)
            events = occurred([room.SpectatorCount(count)], record.game)
            return Change(record, events)

        await self.service.if_exists(self.service.transact(room_id, step))
        if len(seen) > 1:
            self._counts_due.add(room_id)


def _raise_first(results: Sequence[object]) -> None:
    """Raise the first exception of a ``gather(..., return_exceptions=True)``, if any (the
    others were awaited too: none is left unretrieved)."""
    for result in results:
        if isinstance(result, BaseException):
            raise result
