"""The archive's reading side on a real PostgreSQL: a player's pages newest first, private games
for their players only, the export over several batches, statistics."""

from __future__ import annotations

from server.ops.database_settings import ArchiveSettings
from server.service.identities import Identities
from server.storage.archive import Archive
from server.storage.archived_game import ArchivedGame, ArchivedSeat
from server.storage.postgres import Database

T0 = 1_767_225_600_000


def archived(room: str, at: int, seats: list[tuple[str | None, int, int]], *, public: bool = True,
             outcome: str = "finished") -> ArchivedGame:  # fmt: skip
    """A game of ``seats`` (identity, total, place) finished at ``at``."""
    players = [
        ArchivedSeat(
            seat=n,
            player_id=f"p{n}",
            name=f"P{n}",
            computer=None,
            identity_id=identity,
            place=place,
            total=total,
            forfeited=False,
            scores=[None] * 13,
            yahtzee_bonuses=0,
            upper_bonus=total >= 250,
            yahtzees=1 if total >= 300 else 0,
            accuracy=total / 400,
        )
        for n, (identity, total, place) in enumerate(seats)
    ]
    return ArchivedGame(
        room_id=room,
        game_no=1,
        outcome=outcome,
        public=public,
        room_name="",
        options={"rules": "yahtzee"},
        seats=len(seats),
        turn_seconds=0,
        hints=True,
        created_ms=at - 600_000,
        finished_ms=at,
        dice_commitment="c" * 64,
        server_seed="s" * 64,
        player_seeds={},
        final_state={},
        events=[{"type": "game_over", "seq": 1}],
        players=players,
    )


async def test_pages_profiles_privacy_and_export(database: Database) -> None:
    identities = Identities(database, ArchiveSettings())
    ann, _ = await identities.create_guest("Ann")
    bob, _ = await identities.create_guest("Bob")
    archive = Archive(database)
    games = [
        archived("r1", T0 + 1000, [(ann.id, 200, 2), (bob.id, 260, 1)]),
        archived("r2", T0 + 2000, [(ann.id, 310, 1), (bob.id, 150, 2)]),
        archived("r3", T0 + 3000, [(ann.id, 250, 1)], public=False),
        archived("r4", T0 + 4000, [(ann.id, 100, 1), (None, 120, 1)], outcome="abandoned"),
        archived("r5", T0 + 4000, [(bob.id, 240, 1)]),
    ]
    for game in games:
        assert await archive.write(game) is True
    assert await archive.write(games[0]) is False  # once

    # Ann's games, newest first, two a page: private r3 only for Ann herself
    seen: list[str] = []
    cursor = None
    while True:
        page, cursor = await archive.games_of(ann.id, ann.id, 2, cursor)
        seen += [g["game"] for g in page]
        if cursor is None:
            break
    assert seen == ["r4.1", "r3.1", "r2.1", "r1.1"]
    others, last = await archive.games_of(ann.id, None, 10, None)
    assert [g["game"] for g in others] == ["r4.1", "r2.1", "r1.1"]
    assert last is None

    mine = await archive.profile(ann.id, ann.id)
    assert mine is not None
    assert mine["games"] == 4
    assert mine["wins"] == 2  # r2, r3 (r4 was abandoned: no win)
    assert mine["best_score"] == 310
    assert mine["average_score"] == (200 + 310 + 250 + 100) / 4
    assert mine["yahtzee_rate"] == 0.25
    assert mine["upper_bonus_rate"] == 0.5
    public = await archive.profile(ann.id, None)
    assert public is not None
    assert public["games"] == 3
    assert await archive.profile("uNobody", None) is None

    exported = [g["game"] async for g in archive.export(0, batch=2)]
    assert exported == ["r1.1", "r2.1", "r4.1", "r5.1"]  # public only, oldest first
    later = [g["game"] async for g in archive.export(T0 + 4000, batch=1)]
    assert later == ["r4.1", "r5.1"]
    assert await archive.rooms_archived(["r1", "r9", "r3"]) == {"r1", "r3"}
    assert await archive.players_of("r2") == {ann.id, bob.id}
    assert await archive.is_public("r3.1") is False
