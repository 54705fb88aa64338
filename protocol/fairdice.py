"""Provably fair dice (protocol v1.1): the generator every die comes from, and its verifier.

Theory of operation
-------------------
When a room is created the service draws a secret 32-byte *server seed*
(:func:`new_server_seed`) and publishes only its *commitment*, the SHA-256 of the seed
(:func:`commitment`), in every ``player_joined`` and in ``game_started``. Players may add their
own *client seed* to ``join``; ``game_started`` lists the seeds of the players seated at the
start, in seat order. Every die of the game is then a pure function of
(server seed, client seeds, draw number) (:func:`faces`), and ``game_over`` reveals the server
seed. Anyone holding the room's public log can then recompute every roll
(:func:`verify_log`): the server could not have picked faces, because it was bound to its seed
before it saw the client seeds, and it could not have picked its seed to suit the client seeds,
because they were not known when it committed.

The generator, byte for byte (``protocol/fairdice.md`` is the normative text)::

    client_entropy = SHA-256(b"\\x00".join(seed.encode("utf-8") for seed in seeds))
    block(n, i)    = HMAC-SHA256(key=server_seed,
                                 msg=b"yahtzee-dice/1" + client_entropy
                                     + n.to_bytes(8, "big") + i.to_bytes(4, "big"))

Draw ``n`` (0, 1, 2, ... counting every draw of the game in log order: each roll-off
contender's roll in the order of ``roll_off.rolls``, then each ``rolled`` event) reads the bytes
of ``block(n, 0)``, ``block(n, 1)``, ...; a byte ``b < 252`` gives the face ``b % 6 + 1`` and a
byte ``>= 252`` is skipped, so every face has probability exactly 1/6. A roll-off roll takes five
faces; a ``rolled`` event takes one face per die not in ``held``, given to those indexes in
ascending order.

Only :func:`new_server_seed` uses randomness (``secrets``); everything else is pure.
"""

from __future__ import annotations

import enum
import hashlib
import hmac
import re
import secrets
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

__all__ = [
    "DICE_COUNT",
    "DOMAIN",
    "MAX_CLIENT_SEED_LENGTH",
    "SERVER_SEED_BYTES",
    "Mismatch",
    "Status",
    "Verdict",
    "client_entropy",
    "commitment",
    "face_stream",
    "faces",
    "is_valid_client_seed",
    "new_server_seed",
    "parse_server_seed",
    "verify_log",
]

DOMAIN: Final = b"yahtzee-dice/1"
"""Domain-separation prefix of every HMAC message (names the generator and its version)."""

SERVER_SEED_BYTES: Final = 32
"""Length of a server seed in bytes (64 hex characters on the wire)."""

MAX_CLIENT_SEED_LENGTH: Final = 64
"""Longest client seed, in characters (printable ASCII, so also in bytes)."""

DICE_COUNT: Final = 5
"""Dice in a full roll (a roll-off roll, or the first roll of a turn)."""

_ACCEPT_BELOW: Final = 252  # the largest multiple of 6 that fits a byte: 252 = 42 * 6
_FACE_OF_BYTE: Final = bytes(b % 6 + 1 if b < _ACCEPT_BELOW else 0 for b in range(256))
_MAX_DRAW: Final = 2**64 - 1  # n is written as 8 bytes
_HEX64: Final = re.compile(r"[0-9a-f]{64}")


# --------------------------------------------------------------------------------------------
# The generator
# --------------------------------------------------------------------------------------------


def new_server_seed() -> bytes:
    """Draw a fresh secret server seed (32 bytes from the operating system's CSPRNG)."""
    return secrets.token_bytes(SERVER_SEED_BYTES)


def commitment(server_seed: bytes) -> str:
    """The public commitment to ``server_seed``: its SHA-256 as 64 lowercase hex characters."""
    return hashlib.sha256(server_seed).hexdigest()


def parse_server_seed(text: str) -> bytes:
    """The seed bytes of a revealed ``server_seed`` (exactly 64 lowercase hex characters).

    Raises ``ValueError`` for anything else.
    """
    if not isinstance(text, str) or _HEX64.fullmatch(text) is None:
        raise ValueError(f"a server seed is 64 lowercase hex characters, not {text!r}")
    return bytes.fromhex(text)


