"""The progress reporter protocol the library reports through (it never prints)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:
    from agentlake.ingest.plan import Plan, PlannedSource

# How an import shows its progress: a bar on a terminal (auto), lines, or nothing.
ProgressMode = Literal["auto", "lines", "none"]


class Reporter(Protocol):
    """Receives progress of an import; every method may be a no-op."""

    def planned(self, plan: Plan) -> None:
        """The plan is made; ``plan.bytes_to_read`` is the work ahead."""

    def advanced(self, source: PlannedSource, nbytes: int) -> None:
        """``nbytes`` more bytes of ``source`` were committed (or rejected)."""

    def phase(self, name: str) -> None:
        """A named phase started (e.g. ``index``)."""


class NullReporter:
    """The default reporter: does nothing."""

    def planned(self, plan: Plan) -> None:
        """Ignore."""

    def advanced(self, source: PlannedSource, nbytes: int) -> None:
        """Ignore."""

    def phase(self, name: str) -> None:
        """Ignore."""


class LineReporter:
    """One plain line per event (``--progress lines``): for logs, and for whoever must
    act at a known point of a run — each ``committed`` line is written after the commit
    it counts is durable."""

    def __init__(self, write: Callable[[str], None]) -> None:
        self.write = write
        self.total = self.done = 0

    def planned(self, plan: Plan) -> None:
        self.total = plan.bytes_to_read
        self.write(f"progress: planned {self.total} bytes")

    def advanced(self, source: PlannedSource, nbytes: int) -> None:
        self.done += nbytes
        self.write(f"progress: committed {self.done} of {self.total} bytes")

    def phase(self, name: str) -> None:
        self.write(f"progress: phase {name}")
