"""The Kubernetes manifests: the kustomization rendered and every object validated against the
Kubernetes schemas, offline (``kubernetes-validate`` ships them), and the objects agree with each
other: what the service is told to reach exists, every selector selects something."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import kubernetes_validate
import pytest
import yaml

from olympus.cli import parser

K8S = Path(__file__).resolve().parents[1] / "k8s"
VERSION = "1.30"


def render() -> list[dict[str, Any]]:
    """The objects of ``k8s/kustomization.yaml``. It lists resources and nothing else: a
    kustomize feature used there later must be rendered here too (this fails until it is)."""
    kustomization = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    assert set(kustomization) <= {"apiVersion", "kind", "resources"}, kustomization
    objects = []
    for resource in kustomization["resources"]:
        objects += [d for d in yaml.safe_load_all((K8S / resource).read_text()) if d]
    return objects


def by_kind(objects: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o for o in objects if o["kind"] == kind}


def test_every_object_is_valid_kubernetes() -> None:
    objects = render()
    assert len(objects) >= 9
    for obj in objects:
        kubernetes_validate.validate(obj, VERSION, strict=True)


def test_the_validator_refuses_a_broken_object() -> None:
    deployment = by_kind(render(), "Deployment")["olympus"]
    broken = {**deployment, "spec": {**deployment["spec"], "replicas": "three"}}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, VERSION, strict=True)


def test_the_objects_agree() -> None:
    objects = render()
    deployment = by_kind(objects, "Deployment")["olympus"]
    redis = by_kind(objects, "StatefulSet")["redis-cluster"]
    pods = {
        f"{redis['metadata']['name']}-{i}.{redis['spec']['serviceName']}"
        for i in range(redis["spec"]["replicas"])
    }
    assert redis["spec"]["replicas"] == 6  # 3 masters + 3 replicas
    assert redis["spec"]["serviceName"] in by_kind(objects, "Service")
    # The service is started on the cluster, through nodes that exist.
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    args = container["args"]
    nodes = args[args.index("--redis-cluster") + 1].split(",")
    assert {n.rsplit(":", 1)[0] for n in nodes} <= pods
    assert container["readinessProbe"]["httpGet"]["path"] == "/healthz"  # follows Redis
    # The cluster-creating Job names every node.
    job = by_kind(objects, "Job")["redis-cluster-create"]
    script = job["spec"]["template"]["spec"]["containers"][0]["args"][0]
    assert "--cluster-replicas 1" in script and "0 1 2 3 4 5" in script
    # Every selector selects pods of a workload; the autoscaler scales the Deployment.
    labels = [
        w["spec"]["template"]["metadata"]["labels"]
        for w in (
            *by_kind(objects, "Deployment").values(),
            *by_kind(objects, "StatefulSet").values(),
        )
    ]
    for kind in ("Service", "PodDisruptionBudget"):
        for obj in by_kind(objects, kind).values():
            selector = obj["spec"]["selector"]
            wanted = selector.get("matchLabels", selector)
            assert any(wanted.items() <= found.items() for found in labels), obj["metadata"]
    hpa = by_kind(objects, "HorizontalPodAutoscaler")["olympus"]
    assert hpa["spec"]["scaleTargetRef"]["name"] == "olympus"
    assert "replicas" not in deployment["spec"]  # the autoscaler owns the count


def test_the_computer_is_played_once() -> None:
    """Every computer seat has one player: the service's pods start no bots worker of their own
    (each would play every seat), and the bots' pods split the seats by their index, one shard
    of as many as there are pods, on the cluster the service uses."""
    objects = render()
    [serving] = by_kind(objects, "Deployment")["olympus"]["spec"]["template"]["spec"]["containers"]
    serve = parser().parse_args(serving["args"][1:])
    assert serve.command == "serve" and serve.no_bots
    bots = by_kind(objects, "StatefulSet")["olympus-bots"]
    [playing] = bots["spec"]["template"]["spec"]["containers"]
    args = parser().parse_args(playing["args"][1:])
    assert args.command == "bots" and args.redis_cluster == serve.redis_cluster
    index, shards = args.shard.split("/")
    assert index == "$(POD_INDEX)" and int(shards) == bots["spec"]["replicas"]
    [env] = [e for e in playing["env"] if e["name"] == "POD_INDEX"]
    assert "apps.kubernetes.io/pod-index" in env["valueFrom"]["fieldRef"]["fieldPath"]
    service = by_kind(objects, "Service")["olympus"]
    assert args.server == f"ws://{service['metadata']['name']}/ws"
    assert service["spec"]["ports"][0]["port"] == 80


def test_the_archive_is_the_postgresql_of_the_manifests() -> None:
    """The service's DATABASE_URL comes from the secret, whose example names the PostgreSQL
    Service of postgres.yaml; its server keeps its data on a claimed volume."""
    objects = render()
    [serving] = by_kind(objects, "Deployment")["olympus"]["spec"]["template"]["spec"]["containers"]
    [env] = [e for e in serving["env"] if e["name"] == "DATABASE_URL"]
    reference = env["valueFrom"]["secretKeyRef"]
    secret = yaml.safe_load((K8S / "secret.yaml").read_text())
    assert reference["name"] == secret["metadata"]["name"]
    url = urlsplit(secret["stringData"][reference["key"]])
    service = by_kind(objects, "Service")[url.hostname or ""]
    postgres = by_kind(objects, "StatefulSet")["postgres"]
    assert service["spec"]["selector"] == postgres["spec"]["template"]["metadata"]["labels"]
    assert url.port == service["spec"]["ports"][0]["port"] == 5432
    [container] = postgres["spec"]["template"]["spec"]["containers"]
    [claim] = postgres["spec"]["volumeClaimTemplates"]
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    assert mounts[claim["metadata"]["name"]] == "/var/lib/postgresql"
    values = {e["name"]: e.get("value") for e in container["env"]}
    assert url.username == values["POSTGRES_USER"] and url.path == "/" + values["POSTGRES_DB"]
    [password] = [e for e in container["env"] if e["name"] == "POSTGRES_PASSWORD"]
    assert password["valueFrom"]["secretKeyRef"]["name"] == reference["name"]
