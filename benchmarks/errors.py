"""The benchmark's own exceptions."""

from __future__ import annotations

__all__ = ["PhaseError", "PhaseSkipped", "Stopped"]


class PhaseError(Exception):
    """A phase could not produce its figures (a command failed, a result is unusable)."""


class PhaseSkipped(Exception):
    """A phase cannot run here (ccusage is not installed); the message says why."""


class Stopped(BaseException):
    """The run was asked to stop (SIGINT, SIGTERM or ``--max-wall``); raised from the
    signal handler, so it derives from BaseException and passes through every handler
    of ordinary errors."""

    def __init__(self, reason: str, exit_code: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.exit_code = exit_code
