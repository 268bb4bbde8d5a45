"""The service's Prometheus metrics, kept by prometheus-client, and their text exposition.

Counters and histograms are counted where things happen. Those a command passes (``buffered``:
its result, its append's and its fan-out's latency) are tallied in this module's own fields and
added to prometheus-client's values by ``Registry.refresh``, before each exposition and every
``REFRESH_SECONDS``: prometheus-client's Python per call was a measurable part of a command's CPU
(docs/performance.md). Gauges are read from a callback at the thing they count (``Gauge``): each
exposition first sets them from it, so they do not drift from what they count.

One process (``olympus serve --workers 1``, the tests' servers): each ``ServiceMetrics`` keeps
its values in memory, in a registry of its own.

Several processes (``olympus serve --workers N``): the supervisor starts its workers with a
fresh directory in ``PROMETHEUS_MULTIPROC_DIR`` (workers.py), so prometheus-client keeps each
worker's values in files of its own there (mmap), and the exposition of any worker merges the
files of all of them (``MultiProcessCollector``): one ``/metrics`` whichever worker the kernel
hands the scrape to. Counters and histograms add up over every worker that has run since the
supervisor started, the dead included, so a total never goes back when a worker restarts. A
gauge merges over the live workers as its ``Mode`` says; each worker writes its gauges every
``REFRESH_SECONDS`` (services.py) and before each of its own expositions, so the other workers'
are at most that old; the supervisor deletes a dead worker's (``mark_process_dead``). A process
started with ``PROMETHEUS_MULTIPROC_DIR`` keeps its metrics there, one ``ServiceMetrics`` per
process: two would count into the same values.
"""

from __future__ import annotations

import bisect
import math
import os
from collections.abc import Callable, Iterable
from typing import Literal, TypeVar

import prometheus_client
from prometheus_client import CollectorRegistry
from prometheus_client.metrics import MetricWrapperBase
from prometheus_client.metrics_core import Metric as Family
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.samples import Sample

LabelValues = tuple[str, ...]
Read = Callable[[], dict[LabelValues, float]]  # a gauge's values, read when it is set
# How a gauge merges over the live workers: their sum, their largest value, their smallest.
Mode = Literal["livesum", "livemax", "livemin"]
M = TypeVar("M", bound="Metric")

SHARED_DIRECTORY = "PROMETHEUS_MULTIPROC_DIR"  # prometheus-client's, read when it is imported
REFRESH_SECONDS = 1.0  # how often a worker writes its gauges where the others read them
DEFAULT_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def shared_directory() -> str | None:
    """Where the processes of one deployment share their metrics (``PROMETHEUS_MULTIPROC_DIR``,
    set before the process started), or None: the process keeps its own."""
    return os.environ.get(SHARED_DIRECTORY) or None


class Metric:
    """One metric family: the prometheus-client object that keeps it."""

    def __init__(self, kept: MetricWrapperBase) -> None:
        self.kept = kept

    def flush(self) -> None:
        """Add what was tallied here since the last flush to the kept values."""


class Counter(Metric):
    """A counter, by label values (``inc("ok")``). ``buffered``: tallied here until ``flush``
    (only from the event loop of its process's one ``ServiceMetrics``: a flush from another
    thread could lose a count)."""

    def __init__(
        self, name: str, help: str, labels: tuple[str, ...] = (), buffered: bool = False
    ) -> None:
        counter = prometheus_client.Counter(name, help, labels, registry=None)
        super().__init__(counter)
        self._counter = counter
        self.label_names = labels
        self.buffered = buffered
        self._tallies: dict[LabelValues, float] = {}  # since the last flush (``buffered``)
        # The children by label values: prometheus-client's ``labels()`` costs a few µs a call.
        self._children: dict[LabelValues, prometheus_client.Counter] = {}
        if not labels:
            self._children[()] = counter

    def inc(self, *labels: str, amount: float = 1.0) -> None:
        if self.buffered:
            self._tallies[labels] = self._tallies.get(labels, 0.0) + amount
        else:
            self._child(labels).inc(amount)

    def _child(self, labels: LabelValues) -> prometheus_client.Counter:
        child = self._children.get(labels)
        if child is None:
            child = self._children[labels] = self._counter.labels(*labels)
        return child

    def flush(self) -> None:
        tallies, self._tallies = self._tallies, {}
        for labels, amount in tallies.items():
            self._child(labels).inc(amount)

    def get(self, *labels: str) -> float:
        """This process's count for ``labels`` (0 if none)."""
        self.flush()
        wanted = dict(zip(self.label_names, labels, strict=True))
        for family in self._counter.collect():
            for sample in family.samples:
                if sample.name.endswith("_total") and sample.labels == wanted:
                    return sample.value
        return 0.0


class Histogram(Metric):
    """A histogram without labels, over ``buckets`` (upper bounds; ``+Inf`` is added), its
    observations tallied here until ``flush`` (as a buffered ``Counter``'s)."""

    def __init__(self, name: str, help: str, buckets: tuple[float, ...] = DEFAULT_BUCKETS):
        histogram = prometheus_client.Histogram(name, help, registry=None, buckets=buckets)
        super().__init__(histogram)
        self._histogram = histogram
        self._bounds = list(buckets)
        self._counts = [0] * (len(buckets) + 1)  # per bucket (not cumulative), +Inf last
        self._sum = 0.0

    def observe(self, value: float) -> None:
        self._counts[bisect.bisect_left(self._bounds, value)] += 1
        self._sum += value

    def flush(self) -> None:
        """Each bucket's count and the sum, added to prometheus-client's own values (its
        ``_buckets`` and ``_sum``: what its ``observe`` adds to; INTERNALS)."""
        counts, self._counts = self._counts, [0] * len(self._counts)
        total, self._sum = self._sum, 0.0
        if not any(counts):
            return
        kept = self._histogram
        for bucket, count in zip(kept._buckets, counts, strict=True):
            if count:
                bucket.inc(count)
        kept._sum.inc(total)


