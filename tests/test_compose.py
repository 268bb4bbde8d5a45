"""The docker-compose cluster variant (``deploy/docker-compose.cluster.yml``), parsed and checked
for agreement between its parts, as tests/test_k8s.py checks the manifests (docker is neither
needed nor run): six Redis nodes, each announcing its own name and keeping its own data, a job
that creates the cluster from every node, and the service, started by ``olympus serve``'s own
parser, on that cluster through every node."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import urlsplit

import yaml

from olympus.cli import parser
from olympus.store.redis_clients import chosen_url, cluster_nodes

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"


def mounts(service: dict) -> dict[str, str]:
    """Where each of a service's volumes is mounted: target -> source."""
    return {v.split(":")[1]: v.split(":")[0] for v in service["volumes"]}


def test_the_cluster_variant_agrees_with_itself() -> None:
    compose = yaml.safe_load((DEPLOY / "docker-compose.cluster.yml").read_text())
    services = compose["services"]
    job = services.pop("redis-cluster-create")
    olympus = services.pop("olympus")
    postgres = services.pop("postgres")
    nodes = [f"redis-{i}" for i in range(6)]  # 3 masters + 3 replicas
    assert sorted(services) == nodes

    conf = [line.split() for line in (DEPLOY / "redis-cluster.conf").read_text().splitlines()]
    assert ["cluster-enabled", "yes"] in conf
    [include] = [words[1] for words in conf if words and words[0] == "include"]
    data = []
    for name in nodes:
        node = services[name]
        assert node["image"].startswith("redis:7")  # sharded pub/sub (SPUBLISH) is Redis 7
        command, mounted = node["command"], mounts(node)
        assert command[0] == "redis-server" and mounted[command[1]] == "./redis-cluster.conf"
        assert mounted[include] == "./redis.conf"  # the AOF, fsynced before every reply
        assert command[command.index("--cluster-announce-hostname") + 1] == name
        data.append(mounted["/data"])
    assert sorted([*set(data), "postgres-data"]) == sorted(compose["volumes"])
    assert len(set(data)) == 6

    # The job waits for every node, then creates the cluster with a replica per master.
    assert sorted(job["depends_on"]) == nodes
    [script] = job["command"]
    assert "for i in 0 1 2 3 4 5;" in script and "--cluster-replicas 1" in script
    assert "$" not in script.replace("$$", ""), "compose would interpolate a lone $"

    # The service starts once the cluster exists, on it through every node, with its bots.
    assert olympus["depends_on"]["redis-cluster-create"] == {
        "condition": "service_completed_successfully"
    }
    archived_by(olympus, "postgres", postgres)
    args = parser().parse_args(olympus["command"][1:])
    assert args.command == "serve" and not args.no_bots
    url = chosen_url(args.redis_url, args.redis_cluster)
    assert url is not None and cluster_nodes(url) == [(name, 6379) for name in nodes]


def test_the_single_redis_variant_plays_the_computer_once() -> None:
    """Two service processes on one Redis, and one bots worker between them: a worker beside
    each would play every computer seat twice over."""
    compose = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
    dockerfile = (DEPLOY / "Dockerfile").read_text().splitlines()
    [cmd] = [line for line in dockerfile if line.startswith("CMD")]
    image_command = json.loads(cmd.removeprefix("CMD"))
    serving = {n: s for n, s in compose["services"].items() if n.startswith("olympus")}
    assert len(serving) == 2
    commands = [parser().parse_args(s.get("command", image_command)[1:]) for s in serving.values()]
    assert all(args.command == "serve" for args in commands)
    assert sorted(args.no_bots for args in commands) == [False, True]
    for service in serving.values():
        archived_by(service, "postgres", compose["services"]["postgres"])


def interpolated(value: str) -> str:
    """``value`` with each ``${NAME}`` or ``${NAME:?sentence}`` as compose would fill it in
    from a variable NAME whose value is ``NAME``."""
    return re.sub(r"\$\{(\w+)(:\?[^}]*)?\}", lambda m: m[1], value)


def archived_by(service: dict, name: str, postgres: dict) -> None:
    """The service's archive is the compose file's PostgreSQL (``DATABASE_URL``: its host, its
    user, database and password), which keeps its data in a volume; it starts after it."""
    url = urlsplit(interpolated(service["environment"]["DATABASE_URL"]))
    env = {k: interpolated(v) for k, v in postgres["environment"].items()}
    assert postgres["image"].startswith("postgres:")
    assert (url.scheme, url.hostname, url.port) == ("postgresql", name, 5432)
    assert url.username == env["POSTGRES_USER"] and url.path == "/" + env["POSTGRES_DB"]
    assert url.password == env["POSTGRES_PASSWORD"]  # the same variable
    assert any(v.endswith(":/var/lib/postgresql") for v in postgres["volumes"])
    assert name in service["depends_on"]
