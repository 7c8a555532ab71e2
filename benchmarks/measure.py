"""Measuring tools of the benchmark: percentiles, a process-tree RSS sampler and a child
process runner that a signal handler can stop.

Peak memory of an import is taken two ways. A thread sums ``VmRSS`` (``/proc/PID/status``)
of the child and all its descendants (the extraction workers) every ``interval`` seconds;
the largest sum is the sampled peak. The kernel's ``ru_maxrss`` of the reaped child (via
``os.wait4``) is the largest resident size of any single process of the tree, so it
catches spikes shorter than the sampling interval but not workers running side by side.
"""

from __future__ import annotations

import contextlib
import math
import os
import resource
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Final

__all__ = [
    "ChildRun",
    "RssSampler",
    "can_drop_page_cache",
    "drop_page_cache",
    "interrupt",
    "percentile",
    "process_tree",
    "remove_catalog",
    "run_child",
    "stop_current_child",
    "summarize",
    "tree_rss_bytes",
    "usable_cores",
]

RSS_INTERVAL_S: Final = 0.05
_MAX_KEPT_SAMPLES: Final = 4_000  # longer timelines are thinned to at most this many points
_KILL_GRACE_S: Final = 2.0

_current: subprocess.Popen[bytes] | None = None
_current_lock = threading.Lock()
# A stop (a signal handler's exception, see :func:`interrupt`) that arrived while a child
# was being started: raised once the child is registered, so that it is killed.
_starting = False
_deferred: BaseException | None = None


def percentile(samples: Sequence[float], pct: float) -> float:
    """The ``pct``-th percentile (0-100) of ``samples``, linearly interpolated between
    the two nearest ranks (NumPy's default method). Raises ValueError when ``samples`` is
    empty or ``pct`` is outside [0, 100]."""
    if not samples:
        raise ValueError("percentile of no samples")
    if not 0 <= pct <= 100 or math.isnan(pct):
        raise ValueError(f"percentile must be within [0, 100], got {pct}")
    ordered = sorted(samples)
    rank = (len(ordered) - 1) * pct / 100
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def summarize(samples: Sequence[float]) -> dict[str, float | int]:
    """Count, p50, p95, p99, min and max of timing samples (seconds)."""
    return {
        "count": len(samples),
        "p50_s": percentile(samples, 50),
        "p95_s": percentile(samples, 95),
        "p99_s": percentile(samples, 99),
        "min_s": min(samples),
        "max_s": max(samples),
    }


# --------------------------------------------------------------------------- RSS


def _parents() -> dict[int, int]:
    """Every visible process's parent pid, from ``/proc/*/stat``."""
    parents: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_bytes()
        except OSError:
            continue  # the process ended while we looked
        # The command name is in parentheses and may itself contain ") ".
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 1:
            parents[int(entry.name)] = int(fields[1])
    return parents


def process_tree(root: int) -> list[int]:
    """``root`` and all its living descendants."""
    children: dict[int, list[int]] = {}
    for pid, ppid in _parents().items():
        children.setdefault(ppid, []).append(pid)
    tree, stack = [], [root]
    while stack:
        pid = stack.pop()
        tree.append(pid)
        stack.extend(children.get(pid, ()))
    return tree


def _vm_rss_bytes(pid: int) -> int:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0  # a zombie has no VmRSS line


def tree_rss_bytes(root: int) -> int:
    """The summed ``VmRSS`` of ``root`` and its descendants, in bytes."""
    return sum(_vm_rss_bytes(pid) for pid in process_tree(root))


class RssSampler:
    """Samples :func:`tree_rss_bytes` of a process every ``interval`` seconds on a daemon
    thread, from :meth:`start` until :meth:`stop`."""

    def __init__(self, pid: int, interval: float = RSS_INTERVAL_S) -> None:
        self.pid = pid
        self.interval = interval
        self.samples: list[int] = []
        self._halt = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="rss-sampler", daemon=True)

    def start(self) -> None:
        """Begin sampling."""
        self._thread.start()

    def stop(self) -> None:
        """Stop sampling and wait for the thread."""
        self._halt.set()
        if self._thread.is_alive():
            self._thread.join()

    @property
    def peak(self) -> int:
        """The largest sample (0 before the first)."""
        return max(self.samples, default=0)

    def kept_samples(self) -> list[int]:
        """The timeline, thinned to at most a few thousand evenly spaced samples."""
        step = max(1, math.ceil(len(self.samples) / _MAX_KEPT_SAMPLES))
        return self.samples[::step]

    def _loop(self) -> None:
        while True:
            rss = tree_rss_bytes(self.pid)
            if rss:
                self.samples.append(rss)
            if self._halt.wait(self.interval):
                return


# --------------------------------------------------------------------------- children


