"""A room record's stored form: the bytes the store keeps in the room's hash (``record``
field), written and read here (no I/O). ``RECORD_FORMAT`` in :mod:`server.domain.room` names
the layout's version."""

from __future__ import annotations

from typing import Any

import msgspec

from server import game
from server.domain.room import (
    RECORD_FORMAT,
    Rematch,
    RoomMeta,
    RoomRecord,
)

__all__ = ["decode_record", "encode_record"]


_encode_json = msgspec.json.Encoder().encode
_decode_json = msgspec.json.Decoder().decode


def encode_record(record: RoomRecord) -> bytes:
    """The record as JSON bytes (the game through :func:`server.game.to_dict`)."""
    meta = record.meta
    return _encode_json(
        {
            "format": RECORD_FORMAT,
            "game": game.to_dict(record.game),
            "meta": {
                "public": meta.public,
                "invite_hash": meta.invite_hash,
                "turn_seconds": meta.turn_seconds,
                "created_ms": meta.created_ms,
                "dice_seed": meta.dice_seed,
                "name": meta.name,
                "hints": meta.hints,
                "computer_delay_ms": meta.computer_delay_ms,
                "auto_start": meta.auto_start,
                "correspondence": meta.correspondence,
                "rated": meta.rated,
                "tournament": meta.tournament,
                "closes_ms": meta.closes_ms,
            },
            "connected": record.connected,
            "owners": record.owners,
            "away_ms": record.away_ms,
            "join_keys": record.join_keys,
            "seeds": record.seeds,
            "spectators": record.spectators,
            "deadline_ms": record.deadline_ms,
            "absent_ms": record.absent_ms,
            "draws": record.draws,
            "computer_ms": record.computer_ms,
            "game_seq": record.game_seq,
            "ratings_told": record.ratings_told,
            "rematch": (
                None
                if record.rematch is None
                else [record.rematch.room, record.rematch.invite, record.rematch.key]
            ),
        }
    )


def decode_record(raw: bytes) -> RoomRecord:
    """Inverse of :func:`encode_record`; ``ValueError`` for a record of another format."""
    data: dict[str, Any] = _decode_json(raw)
    if data.get("format") != RECORD_FORMAT:
        raise ValueError(f"room record format {data.get('format')!r}, expected {RECORD_FORMAT}")
    meta = data["meta"]
    return RoomRecord(
        game=game.from_dict(data["game"]),
        meta=RoomMeta(
            public=meta["public"],
            invite_hash=meta["invite_hash"],
            turn_seconds=meta["turn_seconds"],
            created_ms=meta["created_ms"],
            dice_seed=meta["dice_seed"],
            name=meta.get("name", ""),
            hints=meta.get("hints", True),
            computer_delay_ms=meta.get("computer_delay_ms", 0),
            auto_start=meta.get("auto_start", False),
            correspondence=meta.get("correspondence", False),
            rated=meta.get("rated", False),
            tournament=meta.get("tournament", ""),
            closes_ms=meta.get("closes_ms"),
        ),
        connected=data["connected"],
        owners=data["owners"],
        away_ms=data["away_ms"],
        join_keys=data["join_keys"],
        seeds=data["seeds"],
        spectators=data["spectators"],
        deadline_ms=data["deadline_ms"],
        absent_ms=data["absent_ms"],
        draws=data["draws"],
        computer_ms=data.get("computer_ms"),
        game_seq=data.get("game_seq"),
        rematch=Rematch(*data["rematch"]) if data.get("rematch") else None,
        ratings_told=data.get("ratings_told", False),
    )
