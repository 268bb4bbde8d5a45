"""The ``olympus`` command: ``olympus serve``, ``olympus bots`` and ``olympus scenario FILE...``.

The server is imported only when serving, so running scenarios needs nothing but the rules.
"""

from __future__ import annotations

import argparse
import os


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="olympus", description="Storm over Olympus game service")
    commands = top.add_subparsers(dest="command", required=True)
    scenario = commands.add_parser(
        "scenario", help="run YAML rule scenarios (docs/scenarios.md); exit 1 at the first failure"
    )
    scenario.add_argument("files", nargs="+", metavar="FILE", help="YAML files or directories")
    serve = commands.add_parser("serve", help="run the game service")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on")
    serve.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    redis_arguments(serve, "none: an embedded Redis in the data dir")
    serve.add_argument("--data-dir", default="./var", help="where local data lives (./var)")
    archive = serve.add_mutually_exclusive_group()
    archive.add_argument(
        "--database-url",
        default=os.environ.get("DATABASE_URL"),
        help="the PostgreSQL database of the archive of finished games (default $DATABASE_URL;"
        " none: an embedded PostgreSQL in the data dir)",
    )
    archive.add_argument(
        "--no-archive",
        action="store_true",
        help="keep finished games in the live store (no archive)",
    )
    serve.add_argument(
        "--store",
        choices=("redis", "memory"),
        default="redis",
        help="redis (default): durable, shared by every process; memory: kept in this one"
        " process and lost when it stops (tests, trying the service without Redis); it"
        " serves alone (one worker) and plays the computer's seats in a thread",
    )
    serve.add_argument(
        "--workers",
        type=int,
        default=len(os.sched_getaffinity(0)),
        help="server processes on the port (default: the cores this process may run on);"
        " 1: this process serves alone",
    )
    serve.add_argument(
        "--no-bots",
        action="store_true",
        help="do not start the bots worker (olympus bots) that plays the computer's seats",
    )
    serve.add_argument(
        "--reuse-port",
        action="store_true",
        help="listen with SO_REUSEPORT (set by --workers for its processes)",
    )
    bots = commands.add_parser(
        "bots", help="play the computer's seats of a service over its websocket (docs/bots.md)"
    )
    bots.add_argument("--server", required=True, help="the service's websocket, ws://HOST:PORT/ws")
    redis_arguments(bots, "one of the two is required")
    bots.add_argument("--shard", default="0/1", help="I/N: play the seats of shard I of N")
    return top


def redis_arguments(command: argparse.ArgumentParser, without: str) -> None:
    """``--redis-url`` or ``--redis-cluster``: the same two forms wherever a command meets the
    service's Redis, so that the bots worker runs wherever the service does."""
    redis = command.add_mutually_exclusive_group()
    redis.add_argument(
        "--redis-url",
        default=os.environ.get("REDIS_URL"),
        help=f"Redis to use (default $REDIS_URL; {without});"
        " a Redis Cluster as redis+cluster://HOST:PORT[,HOST:PORT...]",
    )
    redis.add_argument(
        "--redis-cluster",
        metavar="HOST:PORT[,HOST:PORT...]",
        default=None,
        help="a Redis Cluster, by some of its nodes (the same as --redis-url redis+cluster://...)",
    )


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.command == "serve":
        # lazily: the server's dependencies are heavier
        from olympus.bots_worker import bots_thread
        from olympus.server import cli_serve

        return cli_serve(args, bots_thread) or 0
    if args.command == "bots":
        from olympus.bots_worker import main as bots_main

        return bots_main(args)
    from olympus import scenario

    return scenario.main(args.files)


if __name__ == "__main__":
    raise SystemExit(main())
