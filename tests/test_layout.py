"""The house's rules that its imports show: storage is spoken only under ``store/``.

The service (``server/``) and the computer (``bot/``) know storage through the store's ports
(store/ports.py); so no module outside ``store/`` imports redis-py or a PostgreSQL driver, and
none reaches into a module of a backend: they import ``olympus.store`` itself.
"""

from __future__ import annotations

import ast
from pathlib import Path

import olympus

PACKAGE = Path(olympus.__file__).resolve().parent


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports, at module level or inside a function, made absolute."""
    package = ".".join(("olympus", *path.relative_to(PACKAGE).parent.parts))
    return _imported(path.read_text(), package)


def _imported(source: str, package: str) -> set[str]:
    """Every module ``source``, a module of ``package``, imports (and each name it imports
    from one, as ``module.name``: it may be a module)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            found.add(module)
            found |= {f"{module}.{alias.name}" for alias in node.names}
    return found


def _outside_store() -> list[Path]:
    return [p for p in PACKAGE.rglob("*.py") if p.relative_to(PACKAGE).parts[0] != "store"]


DRIVERS = ("redis", "asyncpg", "psycopg", "psycopg2")


def test_no_module_outside_the_store_imports_redis() -> None:
    speaking = {
        str(path.relative_to(PACKAGE)): sorted(
            m for m in _imports(path) if m.split(".")[0] in DRIVERS
        )
        for path in _outside_store()
    }
    assert {p: m for p, m in speaking.items() if m} == {}


def test_the_service_and_the_computer_know_the_store_by_its_package() -> None:
    """``server/`` and ``bot/`` import ``olympus.store`` (its ports, values and errors, and
    ``open_backend``), never one of its modules: a backend's insides can change unseen."""
    reaching = {
        str(path.relative_to(PACKAGE)): sorted(
            m
            for m in _imports(path)
            if m.startswith("olympus.store.") and m.removeprefix("olympus.store.") not in _names()
        )
        for path in _outside_store()
        if path.relative_to(PACKAGE).parts[0] in ("server", "bot")
    }
    assert {p: m for p, m in reaching.items() if m} == {}


def _names() -> set[str]:
    import olympus.store

    return set(olympus.store.__all__)


def test_the_checks_see_an_import_of_redis() -> None:
    """The walk finds imports at module level and inside functions, absolute and relative."""
    source = "import redis\ndef f():\n    from redis.asyncio import Redis\nfrom ..store import x\n"
    found = _imported(source, "olympus.server")
    assert {"redis", "redis.asyncio", "olympus.store", "olympus.store.x"} <= found
