"""Autoscaling and monitoring manifests, checked offline:

- the KEDA ScaledObject (deploy/k8s/keda) and the Prometheus Operator's PodMonitor and
  PrometheusRule (deploy/monitoring) validate strictly against the CRDs' schemas, as the
  pinned ``cloudcoil-models-*`` packages generate them from the projects' CRDs (an unknown
  field or a wrong type fails);
- they fit the base manifests (targets, ports, the stream and group the workers read);
- promtool (Debian's prometheus package, through deploy/promtool.sh) checks the alert
  rules and runs their unit tests (deploy/monitoring/alerts-test.yaml);
- the Grafana dashboard and the rules only name metrics that Arena exports.
"""

from __future__ import annotations

import copy
import inspect
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import redis
import yaml
from arena.services.common import metrics
from arena.services.common.embedded_redis import EmbeddedRedis, free_port
from arena.services.common.protocol.keys import MOVE_STREAM, WORKER_GROUP
from arena.services.common.redis_acl import acl_text, secret_name
from arena.services.referee.status import QueueCollector
from arena.services.worker.consumer import WorkerLoop
from cloudcoil.models.keda.v1alpha1 import ScaledObject, TriggerAuthentication
from cloudcoil.models.prometheus_operator.v1 import PodMonitor, PrometheusRule
from prometheus_client import REGISTRY
from prometheus_client.metrics import MetricWrapperBase
from prometheus_client.metrics_core import Metric
from pydantic import BaseModel, ValidationError

from tests.deploy.conftest import DEPLOY
from tests.deploy.test_k8s import find, load

KEDA = DEPLOY / "k8s" / "keda"
MONITORING = DEPLOY / "monitoring"
MODELS: dict[str, type[BaseModel]] = {"ScaledObject": ScaledObject, "PodMonitor": PodMonitor,
                                      "PrometheusRule": PrometheusRule,
                                      "TriggerAuthentication": TriggerAuthentication}


def validate(resource: dict[str, Any]) -> None:
    """Strict: types are not coerced, and a field the schema does not know (which the
    models would drop) makes the round trip differ."""
    model = MODELS[resource["kind"]].model_validate(resource, strict=True)
    assert model.model_dump(by_alias=True, exclude_unset=True, mode="json") == resource, (
        f"{resource['kind']}/{resource['metadata']['name']} has fields its schema lacks")


def kustomized(folder: Path) -> list[dict[str, Any]]:
    docs = load(folder / "kustomization.yaml")[0]
    return [doc for name in docs["resources"] if name.endswith(".yaml")
            for doc in load(folder / name)]


def scaled_object() -> dict[str, Any]:
    (found,) = [r for r in kustomized(KEDA) if r["kind"] == "ScaledObject"]
    return found


def test_custom_resources_validate_strictly() -> None:
    resources = kustomized(KEDA) + kustomized(MONITORING)
    assert sorted(r["kind"] for r in resources) == ["PodMonitor", "PrometheusRule",
                                                    "ScaledObject", "TriggerAuthentication"]
    for resource in resources:
        validate(resource)


def test_the_validation_is_not_vacuous() -> None:
    broken = copy.deepcopy(scaled_object())
    broken["spec"]["maxReplicaCont"] = 3
    with pytest.raises(AssertionError, match="fields its schema lacks"):
        validate(broken)
    broken = copy.deepcopy(scaled_object())
    broken["spec"]["minReplicaCount"] = "1"
    with pytest.raises(ValidationError):
        validate(broken)
    rules = copy.deepcopy(kustomized(MONITORING)[1])
    rules["spec"]["groups"][0]["rules"][0]["for"] = 120
    with pytest.raises(ValidationError):
        validate(rules)


def test_keda_overlay_replaces_the_cpu_autoscaler_of_the_base() -> None:
    overlay = load(KEDA / "kustomization.yaml")[0]
    assert overlay["resources"][0] == ".."  # the whole base, plus the ScaledObject
    (patch,) = overlay["patches"]
    deleted = yaml.safe_load(patch["patch"])
    assert deleted["$patch"] == "delete"
    hpa = find(deleted["kind"], deleted["metadata"]["name"])  # it exists in the base
    target = scaled_object()["spec"]["scaleTargetRef"]
    assert (target["kind"], target["name"]) == (hpa["spec"]["scaleTargetRef"]["kind"],
                                                hpa["spec"]["scaleTargetRef"]["name"])
    find("Deployment", target["name"])
    assert scaled_object()["spec"]["maxReplicaCount"] >= hpa["spec"]["maxReplicas"]


