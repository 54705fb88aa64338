"""docker-compose.yml and Dockerfile structure (no Docker engine runs in CI)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    return data


def test_services(compose: dict[str, Any]) -> None:
    assert set(compose["services"]) >= {"redis", "server", "lb"}


def test_redis_is_append_only_and_persistent(compose: dict[str, Any]) -> None:
    redis = compose["services"]["redis"]
    command = redis["command"]
    assert command[command.index("--appendonly") + 1] == "yes"
    assert any(v.endswith(":/data") for v in redis["volumes"])
    assert "redis-data" in compose["volumes"]
    assert "healthcheck" in redis


def test_two_server_replicas_with_env_and_health(compose: dict[str, Any]) -> None:
    server = compose["services"]["server"]
    assert server["deploy"]["replicas"] == 2
    assert server["environment"]["REDIS_URL"].startswith("redis://redis:")
    assert "/readyz" in " ".join(server["healthcheck"]["test"])
    assert server["depends_on"]["redis"]["condition"] == "service_healthy"
    assert "ports" not in server  # reached only through the load balancer
    assert server["build"] == "."


def test_load_balancer_passes_websocket_upgrades(compose: dict[str, Any]) -> None:
    lb = compose["services"]["lb"]
    assert lb["ports"]
    assert "healthcheck" in lb
    source = lb["configs"][0]["source"]
    conf = compose["configs"][source]["content"]
    assert "proxy_pass http://yahtzee" in conf
    assert "server server:8000" in conf
    assert "proxy_http_version 1.1" in conf
    assert "Upgrade $$http_upgrade" in conf  # $$ is compose's escape for a literal $
    assert "$$connection_upgrade" in conf


def test_dockerfile_installs_from_lock() -> None:
    text = (ROOT / "Dockerfile").read_text()
    assert "--require-hashes" in text
    assert "-r requirements.lock" in text
    assert "yahtzee" in text.split("CMD")[-1]
    assert "HEALTHCHECK" in text
