"""A tiny Prometheus registry (text exposition format 0.0.4), so /metrics needs no dependency.

Counters and histograms carry labels; gauges are read from a callback at scrape time, so they
can never drift from the thing they count. Everything runs on one event loop: no locks.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable
from typing import TypeVar

LabelValues = tuple[str, ...]
Read = Callable[[], dict[LabelValues, float]]  # a gauge's values, read at scrape time
M = TypeVar("M", bound="Metric")

DEFAULT_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(names: Iterable[str], values: Iterable[str], extra: str = "") -> str:
    parts = [f'{n}="{_escape(v)}"' for n, v in zip(names, values, strict=True)]
    if extra:
        parts.append(extra)
    return "{" + ",".join(parts) + "}" if parts else ""


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


class Metric:
    kind = ""

    def __init__(self, name: str, help: str, labels: tuple[str, ...] = ()) -> None:
        self.name = name
        self.help = help
        self.label_names = labels

    def samples(self) -> list[str]:
        raise NotImplementedError

    def render(self) -> str:
        head = f"# HELP {self.name} {self.help}\n# TYPE {self.name} {self.kind}\n"
        return head + "".join(line + "\n" for line in self.samples())


class Counter(Metric):
    kind = "counter"

    def __init__(self, name: str, help: str, labels: tuple[str, ...] = ()) -> None:
        super().__init__(name, help, labels)
        self.values: dict[LabelValues, float] = {}

    def inc(self, *labels: str, amount: float = 1.0) -> None:
        self.values[labels] = self.values.get(labels, 0.0) + amount

    def get(self, *labels: str) -> float:
        return self.values.get(labels, 0.0)

    def samples(self) -> list[str]:
        return [
            f"{self.name}{_labels(self.label_names, k)} {_number(v)}"
            for k, v in sorted(self.values.items())
        ]


class Gauge(Metric):
    kind = "gauge"

    def __init__(self, name: str, help: str, read: Read, labels: tuple[str, ...] = ()) -> None:
        super().__init__(name, help, labels)
        self.read = read

    def samples(self) -> list[str]:
        return [
            f"{self.name}{_labels(self.label_names, k)} {_number(v)}"
            for k, v in sorted(self.read().items())
        ]


class ReadCounter(Gauge):
    """A counter kept elsewhere (a module's tally), read at scrape time."""

    kind = "counter"


class Histogram(Metric):
    kind = "histogram"

    def __init__(self, name: str, help: str, buckets: tuple[float, ...] = DEFAULT_BUCKETS):
        super().__init__(name, help)
        self.bounds = buckets
        self.counts = [0] * (len(buckets) + 1)  # the last one is +Inf
        self.sum = 0.0

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(self.bounds, value)] += 1
        self.sum += value

    @property
    def count(self) -> int:
        return sum(self.counts)

    def samples(self) -> list[str]:
        lines, running = [], 0
        for bound, count in zip((*self.bounds, float("inf")), self.counts, strict=True):
            running += count
            le = "+Inf" if bound == float("inf") else _number(bound)
            lines.append(f'{self.name}_bucket{{le="{le}"}} {running}')
        lines.append(f"{self.name}_sum {_number(self.sum)}")
        lines.append(f"{self.name}_count {running}")
        return lines


class Registry:
    def __init__(self) -> None:
        self.metrics: list[Metric] = []

    def add(self, metric: M) -> M:
        self.metrics.append(metric)
        return metric

    def render(self) -> str:
        return "".join(m.render() for m in self.metrics)


CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class ServiceMetrics:
    """The service's metrics; gauges are wired to their sources by ``Services``."""

    def __init__(self) -> None:
        self.registry = Registry()
        add = self.registry.add
        self.commands = add(
            Counter(
                "olympus_commands_total",
                "Commands from seats and the service, by result (ok, duplicate, or an error code).",
                ("result",),
            )
        )
        self.timeouts = add(
            Counter("olympus_timeouts_total", "Deadline timeouts fired, by result.", ("result",))
        )
        self.ws_errors = add(
            Counter("olympus_ws_errors_total", "Error frames sent, by code.", ("code",))
        )
        self.room_loads = add(
            Counter(
                "olympus_room_loads_total",
                "Rooms loaded into this process, by source (snapshot and tail, or the whole log).",
                ("source",),
            )
        )
        self.shed = add(
            Counter(
                "olympus_shed_total",
                "Requests refused because the process is overloaded, by request.",
                ("request",),
            )
        )
        self.conflicts = add(
            Counter("olympus_append_conflicts_total", "Appends refused by a version conflict.")
        )
        self.pubsub_reconnects = add(
            Counter("olympus_pubsub_reconnects_total", "Reconnections of the pub/sub connection.")
        )
        self.append_seconds = add(
            Histogram("olympus_append_seconds", "Latency of an event-store append (one script).")
        )
        self.fanout_seconds = add(
            Histogram(
                "olympus_fanout_seconds",
                "From learning of new events (own append done, or hint received) until every "
                "local socket has its frames queued.",
            )
        )

    def gauge(self, name: str, help: str, read: Read, labels: tuple[str, ...] = ()) -> None:
        self.registry.add(Gauge(name, help, read, labels))

    def counter(self, name: str, help: str, read: Read, labels: tuple[str, ...] = ()) -> None:
        """A counter whose values ``read`` gives at scrape time (kept where they happen)."""
        self.registry.add(ReadCounter(name, help, read, labels))
