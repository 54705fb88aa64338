"""server/game stays pure: no I/O, randomness, clocks or networking imports at module level."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

GAME = Path(__file__).parents[2] / "server" / "game"
FORBIDDEN = {
    "asyncio",
    "random",
    "secrets",
    "socket",
    "time",
    "datetime",
    "redis",
    "os",
    "subprocess",
    "threading",
    "starlette",
    "websockets",
    "uvicorn",
}


@pytest.mark.parametrize("path", sorted(GAME.glob("*.py")), ids=lambda p: p.name)
def test_module_imports_nothing_impure(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:  # module level only; probabilities.main imports pathlib lazily
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        for name in names:
            assert name.split(".")[0] not in FORBIDDEN, f"{path.name} imports {name}"
