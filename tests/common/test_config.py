"""One configuration object per process: precedence, types, errors, masking, the doc table."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from arena.services.common.config import SETTINGS, Config, settings_table

DOC = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"


def test_flags_beat_the_environment_which_beats_the_defaults() -> None:
    env = {"ARENA_LISTEN": "0.0.0.0:7000", "ARENA_MAX_MATCHES": "3",
           "ARENA_SHARED_CACHE": "false", "ARENA_GRACE_MS": "50"}
    config = Config.load("referee", ["--listen", "127.0.0.1:9"], env)
    assert config.listen == "127.0.0.1:9"
    assert config.max_matches == 3 and config.shared_cache is False
    assert config.delivery.grace_ms == 50
    assert Config.load("referee", [], {}).max_matches == 64


def test_a_bad_value_names_its_variable() -> None:
    with pytest.raises(ValueError, match="ARENA_MAX_MATCHES='lots'"):
        Config.load("referee", [], {"ARENA_MAX_MATCHES": "lots"})
    with pytest.raises(ValueError, match="ARENA_AUTH"):
        Config.load("referee", [], {"ARENA_AUTH": "perhaps"})


@pytest.mark.parametrize(("variable", "value", "expected"), [
    ("ARENA_WEB_ANALYSES", "-3", "expected 1 or more"),
    ("ARENA_MAX_MATCHES", "0", "expected 1 or more"),
    ("ARENA_HEARTBEAT_MS", "0", "expected 1 or more"),
    ("ARENA_GRACE_MS", "-1", "expected 0 or more"),
    ("ARENA_CPU_WALL_FACTOR", "0.5", "expected a number from 1 to 100"),
    ("ARENA_LADDER_RECONCILE_S", "0", "expected 0.1 or more"),
    ("ARENA_TRACE_SAMPLE_RATIO", "1.5", "expected a number from 0 to 1"),
    ("ARENA_WEB_DRAIN_S", "nan", "expected a finite number"),
    ("ARENA_WEB_DRAIN_S", "-inf", "expected a finite number"),
    # Huge: a move job's int64 deadline overflowed, and no match could start.
    ("ARENA_STALL_TIMEOUT_MS", "100000000000000000000", "expected at most 2147483647"),
    ("ARENA_LADDER_RECONCILE_S", "1e300", "expected at most 2147483647"),  # OverflowError
    ("ARENA_CPU_WALL_FACTOR", "1e12", "expected a number from 1 to 100"),
])
def test_a_number_out_of_its_bounds_is_refused(variable: str, value: str, expected: str) -> None:
    # Not clamped or taken as it is (ARENA_WEB_ANALYSES=-3 used to run one analysis at a
    # time, ARENA_HEARTBEAT_MS=0 a busy loop): refused, naming the variable and the bounds.
    with pytest.raises(ValueError) as refused:
        Config.load("web", [], {variable: value})
    assert str(refused.value) == f"{variable}={value!r}: {expected}"


@pytest.mark.parametrize(("variable", "value", "expected"), [
    ("ARENA_LISTEN", "127.0.0.1:70000",
     "configuration error: ARENA_LISTEN='127.0.0.1:70000': expected host:port, the port a "
     "number from 0 to 65535"),  # gRPC served it on port 4464
    ("ARENA_METRICS_LISTEN", "127.0.0.1:-1",
     "configuration error: ARENA_METRICS_LISTEN='127.0.0.1:-1': expected host:port, the "
     "port a number from 0 to 65535"),  # OverflowError
    ("ARENA_LISTEN", "nowhere.invalid:5000", "cannot serve on nowhere.invalid:5000: could "
     "not bind nowhere.invalid:5000: Failed to bind"),  # RuntimeError
    ("ARENA_TOKENS", "{not json", "configuration error: bad tokens in ARENA_TOKENS: "),
    ("ARENA_TOKENS_FILE", "/nonexistent/tokens.json", "configuration error: [Errno 2] No "
     "such file or directory: '/nonexistent/tokens.json'"),  # FileNotFoundError
    ("ARENA_QUOTAS_FILE", "/nonexistent/quotas.json", "configuration error: [Errno 2] No "
     "such file or directory: '/nonexistent/quotas.json'"),
])
def test_a_bad_address_or_file_stops_a_service_with_one_line(variable: str, value: str,
                                                             expected: str) -> None:
    # Each of these used to end the service in a traceback (or, the port past 65535, serve
    # on another port). Redis is not needed: the service stops before it would use it.
    done = subprocess.run([sys.executable, "-m", "arena.services.registry"],
                          env={"PATH": "/usr/bin:/bin", "ARENA_ADMIN_TOKEN": "a" * 20,
                               "ARENA_LOG_LEVEL": "WARNING", "ARENA_REDIS_URL":
                               "redis://127.0.0.1:1/0", variable: value},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.splitlines()[-1].startswith(f"arena-registry: {expected}")


def test_every_default_is_within_its_bounds() -> None:
    for setting in SETTINGS:
        if type(setting.default) in (int, float):
            assert setting.low <= setting.default <= (setting.high or setting.default), setting
            Config.load("web", [], {setting.env: str(setting.default)})  # and parses


def test_no_auth_and_the_former_worker_id_flag() -> None:
    config = Config.load("worker", ["--no-auth", "--worker-id", "w7"], {})
    assert config.auth is False and config.instance == "w7"


def test_the_effective_configuration_masks_secrets() -> None:
    config = Config.load("ladder", [], {"ARENA_ADMIN_TOKEN": "s3cret", "ARENA_REFEREE": "r:1"})
    text = "\n".join(config.describe())
    assert "s3cret" not in text and "admin_token = ***" in text
    assert "referee = 'r:1'" in text
    assert "max_matches" not in text  # the ladder does not read it
    assert config.peer_token == "s3cret"


def test_every_setting_is_a_config_field_and_documented() -> None:
    fields = set(Config.__dataclass_fields__)
    assert {s.name for s in SETTINGS} <= fields
    doc = DOC.read_text()
    start = doc.index("<!-- settings table")
    section = doc[doc.index("\n", doc.index("-->", start)) + 1: doc.index("<!-- end of settings")]
    assert section.strip() == settings_table().strip()
