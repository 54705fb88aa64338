"""The reminder webhook's sender: a background loop that POSTs the outbox's due deliveries
(:mod:`server.storage.correspondence`) to ``YAHTZEE_WEBHOOK_URL``.

Nothing here is on a game's path: commits only queue a delivery in Redis; this loop, in every
process, claims due ones (a lease, so that one process sends each), sends each with a timeout,
and forgets it on a 2xx answer. Any other answer, a timeout or a refused connection schedules a
retry with exponential backoff (doubling, jittered, capped); after ``webhook_max_attempts`` the
delivery is kept as a dead letter and logged. A process that dies mid-send leaves its claim to
expire and another sends it again: deliveries are at-least-once, and every attempt carries the
same ``Idempotency-Key`` and the same body.

Each request carries::

    Content-Type: application/json
    Idempotency-Key: <the delivery id>
    X-Yahtzee-Event: your_turn | clock_running_out
    X-Yahtzee-Signature: sha256=<hex HMAC-SHA256 of the raw body, keyed by the secret>

The secret and the signature never reach a log line; a failure is logged with the delivery id,
the attempt and the HTTP status or the exception's class.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
from collections.abc import Callable

import httpx
import msgspec
from redis.backoff import EqualJitterBackoff

from server.domain.timing import now_ms
from server.service.correspondence import Correspondence, Reminder
from server.settings import Settings
from server.storage.correspondence import CorrespondenceStore, Pending

__all__ = ["WebhookSender", "sign"]

log = logging.getLogger("yahtzee.webhook")

SIGNATURE_HEADER = "X-Yahtzee-Signature"
PARALLEL_SENDS = 8
"""Deliveries one process sends at once (a slow receiver does not hold the others back)."""


def sign(secret: str, body: bytes) -> str:
    """The signature header's value: ``sha256=`` and the hex HMAC-SHA256 of ``body``."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


class WebhookSender:
    """Sends due deliveries; :meth:`send_due` is one round, run periodically by the server."""

    def __init__(
        self,
        outbox: CorrespondenceStore,
        correspondence: Correspondence,
        settings: Settings,
        client: httpx.AsyncClient,
        clock: Callable[[], int] = now_ms,
    ) -> None:
        assert settings.webhook_url is not None
        assert settings.webhook_secret
        self.outbox = outbox
        self.correspondence = correspondence
        self.url = settings.webhook_url
        self._secret = settings.webhook_secret
        self.settings = settings
        self.client = client
        self.clock = clock
        self._backoff = EqualJitterBackoff(
            cap=settings.webhook_backoff_cap_seconds, base=settings.webhook_backoff_seconds
        )
        self._lease_ms = int(settings.webhook_timeout_seconds * 1000) + 5000
        self._slots = asyncio.Semaphore(PARALLEL_SENDS)
        self._sending: set[asyncio.Task[None]] = set()
        #: deliveries the receiver accepted from this process
        self.delivered = 0

    async def send_due(self) -> int:
        """Claim and start sending every due delivery; returns how many were claimed."""
        now = self.clock()
        claimed = 0
        for delivery_id in await self.outbox.due(now):
            pending = await self.outbox.claim(delivery_id, now, self._lease_ms)
            if pending is None:
                continue
            claimed += 1
            task = asyncio.create_task(self._send_one(pending), name=f"webhook-{delivery_id}")
            self._sending.add(task)
            task.add_done_callback(self._sending.discard)
        return claimed

    async def stop(self) -> None:
        """Cancel the sends under way (their claims expire: another round sends them)."""
        for task in list(self._sending):
            task.cancel()
        if self._sending:
            await asyncio.wait(self._sending, timeout=5)

    async def _send_one(self, pending: Pending) -> None:
        async with self._slots:
            try:
                reminder = msgspec.json.decode(pending.body, type=Reminder)
                if not await self.correspondence.still_due(reminder):
                    await self.outbox.done(pending.id)  # the turn was played meanwhile
                    return
                failure = await self._post(pending, reminder.event)
                if failure is None:
                    self.delivered += 1
                    await self.outbox.done(pending.id)
                    return
                await self._failed(pending, failure)
            except Exception as exc:  # Redis down: the claim expires and a later round retries
                log.warning("webhook %s: not handled: %s", pending.id, type(exc).__name__)

    async def _post(self, pending: Pending, event: str) -> str | None:
        """One attempt; None when the receiver accepted it, else why not (no secrets)."""
        headers = {
            "Content-Type": "application/json",
            "Idempotency-Key": pending.id,
            "X-Yahtzee-Event": event,
            SIGNATURE_HEADER: sign(self._secret, pending.body),
        }
        try:
            reply = await self.client.post(
                self.url,
                content=pending.body,
                headers=headers,
                timeout=self.settings.webhook_timeout_seconds,
            )
        except httpx.HTTPError as exc:
            return type(exc).__name__
        return None if reply.is_success else f"HTTP {reply.status_code}"

    async def _failed(self, pending: Pending, failure: str) -> None:
        attempts = pending.tries + 1
        if attempts >= self.settings.webhook_max_attempts:
            log.warning(
                "webhook %s: given up after %d attempts (%s)", pending.id, attempts, failure
            )
            await self.outbox.give_up(pending)
            return
        pause = float(self._backoff.compute(attempts))
        log.info("webhook %s: attempt %d failed (%s), next in %.1fs", pending.id, attempts,
                 failure, pause)  # fmt: skip
        await self.outbox.retry(pending.id, self.clock() + int(pause * 1000))
