"""The architecture's import boundaries, checked on the source itself.

`server/game` (the rules) and `protocol` (the wire contract) stay pure: no I/O library, so they
can be tested without a network and reused by any client. `clients` depend on `protocol` only,
never on `server`. The check reads every module's imports with `ast`, so a lazy import inside a
function is caught too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
IO_LIBRARIES = frozenset(
    {"asyncio", "socket", "redis", "websockets", "starlette", "uvicorn", "selectors", "ssl"}
)


_DYNAMIC_IMPORTS = frozenset({"import_module", "__import__"})


def _dynamic_import(node: ast.AST) -> str | None:
    """The module named by ``importlib.import_module("x")`` / ``__import__("x")``, if any."""
    if not isinstance(node, ast.Call) or not node.args:
        return None
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    first = node.args[0]
    if name in _DYNAMIC_IMPORTS and isinstance(first, ast.Constant):
        return str(first.value)
    return None


def imported_modules(path: Path) -> set[str]:
    """Top-level names of every module that `path` imports (absolute imports only), including
    those named as strings to ``importlib.import_module`` or ``__import__``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
        elif (dynamic := _dynamic_import(node)) is not None:
            names.add(dynamic.split(".")[0])
    return names


def python_files(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


def test_imported_modules_sees_plain_from_and_nested_imports(tmp_path: Path) -> None:
    module = tmp_path / "sample.py"
    module.write_text(
        "import os.path\nfrom redis import asyncio\nfrom . import sibling\n"
        "def later():\n    import socket\n"
        "def hidden():\n    importlib.import_module('clients.cli')\n    __import__('uvicorn')\n"
    )
    assert imported_modules(module) == {"os", "redis", "socket", "clients", "uvicorn"}


@pytest.mark.parametrize("package", ["server/game", "protocol"])
def test_pure_packages_import_no_io_library(package: str) -> None:
    files = python_files(package)
    assert files, f"{package} has no modules"
    offenders = {
        str(path.relative_to(ROOT)): sorted(imported_modules(path) & IO_LIBRARIES)
        for path in files
        if imported_modules(path) & IO_LIBRARIES
    }
    assert offenders == {}


def test_pure_packages_do_not_import_the_server_glue() -> None:
    for package in ("server/game", "protocol"):
        for path in python_files(package):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    allowed = package == "server/game" and node.module.startswith("server.game")
                    assert allowed or not node.module.startswith("server"), (path, node.module)


def test_clients_import_nothing_from_server() -> None:
    files = python_files("clients")
    assert files, "clients has no modules"
    offenders = [str(p.relative_to(ROOT)) for p in files if "server" in imported_modules(p)]
    assert offenders == []


def test_no_server_module_imports_a_client() -> None:
    """The ``yahtzee`` command is composed at the top (pyproject's entry points), so the server
    never needs the clients, not even through ``importlib``."""
    offenders = [str(p.relative_to(ROOT)) for p in python_files("server")
                 if "clients" in imported_modules(p)]  # fmt: skip
    assert offenders == []


#: The server's role folders, top to bottom: a module may import its own folder and the folders
#: below it, never one above. ``app``, ``cli``, ``players`` (the players part's wiring) and
#: ``footprint`` (a measuring tool) compose: they sit above them all;
#: the pure cores (``game``, ``solver``), ``ops`` and ``settings`` below them all.
SERVER_LAYERS = ("transport", "service", "fanout", "storage", "boundary", "strategy", "domain")
SERVER_FOUNDATIONS = frozenset({"game", "solver", "ops", "settings"})
COMPOSITION_ROOT = frozenset({"app", "cli", "players", "footprint"})


def server_imports(path: Path) -> set[str]:
    """The ``server`` parts (the name after ``server.``) that ``path`` imports."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    parts: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] if node.module != "server" else [
                f"server.{alias.name}" for alias in node.names
            ]  # fmt: skip
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        parts.update(name.split(".")[1] for name in names if name.startswith("server."))
    return parts


def _part_of(path: Path) -> str:
    relative = path.relative_to(ROOT / "server")
    return relative.parts[0] if len(relative.parts) > 1 else relative.stem


def test_every_server_module_lives_in_a_role_folder_or_the_root() -> None:
    known = set(SERVER_LAYERS) | SERVER_FOUNDATIONS | COMPOSITION_ROOT | {"__init__"}
    strays = sorted({_part_of(p) for p in python_files("server")} - known)
    assert strays == []


def test_server_imports_point_down_the_layers() -> None:
    """The layer order is a test, not a sentence of the README."""
    offenders: list[str] = []
    for path in python_files("server"):
        part = _part_of(path)
        if part in COMPOSITION_ROOT or part in {"game", "solver", "__init__"}:
            continue  # the root composes everything; the cores have their own tests above
        if part in SERVER_LAYERS:
            below = set(SERVER_LAYERS[SERVER_LAYERS.index(part) :]) | SERVER_FOUNDATIONS
        elif part == "ops":
            below = {"ops", "settings"}
        else:  # settings
            below = set()
        offenders += [f"{path.relative_to(ROOT)} -> server.{name}"
                      for name in sorted(server_imports(path) - below)]  # fmt: skip
    assert offenders == []


def test_only_the_composition_root_builds_the_concrete_store_feed_and_service() -> None:
    concrete = {"RedisStore", "Feed", "GameService", "Seats", "Upkeep", "Runtime"}
    builders: list[str] = []
    for path in python_files("server"):
        if _part_of(path) in COMPOSITION_ROOT:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) in concrete:
                builders.append(f"{path.relative_to(ROOT)}: {node.func.id}(...)")  # type: ignore[attr-defined]
    assert builders == []
