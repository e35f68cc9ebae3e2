"""deploy/k8s: every manifest validates against the Kubernetes OpenAPI schemas (strict, the
oldest and newest versions kubernetes-validate bundles that we support), and the pieces fit:
selectors match pods, probes use gRPC health, the token comes from the Secret, the durable
Redis keeps a volume, the HPA scales the workers."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from tests.deploy.conftest import DEPLOY

K8S = DEPLOY / "k8s"
VERSIONS = ("1.27.0", "1.37.0")  # gRPC probes are GA from 1.27
ROLES = ("registry", "ladder", "referee", "worker")


def load(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def kustomization() -> dict[str, Any]:
    docs = load(K8S / "kustomization.yaml")
    assert len(docs) == 1
    return docs[0]


def resources() -> list[dict[str, Any]]:
    return [doc for name in kustomization()["resources"] for doc in load(K8S / name)]


def find(kind: str, name: str) -> dict[str, Any]:
    matches = [r for r in resources() if r["kind"] == kind and r["metadata"]["name"] == name]
    assert len(matches) == 1, f"expected one {kind}/{name}, found {len(matches)}"
    return matches[0]


def test_kustomization_lists_every_manifest_once() -> None:
    listed = kustomization()["resources"]
    on_disk = sorted(p.name for p in K8S.glob("*.yaml") if p.name != "kustomization.yaml")
    assert sorted(listed) == on_disk
    assert len(set(listed)) == len(listed)


@pytest.mark.parametrize("version", VERSIONS)
def test_every_resource_validates_strictly(version: str) -> None:
    for resource in resources():
        kind = f"{resource['kind']}/{resource['metadata']['name']}"
        try:
            kubernetes_validate.validate(resource, version, strict=True)
        except kubernetes_validate.ValidationError as exc:
            pytest.fail(f"{kind} is invalid for Kubernetes {version}: {exc}")
        except kubernetes_validate.SchemaNotFoundError:
            pytest.fail(f"{kind}: no schema for {resource['apiVersion']} in Kubernetes {version}")


def test_the_validator_rejects_a_broken_manifest() -> None:
    """The schema check is not vacuous: a misspelt probe field and a string replica count fail."""
    deployment = copy.deepcopy(find("Deployment", "worker"))
    probe = deployment["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]
    probe["grpc"]["prot"] = probe["grpc"].pop("port")
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, VERSIONS[0], strict=True)
    deployment = copy.deepcopy(find("Deployment", "worker"))
    deployment["spec"]["replicas"] = "two"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, VERSIONS[0], strict=True)


@pytest.mark.parametrize("role", ROLES)
def test_each_role_has_a_deployment_a_service_and_grpc_health_probes(role: str) -> None:
    deployment, service = find("Deployment", role), find("Service", role)
    pod = deployment["spec"]["template"]
    labels = pod["metadata"]["labels"]
    assert deployment["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert service["spec"]["selector"].items() <= labels.items()
    (container,) = pod["spec"]["containers"]
    assert container["args"] == [role]
    assert service["spec"]["ports"][0]["port"] == 50051
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert container[probe]["grpc"]["port"] == 50051, f"{role} {probe}"
    assert pod["spec"]["securityContext"]["runAsNonRoot"] is True
    assert pod["spec"]["securityContext"]["runAsUser"] == 10001
    token = next(e for e in container["env"] if e["name"] == "ARENA_ADMIN_TOKEN")
    ref = token["valueFrom"]["secretKeyRef"]
    secret = find("Secret", ref["name"])
    assert ref["key"] in secret.get("stringData", secret.get("data", {}))
    config = container["envFrom"][0]["configMapRef"]["name"]
    assert {"ARENA_REDIS_URL", "ARENA_CACHE_URL"} <= set(find("ConfigMap", config)["data"])


def test_referees_are_replicated() -> None:
    assert find("Deployment", "referee")["spec"]["replicas"] >= 2


def test_durable_redis_is_a_statefulset_with_aof_on_a_volume() -> None:
    redis = find("StatefulSet", "redis-durable")
    service = find("Service", redis["spec"]["serviceName"])
    assert service["spec"]["clusterIP"] == "None"
    (container,) = redis["spec"]["template"]["spec"]["containers"]
    args = container["args"]
    assert args[args.index("--appendonly") + 1] == "yes"
    (claim,) = redis["spec"]["volumeClaimTemplates"]
    assert container["volumeMounts"][0] == {"name": claim["metadata"]["name"],
                                            "mountPath": args[args.index("--dir") + 1]}
    config = find("ConfigMap", "arena-config")["data"]
    assert config["ARENA_REDIS_URL"].startswith(f"redis://{service['metadata']['name']}:")


def test_cache_redis_is_bounded_lru_without_persistence() -> None:
    (container,) = find("Deployment", "redis-cache")["spec"]["template"]["spec"]["containers"]
    args = container["args"]
    assert args[args.index("--maxmemory-policy") + 1] == "allkeys-lru"
    assert args[args.index("--appendonly") + 1] == "no"
    assert "--maxmemory" in args
    config = find("ConfigMap", "arena-config")["data"]
    assert config["ARENA_CACHE_URL"].startswith("redis://redis-cache:")


def test_workers_scale_with_a_horizontal_pod_autoscaler() -> None:
    hpa = find("HorizontalPodAutoscaler", "worker")
    target = hpa["spec"]["scaleTargetRef"]
    assert (target["kind"], target["name"]) == ("Deployment", "worker")
    assert 1 <= hpa["spec"]["minReplicas"] < hpa["spec"]["maxReplicas"]
    (container,) = find("Deployment", "worker")["spec"]["template"]["spec"]["containers"]
    assert "cpu" in container["resources"]["requests"]  # utilisation needs a request


def test_the_web_gateway_has_http_probes_and_the_services_addresses() -> None:
    deployment, service = find("Deployment", "web"), find("Service", "web")
    pod = deployment["spec"]["template"]
    assert service["spec"]["selector"].items() <= pod["metadata"]["labels"].items()
    (container,) = pod["spec"]["containers"]
    assert container["args"] == ["web"]
    (port,) = container["ports"]
    assert service["spec"]["ports"][0]["targetPort"] == port["name"] == "http"
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"] == {"path": "/healthz", "port": "http"}, probe
    env = {e["name"]: e for e in container["env"]}
    assert env["ARENA_LISTEN"]["value"].endswith(f":{port['containerPort']}")
    for role in ("referee", "ladder"):
        address = env[f"ARENA_{role.upper()}"]["value"]
        assert address == f"{find('Service', role)['metadata']['name']}:50051"
    config = find("ConfigMap", container["envFrom"][0]["configMapRef"]["name"])["data"]
    assert config["ARENA_REGISTRY"] == "registry:50051"
    assert env["ARENA_ADMIN_TOKEN"]["valueFrom"]["secretKeyRef"]["name"] == "arena-admin-token"
    assert float(env["ARENA_WEB_DRAIN_S"]["value"]) < pod["spec"]["terminationGracePeriodSeconds"]
    assert pod["spec"]["securityContext"]["runAsNonRoot"] is True

