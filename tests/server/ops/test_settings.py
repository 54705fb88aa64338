from __future__ import annotations

import pytest

from server.settings import Settings


def test_defaults() -> None:
    s = Settings.from_env({})
    assert s.redis_url is None
    assert s.port == 8000
    assert s.retention_seconds > 0


def test_from_env_converts_types() -> None:
    s = Settings.from_env(
        {"REDIS_URL": "redis://x:1/0", "PORT": "9001", "YAHTZEE_RATE_PER_SECOND": "2.5"}
    )
    assert (s.redis_url, s.port, s.rate_per_second) == ("redis://x:1/0", 9001, 2.5)


def test_empty_redis_url_means_embedded() -> None:
    assert Settings.from_env({"REDIS_URL": ""}).redis_url is None


def test_bad_values_name_the_variable() -> None:
    with pytest.raises(ValueError, match="PORT"):
        Settings.from_env({"PORT": "eighty"})
    with pytest.raises(ValueError, match="send_queue_size"):
        Settings(send_queue_size=0)


def test_overrides_win() -> None:
    assert Settings.from_env({"PORT": "1"}, port=2).port == 2


def test_redis_cluster_needs_a_url() -> None:
    s = Settings.from_env({"REDIS_URL": "redis://n1:7000/0", "REDIS_CLUSTER": "1"})
    assert s.redis_cluster is True
    assert Settings.from_env({}).redis_cluster is False
    with pytest.raises(ValueError, match="REDIS_URL"):
        Settings.from_env({"REDIS_CLUSTER": "1"})


def test_every_kind_of_field_is_read_by_its_type() -> None:
    s = Settings.from_env(
        {
            "YAHTZEE_DEFLATE": "yes",
            "REDIS_CLUSTER": "0",
            "YAHTZEE_MIN_REPLICAS": "2",  # int | None
            "YAHTZEE_REDIS_TIMEOUT": "2.5",
            "YAHTZEE_LOG_LEVEL": "debug",
        }
    )
    assert (s.per_message_deflate, s.redis_cluster, s.min_replicas) == (True, False, 2)
    assert (s.redis_timeout_seconds, s.log_level) == (2.5, "debug")
    assert Settings.from_env({"YAHTZEE_DEFLATE": "off"}).per_message_deflate is False
    with pytest.raises(ValueError, match="YAHTZEE_DEFLATE"):
        Settings.from_env({"YAHTZEE_DEFLATE": "maybe"})
    with pytest.raises(ValueError, match="YAHTZEE_MIN_REPLICAS"):
        Settings.from_env({"YAHTZEE_MIN_REPLICAS": "two"})


def test_the_collector_is_paced_unless_a_young_threshold_is_set() -> None:
    assert (Settings().gc_growth, Settings().gc_young_threshold) == (0.25, None)
    s = Settings.from_env({"YAHTZEE_GC_GROWTH": "0.5", "YAHTZEE_GC_YOUNG_THRESHOLD": "50000"})
    assert (s.gc_growth, s.gc_young_threshold) == (0.5, 50_000)
    with pytest.raises(ValueError, match="gc_growth"):
        Settings(gc_growth=0)
    with pytest.raises(ValueError, match="gc_young_threshold"):
        Settings(gc_young_threshold=0)
