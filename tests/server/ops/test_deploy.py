"""docker-compose.yml and Dockerfile structure (no Docker engine runs in CI)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    return data


def test_services(compose: dict[str, Any]) -> None:
    assert set(compose["services"]) >= {"redis", "server", "lb"}


def test_postgres_keeps_its_data_and_the_servers_use_it(compose: dict[str, Any]) -> None:
    postgres = compose["services"]["postgres"]
    assert any(v.endswith(":/var/lib/postgresql/data") for v in postgres["volumes"])
    assert "postgres-data" in compose["volumes"]
    assert "healthcheck" in postgres
    server = compose["services"]["server"]
    assert server["environment"]["DATABASE_URL"].startswith("postgresql://")
    assert "@postgres:5432/" in server["environment"]["DATABASE_URL"]


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


# -- the cluster deployment (.ci/docker-compose.cluster.yml) ------------------------------------


@pytest.fixture(scope="module")
def cluster_compose() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((ROOT / ".ci" / "docker-compose.cluster.yml").read_text())
    return data


def _flag(command: list[str], name: str) -> str:
    return command[command.index(name) + 1]


def test_only_the_single_redis_compose_file_is_at_the_top_level() -> None:
    assert not (ROOT / "docker-compose.cluster.yml").exists()


def test_cluster_has_six_persistent_cluster_nodes(cluster_compose: dict[str, Any]) -> None:
    nodes = {n: s for n, s in cluster_compose["services"].items() if n.startswith("redis-")}
    assert len(nodes) == 6
    for name, node in nodes.items():
        command = node["command"]
        assert _flag(command, "--cluster-enabled") == "yes"
        assert _flag(command, "--appendonly") == "yes"
        assert _flag(command, "--cluster-require-full-coverage") == "no"
        assert int(_flag(command, "--cluster-node-timeout")) <= 5000
        assert node["volumes"] == [f"{name}:/data"]
        assert name in cluster_compose["volumes"]
        assert "healthcheck" in node


def test_cluster_init_joins_every_node_with_one_replica_each(
    cluster_compose: dict[str, Any],
) -> None:
    init = cluster_compose["services"]["cluster-init"]
    script = " ".join(init["command"])
    assert "--cluster create" in script
    assert "--cluster-replicas 1" in script
    assert "for n in 1 2 3 4 5 6" in script
    assert set(init["depends_on"]) == {f"redis-{i}" for i in range(1, 7)}
    assert all(d["condition"] == "service_healthy" for d in init["depends_on"].values())


def test_cluster_servers_use_redis_cluster(cluster_compose: dict[str, Any]) -> None:
    server = cluster_compose["services"]["server"]
    env = server["environment"]
    assert env["REDIS_CLUSTER"] == "1"
    assert env["REDIS_URL"].startswith("redis://redis-1:")
    assert server["deploy"]["replicas"] == 2
    assert server["depends_on"]["cluster-init"]["condition"] == "service_completed_successfully"
    assert server["build"] == ".."  # the repository root, seen from .ci/
    assert "/readyz" in " ".join(server["healthcheck"]["test"])
    assert "ports" not in server


def test_cluster_load_balancer_passes_websocket_upgrades(cluster_compose: dict[str, Any]) -> None:
    lb = cluster_compose["services"]["lb"]
    conf = cluster_compose["configs"][lb["configs"][0]["source"]]["content"]
    assert "server server:8000" in conf
    assert "Upgrade $$http_upgrade" in conf
    assert lb["depends_on"]["server"]["condition"] == "service_healthy"


def test_every_data_file_of_the_server_is_in_the_package_data() -> None:
    """A non-editable install (the Dockerfile's) carries only what package-data names: every
    Lua script and SQL migration must match one of its patterns."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["server"]
    server = ROOT / "server"
    data = [p for p in server.rglob("*") if p.suffix in (".lua", ".sql")]
    assert data
    packaged = {path for pattern in patterns for path in server.glob(pattern)}  # as setuptools
    assert sorted(str(p.relative_to(server)) for p in data if p not in packaged) == []