def test_keda_reads_the_workers_group_of_the_move_stream() -> None:
    (trigger,) = scaled_object()["spec"]["triggers"]
    assert trigger["type"] == "redis-streams"
    meta = trigger["metadata"]
    assert (meta["stream"], meta["consumerGroup"]) == (MOVE_STREAM, WORKER_GROUP)
    assert int(meta["pendingEntriesCount"]) >= 1
    host, port = meta["address"].rsplit(":", 1)
    service = find("Service", host.split(".")[0])
    assert host == f"{service['metadata']['name']}.{service['metadata']['namespace']}" \
                   ".svc.cluster.local"
    config = find("ConfigMap", "arena-config")["data"]
    assert config["ARENA_REDIS_URL"].startswith(f"redis://{service['metadata']['name']}:{port}/")
    assert f"/{meta['databaseIndex']}" == config["ARENA_REDIS_URL"][-2:]


def test_keda_logs_in_to_redis_as_the_workers_user(tmp_path: Path) -> None:
    """Redis admits a caller without a user to PING only: KEDA needs a user that may run
    XPENDING. It had none, so the scaler's every read was refused."""
    (trigger,) = scaled_object()["spec"]["triggers"]
    (auth,) = [r for r in kustomized(KEDA) if r["kind"] == "TriggerAuthentication"
               and r["metadata"]["name"] == trigger["authenticationRef"]["name"]]
    assert auth["metadata"]["namespace"] == scaled_object()["metadata"]["namespace"]
    (username,) = auth["spec"]["env"]
    (password,) = auth["spec"]["secretTargetRef"]
    assert (username["parameter"], password["parameter"]) == ("username", "password")
    pod = find("Deployment", "worker")["spec"]["template"]["spec"]
    (container,) = [c for c in pod["containers"] if c["name"] == username["containerName"]]
    env = {e["name"]: e.get("value") for e in container["env"]}
    user = env[username["name"]]
    (volume,) = [v for v in pod["volumes"] if v["name"] == "redis-password"]
    assert volume["secret"]["secretName"] == password["name"]
    assert [i["key"] for i in volume["secret"]["items"]] == [password["key"]]
    assert password["key"] == secret_name(user)  # the password of that very user
    # And that user may read the group's pending entries on a server with Arena's users.
    passwords = {name: f"a-long-password-of-{name}" for name in ("admin", user)}
    acl = tmp_path / "users.acl"
    acl.write_text(acl_text("durable", passwords))
    with EmbeddedRedis(tmp_path / "redis", "durable", acl_file=acl,
                       admin_password=passwords["admin"]) as server:
        admin = redis.Redis.from_url(server.admin_url)
        admin.xgroup_create(MOVE_STREAM, WORKER_GROUP, id="0", mkstream=True)
        with pytest.raises(redis.exceptions.NoPermissionError):
            redis.Redis.from_url(server.url).xpending(MOVE_STREAM, WORKER_GROUP)
        keda = redis.Redis.from_url(server.url, username=user, password=passwords[user])
        assert keda.xpending(MOVE_STREAM, WORKER_GROUP)["pending"] == 0


def test_a_scaled_down_worker_has_time_to_finish_or_hand_back_its_job() -> None:
    """SIGTERM: the job gets ``finish_timeout_s`` to finish, then is stopped and released
    (up to 5 s), threads are joined, then the gRPC server's 5 s grace: all within the
    pod's termination grace period."""
    stop = inspect.signature(WorkerLoop.stop).parameters["finish_timeout_s"].default
    needed = stop + 5 + 3 * 2 + 5
    pod = find("Deployment", "worker")["spec"]["template"]["spec"]
    assert pod["terminationGracePeriodSeconds"] >= needed


