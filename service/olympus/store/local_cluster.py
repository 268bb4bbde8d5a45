"""A real Redis Cluster on this machine, for the tests and the load bench: 3 masters + 3
replicas of Debian's ``redis-server`` (7.x) on free loopback ports, each with its AOF
(``appendfsync always``) in a directory of its own.

Not for production (see k8s/ for that). ``make test`` installs ``redis-server`` when it is
missing, as it installs Chromium. The nodes are this process's children and die with it
(``PR_SET_PDEATHSIG``), so an interrupted run leaves none behind.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from redis.crc import key_slot

from olympus.lifetime import die_with

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"
REDIS_CLI = shutil.which("redis-cli") or "/usr/bin/redis-cli"
BUS_OFFSET = 10_000  # a cluster node also listens on its port + 10000 (the cluster bus)
PORT_ATTEMPTS = 3


def available() -> bool:
    return os.access(REDIS_SERVER, os.X_OK) and os.access(REDIS_CLI, os.X_OK)


def _free_ports(count: int) -> list[int]:
    """Ports p with p and p + 10000 free on loopback (asked of the kernel, not guessed), none
    of them the port or the bus port of another node of the set."""
    ports: list[int] = []
    taken: set[int] = set()
    while len(ports) < count:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
        if port + BUS_OFFSET > 65535 or {port, port + BUS_OFFSET} & taken:
            continue
        with socket.socket() as bus:
            try:
                bus.bind(("127.0.0.1", port + BUS_OFFSET))
            except OSError:
                continue
        ports.append(port)
        taken |= {port, port + BUS_OFFSET}
    return ports


@dataclass
class Node:
    port: int
    directory: Path
    proc: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        conf = self.directory / "redis.conf"
        conf.write_text(
            "\n".join(
                [
                    "bind 127.0.0.1",
                    f"port {self.port}",
                    "protected-mode no",
                    "cluster-enabled yes",
                    "cluster-config-file nodes.conf",
                    "cluster-node-timeout 1000",
                    # the other masters serve their slots while one shard fails over
                    "cluster-require-full-coverage no",
                    "cluster-replica-validity-factor 0",
                    "repl-diskless-sync-delay 0",  # replicas in sync at once, not after 5 s
                    f"dir {self.directory}",
                    "appendonly yes",
                    "appendfsync always",
                    'save ""',
                    "daemonize no",
                    f"logfile {self.directory / 'redis.log'}",
                ]
            )
            + "\n"
        )
        self.proc = subprocess.Popen(
            [REDIS_SERVER, str(conf)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=die_with(os.getpid()),
        )

    def cli(self, *args: str) -> str:
        result = subprocess.run(
            [REDIS_CLI, "-p", str(self.port), *args], capture_output=True, text=True, timeout=30
        )
        return result.stdout

    def kill(self) -> None:
        """``kill -9``: the node is gone at once."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()


