#!/usr/bin/env python3
"""One entry point for a fresh machine that has only Python 3.11+.

    python3 .ci/dev.py serve [yahtzee serve options]   # run the service
    python3 .ci/dev.py test  [pytest options]          # run the whole test suite
    python3 .ci/dev.py check                           # ruff + mypy --strict
    python3 .ci/dev.py yahtzee <subcommand> ...        # any other `yahtzee` command

It creates `.venv/` beside the repository (override with YAHTZEE_VENV), installs the pinned,
hash-checked dependencies from `requirements.lock` and the project itself (editable), and then
runs the command inside that environment. The install is redone only when the lock file or
pyproject.toml changed, so the second run starts at once. Standard library only, on purpose:
nothing may be needed before this script runs.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = Path(os.environ.get("YAHTZEE_VENV", ROOT / ".venv"))
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / ("python.exe" if os.name == "nt" else "python")
STAMP = VENV / ".yahtzee-installed"
INPUTS = ("requirements.lock", "pyproject.toml")


def _fingerprint() -> str:
    digest = hashlib.sha256()
    for name in INPUTS:
        digest.update((ROOT / name).read_bytes())
    return digest.hexdigest()


def _say(text: str) -> None:
    print(f"[dev] {text}", file=sys.stderr, flush=True)


def _run(*args: str | Path, quiet_warnings: bool = False) -> None:
    env = dict(os.environ, PYTHONWARNINGS="ignore") if quiet_warnings else None
    subprocess.run([str(a) for a in args], check=True, cwd=ROOT, env=env)


def ensure_environment() -> None:
    """Create the virtual environment and install the locked dependencies when needed."""
    # This script may be started by any python3 on the machine, so the check is not redundant.
    if sys.version_info < (3, 11):  # noqa: UP036
        major, minor = sys.version_info[:2]
        sys.exit(f"Python 3.11 or newer is required (this is {major}.{minor}).")
    wanted = _fingerprint()
    if STAMP.exists() and STAMP.read_text().strip() == wanted and PYTHON.exists():
        return
    if not PYTHON.exists():
        _say(f"creating virtual environment in {VENV}")
        venv.EnvBuilder(with_pip=True).create(VENV)
    _say("installing pinned dependencies from requirements.lock (first run takes a minute)")
    pip = (PYTHON, "-m", "pip", "--disable-pip-version-check", "--quiet", "install")
    _run(*pip, "--require-hashes", "-r", ROOT / "requirements.lock")
    # The project itself: editable, no dependency resolution (everything is locked above).
    # setuptools' notes about editable installs are for packagers, not for the person running this.
    _run(*pip, "--no-deps", "--no-build-isolation", "-e", ROOT, quiet_warnings=True)
    STAMP.write_text(wanted)


# npm packages the tests need (ws for Node's tests of the web client, axe-core for the browser
# accessibility check): installed from their lock file when npm exists, redone when it changes.
NPM_PROJECTS = (ROOT / "tests" / "clients" / "web",)


def ensure_npm_packages() -> None:
    """`npm ci` in each NPM_PROJECTS folder whose lock file changed; a note if npm is missing."""
    npm = shutil.which("npm")
    for folder in NPM_PROJECTS:
        lock = folder / "package-lock.json"
        stamp = folder / "node_modules" / ".yahtzee-installed"
        wanted = hashlib.sha256(lock.read_bytes()).hexdigest()
        if stamp.exists() and stamp.read_text().strip() == wanted:
            continue
        if npm is None:
            _say(
                "npm not found: the JavaScript and accessibility tests will be skipped "
                "(Debian/Ubuntu: apt-get install nodejs npm)"
            )
            return
        _say(f"installing npm packages in {folder.relative_to(ROOT)} (npm ci)")
        try:
            _run(npm, "ci", "--no-audit", "--no-fund", "--loglevel=error", "--prefix", folder)
        except subprocess.CalledProcessError:
            # The Python tests can still run; the JavaScript ones will say what is missing.
            _say("npm ci failed: the JavaScript and accessibility tests will not run")
            continue
        stamp.write_text(wanted)


def _exec(*args: str | Path) -> None:
    argv = [str(a) for a in args]
    os.chdir(ROOT)
    if os.name == "nt":  # no exec on Windows: run and pass the exit code on
        sys.exit(subprocess.call(argv))
    os.execv(argv[0], argv)


def check() -> int:
    """ruff (lint + format) and mypy --strict; the exit code is non-zero if any failed."""
    failed = 0
    for argv in (
        (BIN / "ruff", "check", "."),
        (BIN / "ruff", "format", "--check", "."),
        (BIN / "mypy",),
    ):
        _say(" ".join(str(a) for a in argv))
        failed |= subprocess.call([str(a) for a in argv], cwd=ROOT) != 0
    return 1 if failed else 0


def main(argv: list[str]) -> None:
    if not argv or argv[0] in {"-h", "--help"}:
        print(__doc__)
        return
    command, rest = argv[0], argv[1:]
    ensure_environment()
    if command in {"setup", "test"}:
        ensure_npm_packages()
    if command == "serve":
        _exec(BIN / "yahtzee", "serve", *rest)
    elif command == "test":
        _exec(PYTHON, "-m", "pytest", *rest)
    elif command == "check":
        sys.exit(check())
    elif command == "yahtzee":
        _exec(BIN / "yahtzee", *rest)
    elif command == "setup":
        return
    else:
        sys.exit(f"unknown command {command!r}; try: serve, test, check, yahtzee, setup")


if __name__ == "__main__":
    main(sys.argv[1:])
