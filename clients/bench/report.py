"""Figures of the bench: per kind of round, the game / bare ratios, the targets of issue 11, and
the table printed for people (``--json`` prints :meth:`BenchReport.to_dict` instead)."""

from __future__ import annotations

import platform
from dataclasses import dataclass, field
from typing import Any

import psutil

from clients.bench.procs import Cost
from clients.bench.streams import LatencyHistogram

__all__ = ["BenchReport", "Figures", "machine", "ratios"]

KIB = 1024


@dataclass
class Figures:
    """Measured over one or more rounds of one server in one mode (and rate)."""

    commands: int = 0
    unsent: int = 0
    setup_commands: int = 0
    seconds: float = 0.0
    driver_cpu: float = 0.0  # CPU seconds of the bench process itself (is it the bottleneck?)
    cost: Cost = field(default_factory=Cost)
    ack: LatencyHistogram = field(default_factory=LatencyHistogram)
    delivery: LatencyHistogram = field(default_factory=LatencyHistogram)

    def merge(self, other: Figures) -> None:
        self.commands += other.commands
        self.unsent += other.unsent
        self.setup_commands += other.setup_commands
        self.seconds += other.seconds
        self.driver_cpu += other.driver_cpu
        c, o = self.cost, other.cost
        self.cost = Cost(
            c.server_cpu + o.server_cpu,
            c.redis_cpu + o.redis_cpu,
            c.server_rss + o.server_rss,
            c.redis_rss + o.redis_rss,
        )
        self.ack.add(other.ack)
        self.delivery.add(other.delivery)

    def to_dict(self) -> dict[str, Any]:
        per = 1000 / self.commands if self.commands else 0.0
        return {
            "commands": self.commands,
            "unsent": self.unsent,
            "setup_commands": self.setup_commands,
            "seconds": self.seconds,
            "commands_per_second": self.commands / self.seconds if self.seconds else 0.0,
            "ack_ms": self.ack.summary_ms(),
            "delivery_ms": self.delivery.summary_ms(),
            "cpu_ms_per_command": {
                "server": self.cost.server_cpu * per,
                "redis": self.cost.redis_cpu * per,
                "total": (self.cost.server_cpu + self.cost.redis_cpu) * per,
            },
            "driver_cpu_ms_per_command": self.driver_cpu * per,
        }


def _ratio(game: float, bare: float) -> float | None:
    return game / bare if bare > 0 else None


RATIO_KEYS = ("commands_per_second", "ack_ms", "delivery_ms", "cpu_ms_per_command")


def ratios(game: dict[str, Any], bare: dict[str, Any]) -> dict[str, Any]:
    """game / bare of the figures in RATIO_KEYS of two :meth:`Figures.to_dict` results
    (None where the bare figure is 0)."""
    out: dict[str, Any] = {}
    for key in RATIO_KEYS:
        g, b = game[key], bare[key]
        if isinstance(g, dict):
            out[key] = {k: _ratio(float(g[k]), float(b[k])) for k in g}
        else:
            out[key] = _ratio(float(g), float(b))
    return out


def machine() -> dict[str, Any]:
    """What the figures were taken on."""
    return {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpus": psutil.cpu_count(),
        "load_average": list(psutil.getloadavg()),
        "memory_bytes": psutil.virtual_memory().total,
    }


@dataclass
class BenchReport:
    """Everything one run measured and checked."""

    scenario: dict[str, Any]
    machine: dict[str, Any] = field(default_factory=machine)
    closed_loop: dict[str, Any] = field(default_factory=dict)
    open_loop: list[dict[str, Any]] = field(default_factory=list)
    rss_per_connection: dict[str, Any] = field(default_factory=dict)
    violations: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    targets: list[dict[str, Any]] = field(default_factory=list)
    #: ``--ccu`` and ``--vs-computer`` ramps (:mod:`clients.bench.ccu`): options, steps, summary
    ccu: dict[str, Any] = field(default_factory=dict)
    vs_computer: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.violations and not self.failures

    def to_dict(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario,
            "machine": self.machine,
            "closed_loop": self.closed_loop,
            "open_loop": self.open_loop,
            "rss_per_connection": self.rss_per_connection,
            "verification": {"ok": not self.violations, "violations": self.violations[:100]},
            "failures": self.failures,
            "targets": self.targets,
            **({"ccu": self.ccu} if self.ccu else {}),
            **({"vs_computer": self.vs_computer} if self.vs_computer else {}),
            "ok": self.ok,
        }

    def format_table(self) -> str:
        lines = [f"scenario: {self.scenario}", f"machine: {self.machine}"]
        if self.closed_loop:
            lines += ["", "closed loop", *_pair_lines(self.closed_loop)]
        for entry in self.open_loop:
            lines += ["", f"open loop at {entry['offered_rate']:.0f} commands/s offered"]
            lines += _pair_lines(entry)
        if self.rss_per_connection:
            rss = self.rss_per_connection
            lines += [
                "",
                f"RSS per connection ({rss['connections']} connections): game"
                f" {_kib(rss['game_bytes_per_connection'])}, bare"
                f" {_kib(rss['bare_bytes_per_connection'])}, ratio"
                f" {_num(rss['ratio'])}",
            ]
        if self.ccu:
            lines += ["", *_ramp_lines("concurrent players (--ccu)", self.ccu)]
        if self.vs_computer:
            lines += ["", *_ramp_lines("1 person + 3 computers (--vs-computer)", self.vs_computer)]
        lines += ["", "targets:"]
        for target in self.targets:
            met = {True: "MET", False: "NOT MET", None: "n/a"}[target["met"]]
            lines.append(f"  {met:<8}{target['target']}: {target['measured']}")
        lines.append("")
        lines.append(
            f"verification: {len(self.violations)} violations" if self.violations else
            "verification: every stream gap-free and identical, every command delivered"
        )  # fmt: skip
        lines += [f"  violation: {v}" for v in self.violations[:20]]
        lines += [f"  failure: {f}" for f in self.failures[:20]]
        lines.append("result: " + ("OK" if self.ok else "FAILED"))
        return "\n".join(lines)