def usable_cores() -> int:
    """The cores this process (and the children it starts) may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


@dataclass(frozen=True)
class ChildRun:
    """A finished child process: wall time, exit code, output and memory figures."""

    argv: tuple[str, ...]
    seconds: float
    returncode: int
    stdout: str
    stderr: str
    peak_rss_bytes: int
    ru_maxrss_bytes: int
    rss_samples_bytes: list[int] = field(default_factory=list)
    rss_interval_s: float = RSS_INTERVAL_S
    # CPU seconds of the child and its reaped descendants (``wait4``), user and kernel.
    cpu_user_seconds: float = 0.0
    cpu_system_seconds: float = 0.0


def interrupt(stop: BaseException) -> None:
    """Raise ``stop`` (from a signal handler): now, or, while :func:`run_child` is
    starting its child, as soon as the child is registered. Raised inside
    ``subprocess.Popen``, after the fork, it would leave a child no one knows to kill."""
    global _deferred
    if _starting:
        _deferred = stop
        return
    raise stop


@contextlib.contextmanager
def _stops_deferred() -> Iterator[None]:
    """Hold back :func:`interrupt` for the duration of the block, then raise it."""
    global _starting, _deferred
    _starting = True
    try:
        yield
    finally:
        _starting = False
        stop, _deferred = _deferred, None
        if stop is not None:
            raise stop


def _register(proc: subprocess.Popen[bytes] | None) -> None:
    global _current
    with _current_lock:
        _current = proc


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError):  # already reaped
        os.waitpid(pid, 0)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the child's process group, SIGKILL it after a short grace, reap it; then
    end whatever is left of the group."""
    if proc.returncode is not None:  # it ended by itself: what it left in its group goes
        _end_group(proc.pid)
        return
    try:
        for sig, grace in ((signal.SIGTERM, _KILL_GRACE_S), (signal.SIGKILL, None)):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                break
            if grace is None:
                break
            deadline = time.monotonic() + grace
            while time.monotonic() < deadline:
                try:
                    if os.waitpid(proc.pid, os.WNOHANG) != (0, 0):
                        proc.returncode = -int(sig)
                        return
                except ChildProcessError:  # reaped already (it ended by itself)
                    return
                time.sleep(0.02)
        _reap(proc.pid)
        proc.returncode = -int(signal.SIGKILL)
    finally:
        _end_group(proc.pid)


def _end_group(pgid: int, wait_s: float = _KILL_GRACE_S) -> None:
    """SIGKILL what is left of process group ``pgid`` once its leader is gone, and wait
    until no member remains: they are not this process's children (their parent, the
    leader, is dead, and init reaps them), so nothing else would wait for them."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.01)


def stop_current_child() -> bool:
    """Kill the running child started by :func:`run_child` (and its process group), if
    any; returns whether there was one."""
    with _current_lock:
        proc = _current
    if proc is None:
        return False
    _kill_group(proc)
    _register(None)
    return True


def _read(handle: IO[bytes]) -> str:
    handle.seek(0)
    return handle.read().decode("utf-8", "replace")


def run_child(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    sample_rss: bool = False,
    timeout: float | None = None,
) -> ChildRun:
    """Run ``argv`` in its own process group and wait for it; stdout and stderr go to
    temporary files (no pipe to fill up). With ``sample_rss`` the process tree's memory
    is sampled while it runs. If the caller is interrupted (a signal handler raising)
    or ``timeout`` passes, the child's group is killed before the exception propagates
    (:class:`subprocess.TimeoutExpired` for a timeout)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc: subprocess.Popen[bytes] | None = None
        sampler: RssSampler | None = None
        try:
            with _stops_deferred():
                proc = subprocess.Popen(
                    list(argv), stdout=out, stderr=err, env=dict(env) if env is not None else None,
                    start_new_session=True,
                )  # fmt: skip
                _register(proc)
            sampler = RssSampler(proc.pid) if sample_rss else None
            if sampler is not None:
                sampler.start()
            status, usage = _wait(proc, timeout)
            seconds = time.perf_counter() - started
        finally:
            if sampler is not None:
                sampler.stop()
            if proc is not None:
                _kill_group(proc)
            _register(None)
        return ChildRun(
            argv=tuple(argv),
            seconds=seconds,
            returncode=os.waitstatus_to_exitcode(status),
            stdout=_read(out),
            stderr=_read(err),
            peak_rss_bytes=sampler.peak if sampler is not None else 0,
            ru_maxrss_bytes=usage.ru_maxrss * 1024,
            rss_samples_bytes=sampler.kept_samples() if sampler is not None else [],
            cpu_user_seconds=usage.ru_utime,
            cpu_system_seconds=usage.ru_stime,
        )


def _wait(
    proc: subprocess.Popen[bytes], timeout: float | None
) -> tuple[int, resource.struct_rusage]:
    """Block in ``wait4`` until the child ends; returns its wait status and its resource
    usage (that of the child and its reaped descendants)."""
    expired = threading.Event()

    def expire() -> None:
        expired.set()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)

    timer = threading.Timer(timeout, expire) if timeout is not None else None
    if timer is not None:
        timer.daemon = True
        timer.start()
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    finally:
        if timer is not None:
            timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if expired.is_set():
        raise subprocess.TimeoutExpired(proc.args, timeout or 0.0)
    return status, usage


def remove_catalog(catalog: Path) -> None:
    """Remove ``catalog`` and what DuckDB, the writer lock and the vector cache keep
    beside it (``.wal``, ``.lock``, ``.vectors/``), so that a run starts from an empty
    catalog."""
    for stale in catalog.parent.glob(catalog.name + "*"):
        if stale.name == f"{catalog.name}.vectors":
            shutil.rmtree(stale)
        else:
            stale.unlink()


_DROP_CACHES: Final = Path("/proc/sys/vm/drop_caches")


def can_drop_page_cache() -> bool:
    """Whether this process may drop the kernel's page cache (root, a writable /proc)."""
    return os.access(_DROP_CACHES, os.W_OK)


def drop_page_cache() -> None:
    """Write dirty pages out, then drop the clean page cache, dentries and inodes: the
    next reads come from the disk, as after a reboot."""
    os.sync()
    _DROP_CACHES.write_text("3\n")
