"""Structured logs: one JSON object per line, with the room and seat as fields of their own.

Log calls pass context through ``extra=`` (``log.info("...", extra={"room": r, "seat": s})``),
so a log pipeline can filter one room's story across every process without parsing text.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any

# Context fields copied from ``extra`` into the JSON object when present.
FIELDS = (
    "room",
    "seat",
    "conn",
    "code",
    "command_id",
    "version",
    "epoch",
    "attempt",
    "side",
    "kind",
    "due",
    "error",
    "resumed",
)

log = logging.getLogger("olympus.server")


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        data: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for name in FIELDS:
            value = record.__dict__.get(name)
            if value is not None:
                data[name] = value if isinstance(value, int | float | bool) else str(value)
        if record.exc_info:
            data["exc"] = self.formatException(record.exc_info)
        return json.dumps(data, ensure_ascii=False)


def configure(level: str = "INFO") -> None:
    """Send every logger (ours, uvicorn's) to stderr as JSON lines."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logging.getLogger(name).handlers[:] = []
        logging.getLogger(name).propagate = True