def is_valid_client_seed(seed: object) -> bool:
    """True for a string of 1 to 64 printable ASCII characters (space ``0x20`` to ``~`` ``0x7e``),
    the only client seeds ``join`` accepts."""
    return (
        isinstance(seed, str)
        and 1 <= len(seed) <= MAX_CLIENT_SEED_LENGTH
        and all(" " <= ch <= "~" for ch in seed)
    )


def client_entropy(seeds: Sequence[str]) -> bytes:
    """SHA-256 of the client seeds (``""`` for a player who gave none) joined with one zero byte,
    in seat order: the 32 bytes that mix every player's seed into every draw."""
    return hashlib.sha256(b"\x00".join(seed.encode("utf-8") for seed in seeds)).digest()


def _block(server_seed: bytes, entropy: bytes, n: int, index: int) -> bytes:
    message = DOMAIN + entropy + n.to_bytes(8, "big") + index.to_bytes(4, "big")
    return hmac.digest(server_seed, message, "sha256")


def _check_draw(n: int) -> None:
    if not 0 <= n <= _MAX_DRAW:
        raise ValueError(f"the draw number is 0..2**64-1, not {n}")


def face_stream(server_seed: bytes, entropy: bytes, n: int) -> Iterator[int]:
    """The endless sequence of faces (1..6) of draw ``n``; :func:`faces` takes its first ones."""
    _check_draw(n)
    index = 0
    while True:
        for byte in _block(server_seed, entropy, n, index):
            if byte < _ACCEPT_BELOW:  # rejection keeps every face at exactly 1/6
                yield byte % 6 + 1
        index += 1


def faces(server_seed: bytes, entropy: bytes, n: int, count: int) -> tuple[int, ...]:
    """The first ``count`` faces of draw ``n`` of the game.

    ``entropy`` is :func:`client_entropy` of the game's seeds. Draw ``n`` is the ``n``-th
    (from 0) dice draw of the game in log order; a roll-off roll takes 5 faces, a ``rolled``
    event one per rolled die.
    """
    if count < 0:
        raise ValueError(f"count must be >= 0, not {count}")
    _check_draw(n)
    # face_stream's faces, taken a block at a time in C (a roll of a game draws here): the
    # table maps an accepted byte to its face and a rejected one to 0, which is dropped.
    drawn = b""
    index = 0
    while len(drawn) < count:
        block = _block(server_seed, entropy, n, index)
        drawn += block.translate(_FACE_OF_BYTE).replace(b"\x00", b"")
        index += 1
    return tuple(drawn[:count])


# --------------------------------------------------------------------------------------------
# The verdict
# --------------------------------------------------------------------------------------------


class Status(enum.StrEnum):
    """Outcome of :func:`verify_log`."""

    VERIFIED = "verified"
    """Every die of the game follows from the revealed seed, the commitment held, seeds match."""
    MISMATCH = "mismatch"
    """Something in the log contradicts the generator or the commitment: the server could have
    cheated (see :attr:`Verdict.mismatches`)."""
    UNVERIFIABLE = "unverifiable"
    """Nothing is wrong so far, but the log cannot be checked (yet): see :attr:`Verdict.pending`."""


@dataclass(frozen=True)
class Mismatch:
    """One contradiction found in the log: at event ``seq`` (``None`` when it concerns the log as
    a whole), ``what`` was expected to be ``expected`` and is ``got``."""

    seq: int | None
    what: str
    expected: str
    got: str

    def __str__(self) -> str:
        where = f"seq {self.seq}" if self.seq is not None else "log"
        return f"{where}: {self.what}: expected {self.expected}, got {self.got}"