def _kib(value: float | None) -> str:
    return "n/a" if value is None else f"{value / KIB:.1f} KiB"


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def _latency(ms: dict[str, float]) -> str:
    return "  ".join(f"{k} {v:.2f}" for k, v in ms.items())


def _pair_lines(entry: dict[str, Any]) -> list[str]:
    lines = []
    for name in ("game", "bare"):
        fig = entry[name]
        cpu = fig["cpu_ms_per_command"]
        lines += [
            f"  {name}: {fig['commands_per_second']:.0f} commands/s ({fig['commands']} commands,"
            f" {fig['unsent']} unsent, {fig['setup_commands']} setup)",
            f"    command -> ack (ms)            {_latency(fig['ack_ms'])}",
            f"    command -> last delivery (ms)  {_latency(fig['delivery_ms'])}",
            f"    CPU ms per command: server {cpu['server']:.3f} + redis {cpu['redis']:.3f}"
            f" = {cpu['total']:.3f}  (bench client {fig['driver_cpu_ms_per_command']:.3f})",
        ]
    ratio = entry["ratio"]
    lines.append(
        f"  game / bare: commands/s {_num(ratio['commands_per_second'])}, CPU per command"
        f" {_num(ratio['cpu_ms_per_command']['total'])}, p99 ack"
        f" {_num(ratio['ack_ms']['p99'])}, p99 delivery {_num(ratio['delivery_ms']['p99'])}"
    )
    return lines


def _ramp_lines(title: str, ramp: dict[str, Any]) -> list[str]:
    """One line per step of a ``--ccu`` / ``--vs-computer`` ramp, then its summary."""
    lines = [f"{title}: {ramp.get('options', {})}", f"  pinning: {ramp.get('pinning')}"]
    for step in ramp.get("steps", []):
        lines += [
            f"  step {step['step']}: {step['rooms']} rooms, {step['users']} users "
            f"({step['people']} people, {step['spectators']} spectators, {step['computers']} "
            f"computers, {step['lobby_streams']} lobby streams): "
            + ("HELD" if step["held"] else "NOT HELD"),
            f"    {step['commands_per_second']:.1f} commands/s, "
            f"{step['computer_moves_per_second']:.1f} computer moves/s, "
            f"{step['lobby_events']} lobby events ({step['lobby_events_since_open']} since open)",
            f"    command -> last delivery (ms)  {_latency(step['delivery_ms'])}",
            f"    computer lateness (ms)         {_latency(step['computer_lateness_ms'])}",
            f"    cores: server {step['server_cores']:.3f}, Valkey {step['valkey_cores']:.3f}, "
            f"bench {step['generator_cores']:.3f} ({step['generator_processes']} process(es))"
            + (" (the bench may be the limit)" if step["generator_may_be_the_limit"] else "")
            + f", other processes {step['others_cores']:.3f}; bench loop lag (ms) "
            + _latency(step["generator_loop_lag_ms"]),
            f"    the server's garbage collections: {step['server_collections']} "
            f"({step['server_collection_seconds'] * 1000:.0f} ms of its loop)",
            f"    RSS: server {_mib(step['server_rss_bytes'])}, Valkey "
            f"{_mib(step['valkey_rss_bytes'])}, bench {_mib(step['generator_rss_bytes'])}",
            f"    errors {step['errors']}, violations {step['violations']}, load average "
            f"{step['load_average']}",
        ]
        lines += [f"    error: {e}" for e in step["error_samples"]]
    lines.append(f"  summary: {ramp.get('summary')}")
    return lines


def _mib(value: float) -> str:
    return f"{value / KIB / KIB:.1f} MiB"
