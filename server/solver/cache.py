"""Tables on disk: built once per rule set and table version, then loaded in milliseconds.

Files live in one directory (``YAHTZEE_SOLVER_CACHE``, else ``$XDG_CACHE_HOME/yahtzee-service``,
else ``~/.cache/yahtzee-service``), named ``<rules>.v<version>.values.npy`` (and
``.moments.npy`` when the second moments were built), written to a temporary name first and
renamed, so a reader never sees half a file and concurrent builders do no harm. Loading maps
the file read-only (``numpy.load(mmap_mode="r")``).
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from .build import Progress
from .rules import SolverRules
from .table import TABLE_VERSION, Table, build_table

__all__ = ["cache_paths", "default_cache_dir", "load_table", "save_table", "table_for"]


def default_cache_dir() -> Path:
    """Where tables are kept unless a directory is given."""
    explicit = os.environ.get("YAHTZEE_SOLVER_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "yahtzee-service"


def cache_paths(rules: SolverRules, cache_dir: Path) -> tuple[Path, Path, Path]:
    """The values, moments and metadata files of ``rules``."""
    stem = f"{rules.name}.v{TABLE_VERSION}"
    return (
        cache_dir / f"{stem}.values.npy",
        cache_dir / f"{stem}.moments.npy",
        cache_dir / f"{stem}.json",
    )


def _write_atomically(path: Path, write: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            if isinstance(write, np.ndarray):
                np.save(out, write)
            else:
                out.write(json.dumps(write).encode())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def save_table(table: Table, cache_dir: Path | None = None) -> None:
    """Write ``table`` to the cache."""
    values_path, moments_path, meta_path = cache_paths(
        table.rules, cache_dir or default_cache_dir()
    )
    _write_atomically(values_path, np.ascontiguousarray(table.values))
    if table.moments is not None:
        _write_atomically(moments_path, np.ascontiguousarray(table.moments))
    _write_atomically(meta_path, {"rules": table.rules.name, "build_seconds": table.build_seconds})


def load_table(
    rules: SolverRules, cache_dir: Path | None = None, *, with_moments: bool = False
) -> Table | None:
    """The cached table of ``rules``, or ``None`` (also when moments are asked for and absent)."""
    values_path, moments_path, meta_path = cache_paths(rules, cache_dir or default_cache_dir())
    if not values_path.exists() or (with_moments and not moments_path.exists()):
        return None
    values = np.load(values_path, mmap_mode="r")
    moments = np.load(moments_path, mmap_mode="r") if moments_path.exists() else None
    seconds = 0.0
    if meta_path.exists():
        seconds = float(json.loads(meta_path.read_text()).get("build_seconds", 0.0))
    return Table(rules, values, moments, seconds)


def table_for(
    rules: SolverRules,
    cache_dir: Path | None = None,
    *,
    with_moments: bool = False,
    workers: int = 1,
    progress: Progress | None = None,
) -> Table:
    """The table of ``rules`` from the cache, built (and cached) first if missing."""
    cached = load_table(rules, cache_dir, with_moments=with_moments)
    if cached is not None:
        return cached
    began = time.perf_counter()
    table = build_table(rules, with_moments=with_moments, workers=workers, progress=progress)
    table = replace(table, build_seconds=time.perf_counter() - began)
    save_table(table, cache_dir)
    return table
