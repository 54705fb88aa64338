"""``yahtzee bench``: the game server measured against a bare WebSocket broadcast server.

Modules: :mod:`~clients.bench.bare` (the baseline server), :mod:`~clients.bench.procs` (the
servers as subprocesses, their CPU and RSS), :mod:`~clients.bench.streams` (HDR histograms and
stream verification), :mod:`~clients.bench.pacing` (closed and open loop),
:mod:`~clients.bench.targets` (game and bare rooms), :mod:`~clients.bench.runner` (rounds and
scenarios), :mod:`~clients.bench.report`, :mod:`~clients.bench.plot`, :mod:`~clients.bench.cli`;
players at human pace (``--ccu``, ``--vs-computer``): :mod:`~clients.bench.crowd` (the rooms),
:mod:`~clients.bench.ccu` (the ramps), :mod:`~clients.bench.drivers` (more generator processes).
Results: ``clients/bench/BENCHMARKS.md``; what each scenario measures and how:
``clients/bench/BENCHMARKS-METHOD.md``.
"""