@dataclass(frozen=True)
class Verdict:
    """What :func:`verify_log` found.

    ``status`` sums it up: any mismatch makes it ``mismatch``; otherwise any pending reason makes
    it ``unverifiable``; otherwise ``verified``.
    """

    status: Status
    mismatches: tuple[Mismatch, ...] = ()
    """Every contradiction found, in log order."""
    pending: tuple[str, ...] = ()
    """Why the log cannot be verified (yet): game not over, seed not revealed, log incomplete."""
    warnings: tuple[str, ...] = ()
    """Facts that weaken the guarantee without contradicting it (no client seed at all)."""
    commitment: str | None = None
    """The commitment the game was bound to (``game_started.dice_commitment``, else the first
    published), or ``None`` when the log has none."""
    committed_before_seeds: bool = True
    """The commitment was in the log no later than the first event carrying a client seed."""
    commitment_unchanged: bool = True
    """Every published commitment has the same value."""
    seeds: tuple[str, ...] | None = None
    """The client seeds of the game (``game_started.seeds``), or ``None`` before the start."""
    draws_checked: int = 0
    """Dice draws recomputed and compared (0 unless the server seed was revealed)."""
    rolls: int = 0
    """Dice draws found in the log (roll-off rolls plus ``rolled`` events)."""

    @property
    def verified(self) -> bool:
        """True when every die was recomputed and matched."""
        return self.status is Status.VERIFIED

    def describe(self, max_mismatches: int = 10) -> list[str]:
        """The verdict as lines of text for people (at most ``max_mismatches`` mismatches)."""
        lines = [f"verdict: {self.status.value}"]
        lines.append(f"commitment: {self.commitment or '(none)'}")
        if self.seeds is not None:
            shown = ", ".join(repr(s) if s else "(none)" for s in self.seeds)
            lines.append(f"client seeds: {shown}")
        lines.append(f"dice draws: {self.rolls} in the log, {self.draws_checked} recomputed")
        lines.append(
            "commitment published before every client seed: "
            + ("yes" if self.committed_before_seeds else "NO")
        )
        lines.append("commitment never changed: " + ("yes" if self.commitment_unchanged else "NO"))
        lines.extend(f"not verifiable yet: {reason}" for reason in self.pending)
        lines.extend(f"warning: {warning}" for warning in self.warnings)
        lines.extend(f"MISMATCH {m}" for m in self.mismatches[:max_mismatches])
        if len(self.mismatches) > max_mismatches:
            lines.append(f"... and {len(self.mismatches) - max_mismatches} more mismatches")
        return lines


# --------------------------------------------------------------------------------------------
# The verifier
# --------------------------------------------------------------------------------------------


class _MalformedError(Exception):
    """An event lacks a field or has a value of the wrong type."""


@dataclass(frozen=True)
class _Draw:
    seq: int
    label: str
    got: tuple[int, ...]  # the faces the log shows for the dice this draw rolled


def _field(event: Mapping[str, object], name: str, kind: type | tuple[type, ...]) -> object:
    value = event.get(name)
    # bool is an int in Python; no field read here is a boolean
    if not isinstance(value, kind) or isinstance(value, bool):
        raise _MalformedError(f"`{event.get('type')}` has no valid `{name}`: {value!r}")
    return value


def _int_list(value: object, name: str, low: int, high: int) -> tuple[int, ...]:
    if not isinstance(value, list | tuple) or not all(
        isinstance(x, int) and not isinstance(x, bool) and low <= x <= high for x in value
    ):
        raise _MalformedError(f"`{name}` is not a list of integers {low}..{high}: {value!r}")
    return tuple(value)


def _show(values: Sequence[object]) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]"