class Gauge(Metric):
    """A gauge whose values ``read`` gives, by label values, set from it by ``refresh``. Label
    values it no longer gives are set to 0 (a worker's series cannot be removed from the
    shared files)."""

    def __init__(
        self, name: str, help: str, read: Read, labels: tuple[str, ...] = (), mode: Mode = "livesum"
    ) -> None:
        gauge = prometheus_client.Gauge(name, help, labels, registry=None, multiprocess_mode=mode)
        super().__init__(gauge)
        self._gauge = gauge
        self.read = read
        self._children: dict[LabelValues, prometheus_client.Gauge] = {}

    def refresh(self) -> None:
        values = self.read()
        for labels, child in self._children.items():
            if labels not in values:
                child.set(0.0)
        for labels, value in values.items():
            if labels not in self._children:
                self._children[labels] = self._gauge.labels(*labels) if labels else self._gauge
            self._children[labels].set(value)


class Registry:
    """The metrics of one exposition: those added here (``directory`` None), or every
    process's that keeps its metrics in ``directory``."""

    def __init__(self, directory: str | None = None) -> None:
        self.directory = directory
        self._kept = CollectorRegistry()
        self._metrics: list[Metric] = []
        self._gauges: list[Gauge] = []
        if directory is not None:
            MultiProcessCollector(self._kept, directory)  # type: ignore[no-untyped-call]

    def add(self, metric: M) -> M:
        self._metrics.append(metric)
        if isinstance(metric, Gauge):
            self._gauges.append(metric)
        if self.directory is None:  # (else its values are in the directory already)
            self._kept.register(metric.kept)
        return metric

    def refresh(self) -> None:
        """Add the tallies to the kept values, and set the gauges from their callbacks."""
        for metric in self._metrics:
            metric.flush()
        for gauge in self._gauges:
            gauge.refresh()

    def render(self) -> str:
        self.refresh()
        return exposition(self._kept.collect())


def exposition(families: Iterable[Family]) -> str:
    """Prometheus's text format 0.0.4, families by name, each one's series in order. Written
    here rather than by prometheus-client's ``generate_latest``: integral values and bounds as
    integers (``… 2``, not ``… 2.0``), and without the ``_created`` series of counters and
    histograms."""
    lines = []
    for family in sorted(families, key=lambda f: f.name):
        name = family.name + "_total" if family.type == "counter" else family.name
        lines.append(f"# HELP {name} {_escape_help(family.documentation)}")
        lines.append(f"# TYPE {name} {family.type}")
        samples = [s for s in family.samples if not s.name.endswith("_created")]
        for sample in sorted(samples, key=_order):
            lines.append(f"{sample.name}{_labels(sample.labels)} {_number(sample.value)}")
    return "".join(line + "\n" for line in lines)


# A histogram's series: its buckets (by bound), then its sum, then its count.
_RANKS = (("_bucket", 0), ("_sum", 1), ("_count", 2))


def _order(sample: Sample) -> tuple[tuple[tuple[str, str], ...], int, float]:
    series = tuple(sorted((k, v) for k, v in sample.labels.items() if k != "le"))
    rank = next((r for suffix, r in _RANKS if sample.name.endswith(suffix)), 0)
    return series, rank, float(sample.labels.get("le", "0"))


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _escape_help(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n")


def _labels(labels: dict[str, str]) -> str:
    """``{name="value",…}``; a bucket's bound as the other values (``le="1"``, not ``"1.0"``)."""
    if not labels:
        return ""
    parts = [f'{k}="{_number(float(v)) if k == "le" else _escape(v)}"' for k, v in labels.items()]
    return "{" + ",".join(parts) + "}"


def _number(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return str(int(value)) if float(value).is_integer() else repr(float(value))


class ServiceMetrics:
    """The service's metrics; gauges are wired to their sources by ``Services``. Shared with
    the other processes that keep their metrics in ``shared_directory()``, if any."""

    def __init__(self) -> None:
        self.registry = Registry(shared_directory())
        add = self.registry.add
        self.commands = add(
            Counter(
                "olympus_commands_total",
                "Commands from seats and the service, by result (ok, duplicate, or an error code).",
                ("result",),
                buffered=True,
            )
        )
        self.timeouts = add(
            Counter("olympus_timeouts_total", "Deadline timeouts fired, by result.", ("result",))
        )
        self.ws_errors = add(
            Counter("olympus_ws_errors_total", "Error frames sent, by code.", ("code",))
        )
        self.slow_closed = add(
            Counter(
                "olympus_ws_slow_closed_total",
                "Sockets closed (4413) for reading too slowly: their send buffer was full, by "
                "kind (seat, spectator).",
                ("kind",),
            )
        )
        self.room_loads = add(
            Counter(
                "olympus_room_loads_total",
                "Rooms loaded into a process, by source (snapshot and tail, or the whole log).",
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

    @property
    def shared(self) -> bool:
        """Whether other processes read these metrics (and this process theirs)."""
        return self.registry.directory is not None

    def gauge(
        self, name: str, help: str, read: Read, labels: tuple[str, ...] = (), mode: Mode = "livesum"
    ) -> None:
        """A gauge whose values ``read`` gives; ``mode``: how the workers' values merge."""
        self.registry.add(Gauge(name, help, read, labels, mode))
