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
    "client",
)

# What uvicorn and websockets log for every websocket they accept (on "uvicorn.error", at INFO):
# the service's own line for the connection (``hello``, or why it was refused) says the same
# with the client's address, the connection's id, the room and the seat. (A tuple: a record's
# ``msg`` may be any object, a dict say, which a set could not look for.)
_PER_CONNECTION = ('%s - "WebSocket %s" [accepted]', "connection open")
# What uvicorn logs at WARNING for a client's malformed request: the client's doing, once per
# connection (it is answered 400 and closed), so INFO, where no alert looks.
_CLIENTS_FAULT = ("Invalid HTTP request received.", "Unsupported upgrade request.")

log = logging.getLogger("olympus.server")


# What a field's value is written as when it is not one of these: its str.
_SCALARS = (int, float, bool)
_ENCODER = json.JSONEncoder(ensure_ascii=False)  # made once: ``json.dumps`` with an option
# makes an encoder for each call


class JsonFormatter(logging.Formatter):
    """A record as one JSON object. A line is written for every connection, so its cost
    counts: the timestamp's seconds are formatted once per second, not once per line."""

    def __init__(self) -> None:
        super().__init__()
        self._stamp = (-1, "")  # (a second, formatted): one object, read and replaced whole

    def format(self, record: logging.LogRecord) -> str:
        second, stamp = self._stamp
        if int(record.created) != second:
            second = int(record.created)
            stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
            self._stamp = (second, stamp)
        data: dict[str, Any] = {
            "ts": f"{stamp}.{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        fields = record.__dict__
        for name in FIELDS:
            value = fields.get(name)
            if value is not None:
                data[name] = value if isinstance(value, _SCALARS) else str(value)
        if record.exc_info:
            data["exc"] = self.formatException(record.exc_info)
        return _ENCODER.encode(data)


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
    uvicorn = logging.getLogger("uvicorn.error")
    uvicorn.filters[:] = [_uvicorn_lines]
    # What a record would carry and no line shows (the caller's file and line, the thread,
    # the process): not looked up (the logging HOWTO's "Optimization"), a third of a line's
    # cost, and a line is written for every connection. (So ``stack_info=True`` shows nothing:
    # nothing here asks for it.)
    logging._srcfile = None
    logging.logThreads = False
    logging.logProcesses = False
    logging.logMultiprocessing = False


def address(client: tuple[str, int] | None) -> str | None:
    """A peer's ``host:port``, for the ``client`` field (None when the server was not told)."""
    return None if client is None else f"{client[0]}:{client[1]}"


def _uvicorn_lines(record: logging.LogRecord) -> bool:
    """uvicorn's lines, less those it writes for every websocket (three lines said one thing
    thrice, and writing them cost ~1 % of a busy process's CPU: docs/performance.md), and with
    a client's malformed request at INFO."""
    if record.msg in _CLIENTS_FAULT:
        record.levelno, record.levelname = logging.INFO, "INFO"
    return record.msg not in _PER_CONNECTION
