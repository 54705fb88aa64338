"""The server's patches of library internals, pinned: each module that relies on a private
API declares ``PRIVATE_API = {distribution: version}``; when an installed version differs
(a lock upgrade), this test names the modules to re-read against the new version."""

from __future__ import annotations

import ast
import importlib.metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def declared_pins() -> dict[str, dict[str, str]]:
    """``PRIVATE_API`` of every server module that has one, read from the source."""
    pins: dict[str, dict[str, str]] = {}
    for path in sorted((ROOT / "server").rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and node.target.id == "PRIVATE_API"
                and node.value is not None
            ):
                pins[str(path.relative_to(ROOT))] = ast.literal_eval(node.value)
    return pins


def test_the_patched_modules_are_the_known_ones() -> None:
    assert sorted(declared_pins()) == [
        "server/app.py",
        "server/storage/cluster_client.py",
        "server/storage/pipe.py",
        "server/storage/replicas.py",
        "server/transport/coalesce.py",
        "server/transport/guard.py",
    ]


def test_every_patched_library_is_at_the_version_its_patch_was_checked_against() -> None:
    stale = [
        f"{module}: written for {dist} {pinned}, installed {importlib.metadata.version(dist)}"
        for module, pins in declared_pins().items()
        for dist, pinned in pins.items()
        if importlib.metadata.version(dist) != pinned
    ]
    assert stale == []
