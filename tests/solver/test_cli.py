"""``yahtzee solve`` end to end, on the rule set whose full table builds fastest."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from server.cli import main

SMALL = "yahtzee-no-extra+upper-first"  # upper_first leaves few reachable positions


def test_solve_simulate_levels_and_bench(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["solve", "--rules", SMALL, "--cache-dir", str(tmp_path), "--seed", "4"]
    assert main([*args, "--simulate", "300", "--levels", "40", "--bench"]) == 0
    out = capsys.readouterr().out
    expected = re.search(
        rf"^{re.escape(SMALL)}\s+expected\s+([\d.]+)\s+sd\s+([\d.]+)\s+\(built in", out, re.M
    )
    assert expected is not None, out
    assert 0 < float(expected.group(2)) < float(expected.group(1))
    simulated = re.search(r"simulated\s+([\d.]+) \+/- ([\d.]+) \(95 % CI, 300 games", out)
    assert simulated is not None, out
    assert abs(float(simulated.group(1)) - float(expected.group(1))) <= float(simulated.group(2))
    for level in ("easy", "medium", "hard", "optimal"):
        assert re.search(rf"^\| {level} \| 40 \| [\d.]+ \|", out, re.M), out
    for timing in (
        "load table from cache",
        "computer decision",
        "hint, top 3",
        "analysis of a 4-player game",
    ):
        assert timing in out

    assert main(args) == 0  # the second run loads the table
    assert "(loaded from cache; built in" in capsys.readouterr().out


def test_unknown_rule_set_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["solve", "--rules", "backgammon"]) == 2
    assert "unknown rule set" in capsys.readouterr().err