@pytest.mark.parametrize("role", ["registry", "ladder", "referee", "worker", "analyst", "web"])
def test_every_role_serves_metrics_where_the_pod_monitor_looks(role: str) -> None:
    (monitor,) = [r for r in kustomized(MONITORING) if r["kind"] == "PodMonitor"]
    (selector,) = monitor["spec"]["selector"]["matchExpressions"]
    pod = find("Deployment", role)["spec"]["template"]
    assert pod["metadata"]["labels"][selector["key"]] in selector["values"]
    (container,) = pod["spec"]["containers"]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    (endpoint,) = monitor["spec"]["podMetricsEndpoints"]
    listen = find("ConfigMap", "arena-config")["data"]["ARENA_METRICS_LISTEN"]
    assert int(listen.rsplit(":", 1)[1]) == ports[endpoint["port"]]
    assert pod["metadata"]["annotations"]["prometheus.io/port"] == str(ports["metrics"])


def _rule_file(tmp_path: Path) -> Path:
    (rules,) = [r for r in kustomized(MONITORING) if r["kind"] == "PrometheusRule"]
    spec = copy.deepcopy(rules["spec"])
    for group in spec["groups"]:
        for rule in group["rules"]:
            rule.pop("annotations", None)  # checked by `check rules` below, not the tests
    path = tmp_path / "arena-rules.yaml"
    path.write_text(yaml.safe_dump(spec))
    full = tmp_path / "arena-rules-annotated.yaml"
    full.write_text(yaml.safe_dump(rules["spec"]))
    return full