class _Checker:
    """One pass over the log in seq order; the dice are compared at the end, once the seeds are
    known (the roll-off rolls come before ``game_started`` in the log)."""

    def __init__(self) -> None:
        self.mismatches: list[Mismatch] = []
        self.pending: list[str] = []
        self.first_commitment: str | None = None
        self.bound_commitment: str | None = None
        self.committed_before_seeds = True
        self.commitment_unchanged = True
        self.lobby: list[tuple[str, str]] = []  # (player, seed or "") in seat order
        self.started = False  # the lobby is closed (roll-off or game_started seen)
        self.seeds: tuple[str, ...] | None = None
        self.draws: list[_Draw] = []
        self.turn_dice: tuple[int, ...] | None = None
        self.server_seed: bytes | None = None
        self.game_over = False
        self.incomplete = False
        self.handlers: dict[str, Callable[[int, Mapping[str, object]], None]] = {
            "player_joined": self.on_player_joined,
            "player_left": self.on_player_left,
            "game_started": self.on_game_started,
            "roll_off": self.on_roll_off,
            "turn_changed": self.on_turn_end,
            "rolled": self.on_rolled,
            "scored": self.on_turn_end,
            "game_over": self.on_game_over,
        }

    # -- bookkeeping -----------------------------------------------------------------------

    def mismatch(self, seq: int | None, what: str, expected: str, got: str) -> None:
        self.mismatches.append(Mismatch(seq, what, expected, got))

    def see_commitment(self, seq: int, event: Mapping[str, object]) -> str | None:
        value = event.get("dice_commitment")
        if value is None:
            return None
        if not isinstance(value, str) or _HEX64.fullmatch(value) is None:
            raise _MalformedError(f"`dice_commitment` is not 64 lowercase hex: {value!r}")
        if self.first_commitment is None:
            self.first_commitment = value
        elif value != self.first_commitment:
            self.commitment_unchanged = False
            self.mismatch(seq, "dice_commitment changed", self.first_commitment, value)
        return value

    # -- events ----------------------------------------------------------------------------

    def on_player_joined(self, seq: int, event: Mapping[str, object]) -> None:
        self.see_commitment(seq, event)
        player = str(_field(event, "player", str))
        seed = event.get("seed")
        if seed is not None and not is_valid_client_seed(seed):
            raise _MalformedError(f"`seed` is not 1..64 printable ASCII characters: {seed!r}")
        if isinstance(seed, str) and self.first_commitment is None:
            self.committed_before_seeds = False
            self.mismatch(
                seq,
                f"client seed of {player} revealed before any dice_commitment",
                "a dice_commitment in this event or an earlier one",
                "none",
            )
        if not self.started:
            self.lobby.append((player, seed if isinstance(seed, str) else ""))

    def on_player_left(self, seq: int, event: Mapping[str, object]) -> None:
        player = _field(event, "player", str)
        # a player who leaves the lobby frees the seat; one who leaves a game forfeits it
        if event.get("forfeited") is False:
            self.lobby = [(p, s) for p, s in self.lobby if p != player]

    def on_game_started(self, seq: int, event: Mapping[str, object]) -> None:
        if self.seeds is not None:
            self.mismatch(seq, "game_started", "one game_started per room", "a second one")
            return
        self.started = True
        self.bound_commitment = self.see_commitment(seq, event)
        if self.bound_commitment is None and self.first_commitment is not None:
            self.mismatch(seq, "game_started.dice_commitment", self.first_commitment, "none")
        seeds = event.get("seeds")
        if seeds is None and self.first_commitment is None:
            self.seeds = ()  # a server without fair dice; reported as pending at the end
            return
        if not isinstance(seeds, list | tuple) or not all(isinstance(s, str) for s in seeds):
            raise _MalformedError(f"`seeds` is not a list of strings: {seeds!r}")
        self.seeds = tuple(seeds)
        announced = tuple(seed for _, seed in self.lobby)
        if self.seeds != announced:
            self.mismatch(
                seq,
                "game_started.seeds (the seeds given in player_joined, in seat order)",
                _show([repr(s) for s in announced]),
                _show([repr(s) for s in self.seeds]),
            )

    def on_roll_off(self, seq: int, event: Mapping[str, object]) -> None:
        self.started = True
        rolls = event.get("rolls")
        if not isinstance(rolls, list | tuple) or not rolls:
            raise _MalformedError(f"`rolls` is not a non-empty list: {rolls!r}")
        for roll in rolls:
            if not isinstance(roll, Mapping):
                raise _MalformedError(f"a roll-off roll is not an object: {roll!r}")
            player = _field(roll, "player", str)
            dice = _int_list(roll.get("dice"), "rolls[].dice", 1, 6)
            if len(dice) != DICE_COUNT:
                raise _MalformedError(f"a roll-off roll has {len(dice)} dice")
            self.draws.append(_Draw(seq, f"roll-off roll of {player}", dice))

    def on_turn_end(self, seq: int, event: Mapping[str, object]) -> None:
        self.turn_dice = None  # held dice never carry over into another turn

    def on_rolled(self, seq: int, event: Mapping[str, object]) -> None:
        dice = _int_list(event.get("dice"), "dice", 1, 6)
        held = _int_list(event.get("held"), "held", 0, DICE_COUNT - 1)
        if len(dice) != DICE_COUNT or len(set(held)) != len(held):
            raise _MalformedError(f"`rolled` with dice {dice} and held {held}")
        player = _field(event, "player", str)
        previous = self.turn_dice
        for index in sorted(held):
            kept = previous[index] if previous is not None else None
            if kept != dice[index]:
                self.mismatch(
                    seq,
                    f"held die {index} of {player} (kept from the previous roll of the turn)",
                    str(kept) if kept is not None else "no earlier roll this turn",
                    str(dice[index]),
                )
        rolled = [i for i in range(DICE_COUNT) if i not in held]
        self.draws.append(_Draw(seq, f"roll of {player}", tuple(dice[i] for i in rolled)))
        self.turn_dice = dice

    def on_game_over(self, seq: int, event: Mapping[str, object]) -> None:
        self.game_over = True
        if self.seeds is None:  # the seeds (and so every die) would go unchecked
            self.mismatch(seq, "game_over", "a game_started earlier in the log", "none")
        revealed = event.get("server_seed")
        if revealed is None:
            if self.first_commitment is not None:
                self.pending.append("game_over does not reveal the server seed")
            return
        if not isinstance(revealed, str):
            raise _MalformedError(f"`server_seed` is not a string: {revealed!r}")
        try:
            seed = parse_server_seed(revealed)
        except ValueError as exc:
            raise _MalformedError(str(exc)) from None
        expected = self.bound_commitment or self.first_commitment
        if expected is None:
            return  # reported at the end: nothing was committed to
        if commitment(seed) != expected:
            self.mismatch(seq, "SHA-256 of the revealed server_seed", expected, commitment(seed))
            return
        self.server_seed = seed

    # -- the whole log ---------------------------------------------------------------------

    def walk(self, events: Sequence[Mapping[str, object]]) -> None:
        expected_seq = 1
        for event in events:
            seq = event.get("seq")
            if not isinstance(seq, int) or isinstance(seq, bool):
                self.mismatch(None, "event seq", "an integer", repr(seq))
                return
            if seq != expected_seq:
                self.incomplete = True
                self.pending.append(
                    f"the log is incomplete: expected seq {expected_seq}, found {seq}"
                )
                return
            expected_seq += 1
            handler = self.handlers.get(str(event.get("type")))
            if handler is None:
                continue
            try:
                handler(seq, event)
            except _MalformedError as exc:
                self.mismatch(seq, "a well-formed event", "the fields of protocol v1.1", str(exc))

    def check_dice(self) -> int:
        if self.server_seed is None or self.seeds is None:
            return 0
        entropy = client_entropy(self.seeds)
        for n, draw in enumerate(self.draws):
            expected = faces(self.server_seed, entropy, n, len(draw.got))
            if expected != draw.got:
                self.mismatch(
                    draw.seq, f"{draw.label} (draw {n})", _show(expected), _show(draw.got)
                )
        return len(self.draws)

    def finish(self) -> Verdict:
        if self.first_commitment is None:
            self.pending.append(
                "the log has no dice_commitment (a server without provably fair dice,"
                " or no player has joined yet)"
            )
        elif not self.game_over and not self.incomplete:
            self.pending.append("the game is not over: game_over reveals the server seed")
        draws_checked = self.check_dice()
        warnings = []
        if self.seeds is not None and self.first_commitment is not None and not any(self.seeds):
            warnings.append("no player contributed a seed: the server alone chose every die")
        if self.mismatches:
            status = Status.MISMATCH
        elif self.pending:
            status = Status.UNVERIFIABLE
        else:
            status = Status.VERIFIED
        return Verdict(
            status=status,
            mismatches=tuple(self.mismatches),
            pending=tuple(self.pending),
            warnings=tuple(warnings),
            commitment=self.bound_commitment or self.first_commitment,
            committed_before_seeds=self.committed_before_seeds,
            commitment_unchanged=self.commitment_unchanged,
            seeds=self.seeds,
            draws_checked=draws_checked,
            rolls=len(self.draws),
        )


def verify_log(events: Sequence[Mapping[str, object]]) -> Verdict:
    """Recompute every die of a room's game from its public event log.

    ``events`` are the room's events as JSON objects (as ``GET /rooms/{id}/events`` returns
    them, every page joined), from seq 1 in order. The verdict is ``mismatch`` when the log
    contradicts the generator or the commitment (a die that does not follow from the revealed
    seed, a held die that changed, a commitment that changed or came after a client seed, seeds
    in ``game_started`` other than those given at ``join``, a revealed seed whose SHA-256 is not
    the commitment, a malformed event); ``unverifiable`` when nothing is wrong yet but the
    server seed is not known (game not over, seed not revealed, log incomplete or without a
    commitment); else ``verified``.
    """
    checker = _Checker()
    checker.walk(events)
    return checker.finish()
