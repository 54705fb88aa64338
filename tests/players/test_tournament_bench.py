"""The tournament simulation (clients/bench/tournament.py) at a tiny size against a real server
with a real PostgreSQL: its checks hold and it prints its figures."""

from __future__ import annotations

import pytest
from procs import StartServer, scaled

from clients.bench import tournament


@pytest.mark.usefixtures("official_table")
async def test_a_tiny_simulated_tournament_checks_out(
    start_server: StartServer, capsys: pytest.CaptureFixture[str]
) -> None:
    server = start_server(
        {
            "YAHTZEE_ADMIN_TOKEN": "bench-admin",
            "YAHTZEE_DAILY_TOURNAMENT": "0",
            "YAHTZEE_TOURNAMENT_POLL_SECONDS": "0.2",
            "YAHTZEE_PLAYERS_PER_HOUR": "100000",
        }
    )
    figures = await tournament.run(
        server.http, "bench-admin", 4, concurrency=4, seconds=scaled(20), sample_every=1
    )
    print("\n".join(figures.lines()))
    assert figures.dice_checked > 0
    assert figures.dice_conflicts == 0
    assert figures.standings_correct
    assert figures.verified == 4
    assert len(figures.totals) == 4
    assert len(figures.update_seconds) == 4 * 13
    assert isinstance(figures.optimal_score, int)
    out = capsys.readouterr().out
    assert "p99" in out
    assert "the dice allowed" in out