def promtool(*args: str, cwd: Path) -> str:
    done = subprocess.run([str(DEPLOY / "promtool.sh"), *args], cwd=cwd, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, f"promtool {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_promtool_checks_the_rules_and_their_unit_tests_pass(tmp_path: Path) -> None:
    annotated = _rule_file(tmp_path)
    assert "SUCCESS: 8 rules found" in promtool("check", "rules", str(annotated), cwd=tmp_path)
    shutil.copy(MONITORING / "alerts-test.yaml", tmp_path)
    assert "SUCCESS" in promtool("test", "rules", "alerts-test.yaml", cwd=tmp_path)


def test_promtool_fails_a_broken_rule(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "x", "rules": [
        {"alert": "Broken", "expr": "sum(rate(arena_forfeits_total[5m]) by"}]}]}))
    done = subprocess.run([str(DEPLOY / "promtool.sh"), "check", "rules", str(path)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode != 0


def test_a_redis_that_cannot_be_read_costs_its_own_figures_and_no_others(
        redis_client: redis.Redis) -> None:
    """The exporter read both Redis servers' memory last, inside the one try around every
    queue figure: with the cache Redis down, a scrape exported no stream length, lag or
    live-worker count (arena_queue_exporter 0), and the queue alerts went blind."""
    redis_client.xadd(MOVE_STREAM, {"job": "x"})
    down = redis.Redis(host="127.0.0.1", port=free_port(), socket_connect_timeout=1,
                       socket_timeout=1)  # nothing listens there
    families = {f.name: f for f in QueueCollector(redis_client, down, "unread").collect()}
    assert [s.value for s in families["arena_queue_exporter"].samples] == [1.0]
    lengths = {s.labels["stream"]: s.value for s in families["arena_stream_length"].samples}
    assert lengths[MOVE_STREAM] == 1
    assert "arena_workers_alive" in families
    read = {s.labels["redis"]: s.value for s in families["arena_redis_memory_read"].samples}
    assert read == {"durable": 1.0, "cache": 0.0}
    used = [s.labels["redis"] for s in families["arena_redis_memory_used_bytes"].samples]
    assert used == ["durable"]


def _series_names(families: list[Metric]) -> set[str]:
    names = set()
    for family in families:
        suffixes = {"counter": ["_total"], "histogram": ["_bucket", "_count", "_sum"],
                    "gauge": [""]}.get(family.type, [""])
        names.update(family.name + suffix for suffix in suffixes)
    return names


def exported_names(redis_client: redis.Redis, cache_client: redis.Redis) -> set[str]:
    """Every series name Arena's processes can export."""
    families = list(REGISTRY.collect())
    families += list(QueueCollector(redis_client, cache_client, "names").collect())
    return _series_names(families)


# The processes whose endpoints a dashboard reads: an analyst is a worker of the analysis
# pool, and shows the families of the role ``counting_role`` gives it.
PROCESSES = {"registry": "registry", "referee": "referee", "ladder": "ladder",
             "worker": "worker", "analyst": metrics.counting_role("worker", "analysis"),
             "web": "web"}


def exported_by(redis_client: redis.Redis, cache_client: redis.Redis) -> dict[str, set[str]]:
    """The series names each kind of process exports (``metrics.RoleView``); a referee's
    include the queue figures, which it exports while it holds the exporter's lease."""
    queue = list(QueueCollector(redis_client, cache_client, "names").collect())
    return {process: _series_names(list(metrics.RoleView(role).collect())
                                   + (queue if process == "referee" else []))
            for process, role in PROCESSES.items()}


def _exprs() -> list[str]:
    """Every expression of the dashboard's panels and of the alert rules."""
    dashboard = json.loads((MONITORING / "arena-dashboard.json").read_text())
    exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    (rules,) = [r for r in kustomized(MONITORING) if r["kind"] == "PrometheusRule"]
    return exprs + [r["expr"] for g in rules["spec"]["groups"] for r in g["rules"]]


def _metric_names(expr: str) -> set[str]:
    words = set(re.findall(r"[a-zA-Z_:][a-zA-Z0-9_:]*", re.sub(r'"[^"]*"', "", expr)))
    return {w for w in words if w.startswith(("arena_", "grpc_server_", "process_"))}


def test_dashboard_and_rules_name_only_exported_metrics(
        redis_client: redis.Redis, cache_client: redis.Redis) -> None:
    assert metrics.JOBS_ANSWERED  # the module that declares them is loaded
    known = exported_names(redis_client, cache_client)
    used = set().union(*(_metric_names(e) for e in _exprs()))
    assert used - known == set()
    assert used - set().union(*exported_by(redis_client, cache_client).values()) == set()
    assert len(used) >= 20  # the dashboard covers the delivery, not a token panel
    assert {"arena_move_jobs_dead_lettered_total", "arena_cache_hits_total",
            "arena_worker_busy_seconds_total", "arena_redis_roundtrip_seconds_bucket",
            "arena_move_wait_seconds_bucket", "arena_engine_seconds_bucket"} <= used


def test_the_dashboard_and_rules_tell_match_workers_from_analysts(
        redis_client: redis.Redis, cache_client: redis.Redis) -> None:
    """Analysts showed the match workers' families under the same names with nothing to
    tell them apart, so the dashboard's busy workers, jobs and cache panels counted them
    too. Now a family both show (a protocol engine's) carries ``pool``, and an expression
    that reads one says which pool; the match workers' own are not an analyst's."""
    shown = exported_by(redis_client, cache_client)
    every_service = shown["registry"] & shown["ladder"]  # gRPC and process figures
    both = (shown["worker"] & shown["analyst"]) - every_service
    assert "arena_protocol_engine_moves_total" in both
    for name in ("arena_worker_busy_seconds_total", "arena_move_jobs_answered_total",
                 "arena_cache_probes_total", "arena_engine_seconds_bucket"):
        assert name in shown["worker"] and name not in shown["analyst"], name
    assert "arena_analysis_busy_seconds_total" in shown["analyst"]
    for family, roles in metrics.COUNTED_BY.items():
        if {"worker", "analyst"} <= set(roles) and "registry" not in roles:
            metric = next(m for m in vars(metrics).values() if isinstance(m, MetricWrapperBase)
                          and next(iter(m.describe())).name == family)
            assert "pool" in metric._labelnames, family
    for expr in _exprs():
        for name in _metric_names(expr) & both:
            assert re.search(r'pool\s*=~?\s*"', expr), (name, expr)


def test_the_dashboard_counts_the_protocol_engines_move_streams_too() -> None:
    """Protocol engines' moves wait in streams of their own
    (arena:stream:moves:engine:NAME:CHECKSUM), as the alerts know: the dashboard's move
    queue and oldest waiting move read the common stream alone, 0 while those queued."""
    dashboard = json.loads((MONITORING / "arena-dashboard.json").read_text())
    exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    moves = [e for e in exprs if "arena:stream:moves" in e and "moves:dead" not in e]
    assert len(moves) == 3, moves
    assert all('{stream=~"arena:stream:moves(:engine:.+)?"}' in e for e in moves), moves
