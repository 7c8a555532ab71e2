"""The progress reporter protocol the library reports through (it never prints)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from .plan import Plan, PlannedSource


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
