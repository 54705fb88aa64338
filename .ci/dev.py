#!/usr/bin/env python3
"""One entry point for a fresh machine that has only Python 3.11+.

    python3 .ci/dev.py serve [yahtzee serve options]   # run the service
    python3 .ci/dev.py test  [pytest options]          # run the whole test suite
    python3 .ci/dev.py check                           # ruff + mypy --strict
    python3 .ci/dev.py cluster [--servers N]           # local Redis Cluster + N servers
    python3 .ci/dev.py yahtzee <subcommand> ...        # any other `yahtzee` command
    python3 .ci/dev.py pythons                         # the supported Pythons this machine has
    python3 .ci/dev.py flaky N [pytest options]        # the suite N times under CPU contention
    python3 .ci/dev.py soak [--minutes N] [--cluster]  # chaos soak (tests/faults/soak.py --help)

It creates `.venv/` beside the repository (override with YAHTZEE_VENV), installs the pinned,
hash-checked dependencies from `requirements.lock` and the project itself (editable), and then
runs the command inside that environment. The install is redone only when the lock file or
pyproject.toml changed, so the second run starts at once. Standard library only, on purpose:
nothing may be needed before this script runs.
"""

from __future__ import annotations

import glob
import hashlib
import os
import re
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


def supported_versions() -> list[tuple[int, int]]:
    """The CPython versions that pyproject.toml's classifiers name: the ones CI tests."""
    # A regex, not tomllib: this must also run (and explain itself) on a Python older than 3.11.
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    found = re.findall(r'"Programming Language :: Python :: 3\.(\d+)"', text)
    return sorted((3, int(minor)) for minor in found)


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
    _require_supported_python()
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


def _dotted(version: tuple[int, int]) -> str:
    return f"{version[0]}.{version[1]}"


def unsupported_python_message(here: tuple[int, int]) -> str | None:
    """Why Python `here` cannot run the project (None if it can)."""
    supported = supported_versions()
    if here in supported:
        return None
    names = f"{_dotted(supported[0])} to {_dotted(supported[-1])}"
    return f"This project supports CPython {names}; this is {_dotted(here)}."


def _require_supported_python() -> None:
    # This script may be started by any python3 on the machine, so the check is not redundant.
    message = unsupported_python_message((sys.version_info.major, sys.version_info.minor))
    if message is None:
        return
    found = [path for _, path in find_pythons() if path]
    if found:
        message += f" This machine has {found[-1]}: run `{found[-1]} .ci/dev.py ...`."
    sys.exit(message)


def _reports_version(candidate: str, version: tuple[int, int]) -> bool:
    """Whether `candidate` runs, is CPython `version`, and can create a venv with pip."""
    probe = "import sys, venv, ensurepip; print(sys.implementation.name, *sys.version_info[:2])"
    try:
        result = subprocess.run(
            [candidate, "-c", probe], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return result.returncode == 0 and result.stdout.split() == ["cpython", *map(str, version)]


def _candidates(version: tuple[int, int]) -> list[str]:
    name = f"python{_dotted(version)}"
    pyenv = os.environ.get("PYENV_ROOT", str(Path.home() / ".pyenv"))

    def patch_level(path: str) -> int:
        match = re.search(r"/\d+\.\d+\.(\d+)/", path)
        return int(match.group(1)) if match else -1

    # pyenv's own builds first, newest patch release first; then whatever PATH offers.
    builds = sorted(glob.glob(f"{pyenv}/versions/{_dotted(version)}.*/bin/{name}"), key=patch_level)
    candidates = [*reversed(builds), shutil.which(name), sys.executable]
    return [c for c in dict.fromkeys(candidates) if c]


def find_pythons() -> list[tuple[tuple[int, int], str | None]]:
    """Each supported version with an interpreter for it on this machine (None if there is none)."""
    found: list[tuple[tuple[int, int], str | None]] = []
    for version in supported_versions():
        usable = (c for c in _candidates(version) if _reports_version(c, version))
        found.append((version, next(usable, None)))
    return found


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


def flaky(runs: int, pytest_args: list[str]) -> int:
    """Run the suite ``runs`` times while one busy loop per core competes for the CPU (a busy
    CI machine), and report every test that failed in any run; non-zero if one did."""
    import time
    import xml.etree.ElementTree as ElementTree

    busy = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"])
        for _ in range(os.cpu_count() or 1)
    ]
    failures: dict[str, list[int]] = {}
    try:
        for run in range(1, runs + 1):
            report = VENV / f"flaky-{run}.xml"
            begun = time.monotonic()
            code = subprocess.call(
                [str(PYTHON), "-m", "pytest", "-q", "-p", "no:cacheprovider",
                 f"--junitxml={report}", *pytest_args],
                cwd=ROOT,
            )  # fmt: skip
            failed = []
            if report.exists():
                for case in ElementTree.parse(report).iter("testcase"):
                    if case.find("failure") is not None or case.find("error") is not None:
                        failed.append(f"{case.get('classname')}::{case.get('name')}")
            if code != 0 and not failed:
                failed.append(f"pytest exit code {code}")
            for name in failed:
                failures.setdefault(name, []).append(run)
            took = time.monotonic() - begun
            _say(f"flaky: run {run}/{runs}: {'green' if not failed else 'FAILED'} in {took:.0f} s")
    finally:
        for process in busy:
            process.kill()
    _say(f"flaky: {runs - len({r for rs in failures.values() for r in rs})}/{runs} runs green")
    for name, failed_runs in sorted(failures.items()):
        _say(f"flaky: {name} failed in run(s) {', '.join(map(str, failed_runs))}")
    return 1 if failures else 0


def main(argv: list[str]) -> None:
    if not argv or argv[0] in {"-h", "--help"}:
        print(__doc__)
        return
    command, rest = argv[0], argv[1:]
    if command == "pythons":  # needs no environment: CI and the lock script ask before setup
        for version, path in find_pythons():
            print(_dotted(version), path or "-")
        return
    ensure_environment()
    if command in {"setup", "test", "flaky"}:
        ensure_npm_packages()
    if command == "serve":
        _exec(BIN / "yahtzee", "serve", *rest)
    elif command == "test":
        _exec(PYTHON, "-m", "pytest", *rest)
    elif command == "check":
        sys.exit(check())
    elif command == "cluster":
        _exec(PYTHON, "-m", "server.ops.cluster_demo", *rest)
    elif command == "yahtzee":
        _exec(BIN / "yahtzee", *rest)
    elif command == "flaky":
        if not rest or not rest[0].isdigit():
            sys.exit("usage: .ci/dev.py flaky N [pytest options]")
        sys.exit(flaky(int(rest[0]), rest[1:]))
    elif command == "soak":
        _exec(PYTHON, ROOT / "tests" / "faults" / "soak.py", *rest)
    elif command == "setup":
        return
    else:
        known = "serve, test, check, cluster, yahtzee, setup, pythons, flaky, soak"
        sys.exit(f"unknown command {command!r}; try: {known}")


if __name__ == "__main__":
    main(sys.argv[1:])