@dataclass
class LocalCluster:
    directory: Path
    masters: int = 3
    replicas: int = 1
    nodes: list[Node] = field(default_factory=list)

    def start(self, timeout: float = 60.0) -> LocalCluster:
        deadline = time.monotonic() + timeout
        for _ in range(PORT_ATTEMPTS):
            if self._start_nodes(deadline):
                break
            # A port found free was taken before its node could bind it (another process on
            # the box): every node goes, and the set starts again on other ports.
            for node in self.nodes:
                node.stop()
        else:
            raise RuntimeError(f"no free ports for the cluster in {PORT_ATTEMPTS} attempts")
        subprocess.run(
            [
                REDIS_CLI,
                *("--cluster", "create", *(n.address for n in self.nodes)),
                *("--cluster-replicas", str(self.replicas), "--cluster-yes"),
            ],
            capture_output=True,
            check=True,
            timeout=60,
        )
        self.wait_ok(deadline)
        self.wait_synced(deadline)
        return self

    def _start_nodes(self, deadline: float) -> bool:
        """Every node started and answering; False if one exited first (its port taken)."""
        ports = _free_ports(self.masters * (1 + self.replicas))
        self.nodes = [Node(port, self.directory / str(port)) for port in ports]
        for node in self.nodes:
            node.start()
        for node in self.nodes:
            while node.cli("ping").strip() != "PONG":
                if node.proc is not None and node.proc.poll() is not None:
                    return False
                if time.monotonic() > deadline:
                    raise TimeoutError(f"redis-server on {node.port} did not start")
                time.sleep(0.05)
        return True

    def wait_synced(self, deadline: float) -> None:
        """Until every replica's link to its master is up (its initial sync done)."""
        while True:
            infos = [n.cli("info", "replication") for n in self.live]
            replicas = [i for i in infos if "role:slave" in i]
            if len(replicas) == self.masters * self.replicas and all(
                "master_link_status:up" in i for i in replicas
            ):
                return
            if time.monotonic() > deadline:
                raise TimeoutError("the replicas did not sync")
            time.sleep(0.05)

    def wait_ok(self, deadline: float) -> None:
        """Until every live node says the cluster is ok (every slot served)."""
        while True:
            states = [n.cli("cluster", "info") for n in self.live]
            if all("cluster_state:ok" in s for s in states):
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"the cluster is not ok: {states}")
            time.sleep(0.1)

    @property
    def live(self) -> list[Node]:
        return [n for n in self.nodes if n.proc is not None and n.proc.poll() is None]

    @property
    def live_masters(self) -> list[Node]:
        return [n for n in self.live if n.cli("role").startswith("master")]

    @property
    def startup(self) -> str:
        """The nodes as ``olympus serve --redis-cluster`` takes them."""
        return ",".join(n.address for n in self.nodes)

    def room_in_an_empty_slot(self, keys: Callable[[str], str]) -> str:
        """A room id whose slot holds no key yet (``keys(room)``: one of the room's keys), so
        that moving the slot moves this room's keys and no other test's."""
        while True:
            room = f"moving-{uuid.uuid4().hex[:8]}"
            slot = key_slot(keys(room).encode())
            count = self.master_of_slot(slot).cli("cluster", "countkeysinslot", str(slot))
            if count.strip() == "0":
                return room

    def master_of(self, key: str) -> Node:
        """The live master that serves ``key``'s slot now."""
        return self.master_of_slot(key_slot(key.encode()))

    def master_of_slot(self, slot: int) -> Node:
        """The live master that serves ``slot`` now (as it says itself)."""
        for node in self.live:
            for row in node.cli("cluster", "nodes").splitlines():
                fields = row.split()
                if "myself" in fields[2] and "master" in fields[2] and _owns(fields, slot):
                    return node
        raise LookupError(f"no live master serves slot {slot}")

    def wait_served(self, key: str, timeout: float = 60.0) -> Node:
        """Until a live master serves ``key``'s slot (after a failover: the promoted replica)."""
        deadline = time.monotonic() + timeout
        while True:
            with contextlib.suppress(LookupError):
                master = self.master_of(key)
                self.wait_ok(deadline)
                return master
            if time.monotonic() > deadline:
                raise TimeoutError(f"no live master serves {key!r}")
            time.sleep(0.1)

    def move_slot(self, slot: int, to: Node) -> None:
        """Give ``slot``, which holds no keys, to the master ``to``: ``migrate_slot`` with
        nothing to migrate."""
        moved = self.migrate_slot(slot, to)
        assert moved == 0, f"slot {slot} held {moved} keys"

    def migrate_slot(
        self, slot: int, to: Node, between: Callable[[str], None] | None = None
    ) -> int:
        """Move ``slot`` to the master ``to`` with its keys, as ``redis-cli --cluster reshard``
        does, and return how many keys it moved: ``to`` is set ``IMPORTING`` and the slot's
        master ``MIGRATING``, each key of the slot is ``MIGRATE``d from one to the other, then
        ``CLUSTER SETSLOT … NODE`` on ``to`` (which, importing, bumps its config epoch, so that
        every node, replicas included, takes the new owner from its gossip), on the old master
        (which then answers ``MOVED``), and on the other masters. Meanwhile the old master
        serves a command whose keys it still has all of, sends one whose keys it has none of to
        ``to`` (``ASK``), and refuses one whose keys are split between the two (``TRYAGAIN``);
        ``to`` serves a command sent there with ``ASKING`` if it has all its keys, and refuses
        it with ``TRYAGAIN`` otherwise.

        One key at a time, and ``between(key)`` (in this thread) after each, so that a test can
        act while a live room's keys are split between the two masters: the states of a real
        resharding, which moving an empty slot never goes through."""
        source = self.master_of_slot(slot)
        if source is to:
            return 0
        target = to.cli("cluster", "myid").strip()
        _ok(to, "cluster", "setslot", str(slot), "importing", source.cli("cluster", "myid").strip())
        _ok(source, "cluster", "setslot", str(slot), "migrating", target)
        moved = 0
        while keys := source.cli("cluster", "getkeysinslot", str(slot), "10").split():
            for key in keys:  # (our keys have no blanks; redis-cli prints a blank line for none)
                reply = source.cli("migrate", "127.0.0.1", str(to.port), key, "0", "10000").strip()
                if reply not in ("OK", "NOKEY"):  # NOKEY: deleted since it was listed
                    raise RuntimeError(f"MIGRATE {key} to {to.address}: {reply}")
                moved += 1
                if between is not None:
                    between(key)
        for node in [to, source, *(n for n in self.live_masters if n not in (to, source))]:
            _ok(node, "cluster", "setslot", str(slot), "node", target)  # replicas: by gossip
        return moved

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()
        with contextlib.suppress(OSError):
            shutil.rmtree(self.directory)


def _owns(fields: list[str], slot: int) -> bool:
    """Whether a ``CLUSTER NODES`` row (split) lists ``slot`` among its ranges."""
    for part in fields[8:]:
        if part.startswith("["):
            continue
        low, _, high = part.partition("-")
        if int(low) <= slot <= int(high or low):
            return True
    return False


def _ok(node: Node, *args: str) -> None:
    """``redis-cli`` on ``node``, which must answer ``OK``."""
    reply = node.cli(*args).strip()
    if reply != "OK":
        raise RuntimeError(f"{' '.join(args)} at {node.address}: {reply or 'no reply'}")
