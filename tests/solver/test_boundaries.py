"""``server/solver`` depends on ``server.game``, numpy and the standard library only, and only
its cache and command line touch files or the terminal."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SOLVER = Path(__file__).parents[2] / "server" / "solver"
IO_MODULES = {"os", "tempfile", "json", "pathlib", "sys", "time", "argparse", "statistics"}
IO_ALLOWED_IN = {"cache.py", "cli.py"}


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


@pytest.mark.parametrize("path", sorted(SOLVER.glob("*.py")), ids=lambda p: p.name)
def test_solver_module_imports(path: Path) -> None:
    for name in _imports(path):
        top = name.split(".")[0]
        if top == "server":
            assert name.startswith(("server.game", "server.solver")), f"{path.name}: {name}"
        else:
            assert top not in {"protocol", "clients", "redis", "asyncio", "starlette"}, name
        if path.name not in IO_ALLOWED_IN:
            assert top not in IO_MODULES, f"{path.name} imports {name}"
