"""The calibration and rating simulation script, at a tiny size (its figures are printed by a
full run: README "Ratings"), and its Kendall tau."""

from __future__ import annotations

from pathlib import Path

import pytest

from server.solver import Table
from server.strategy import calibrate


def test_kendall_tau_and_when_it_settles() -> None:
    truth = ["weak", "middle", "strong"]
    assert calibrate.kendall_tau(truth, {"weak": 1, "middle": 2, "strong": 3}) == 1.0
    assert calibrate.kendall_tau(truth, {"weak": 3, "middle": 2, "strong": 1}) == -1.0
    assert calibrate.kendall_tau(truth, {"weak": 1, "middle": 3, "strong": 2}) == pytest.approx(
        1 / 3
    )
    assert calibrate.settles_at([0.2, 1.0, 0.5, 1.0, 1.0]) == 4
    assert calibrate.settles_at([1.0, 1.0]) == 1
    assert calibrate.settles_at([1.0, 0.3]) is None


def test_the_script_prints_its_figures_at_a_tiny_size(
    official_table: Table, solver_cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = calibrate.main(
        ["--pool", "2", "--games", "30", "--truth-games", "4", "--cache", str(solver_cache)]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "true order, with mean scores over 4 solitaire games each: easy" in out
    for name in ("easy", "medium", "hard", "optimal"):
        assert f"{name}:" in out
    assert "optimal:  3000" in out  # the optimal player loses nothing
    assert "result rating: Kendall tau >= 0.9" in out
    assert "decision rating: Kendall tau >= 0.9" in out
