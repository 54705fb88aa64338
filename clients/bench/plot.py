"""``--plot FILE``: latency percentiles against offered load, game vs bare, as a PNG.

matplotlib is an optional extra (``pip install 'yahtzee-service[plot]'``), imported only here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["PlotUnavailableError", "plot"]

PERCENTILES = (("p50", ":"), ("p99", "-"), ("p99.9", "--"))
COLORS = {"game": "tab:red", "bare": "tab:blue"}


class PlotUnavailableError(RuntimeError):
    """matplotlib is not installed."""


def plot(report: dict[str, Any], path: Path) -> None:
    """Draw command -> last delivery percentiles of the open-loop rounds into ``path``."""
    try:
        import matplotlib

        matplotlib.use("Agg")  # no display needed
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise PlotUnavailableError(
            "--plot needs matplotlib: pip install 'yahtzee-service[plot]' (or matplotlib)"
        ) from exc
    entries = sorted(report["open_loop"], key=lambda e: e["offered_rate"])
    if not entries:
        raise ValueError("no open-loop rounds to plot")
    rates = [e["offered_rate"] for e in entries]
    fig, ax = plt.subplots(figsize=(8, 5))
    for name, color in COLORS.items():
        for key, style in PERCENTILES:
            values = [e[name]["delivery_ms"][key] for e in entries]
            ax.plot(rates, values, style, marker="o", color=color, label=f"{name} {key}")
    scenario = report["scenario"]
    ax.set_title(
        f"command -> last delivery, {scenario['rooms']} rooms x {scenario['players']} players"
        f" + {scenario['spectators_per_room']} spectators, {scenario['workers']} worker(s)"
    )
    ax.set_xlabel("offered load (commands/s, open loop)")
    ax.set_ylabel("latency (ms, log scale)")
    ax.set_yscale("log")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(ncol=2, fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
