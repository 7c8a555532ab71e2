"""How a running import answers SIGINT and SIGTERM: one signal ends it within
:data:`STOP_SECONDS`, whatever it is blocked on.

The first signal asks the import to stop at the next batch boundary: everything read
until then is committed and the receipt says ``interrupted``; a second one aborts at once
(the batch being read is dropped). Python runs signal handlers only between bytecodes of
the main thread, which a call into C that does not return (SQLite waiting for a lock, a
read of a hung file system) never reaches, so a watchdog thread hears of the signal
through the interpreter's wakeup file descriptor as it arrives and, if the process has
not ended by :data:`STOP_SECONDS`, ends it. Each way the catalog holds exactly what was
committed, as after a crash, and the next import resumes from there.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Final

STOP_SECONDS: Final = 1.8
EXIT_STATUS: Final = 130  # 128 + SIGINT, as shells report an interrupted command
_SIGNALS: Final = (signal.SIGINT, signal.SIGTERM)
_ENDED: Final = b"\0"  # written to the wakeup pipe when the block ends


@contextmanager
def stop_on_signals(say: Callable[[str], None]) -> Iterator[threading.Event]:
    """For the block, SIGINT and SIGTERM set the event it yields (a stop request), and a
    second one raises :class:`KeyboardInterrupt` in the main thread; ``say`` tells the
    user what happens. Must be entered in the main thread."""
    stop, done = threading.Event(), threading.Event()
    heard = [0]  # signals the main thread's handler has run for

    def handler(signum: int, frame: object) -> None:
        heard[0] += 1
        stop.set()
        if heard[0] > 1:
            raise KeyboardInterrupt

    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)

    def watchdog() -> None:
        while (byte := os.read(wake_read, 1)) not in (b"", _ENDED):
            if byte[0] in _SIGNALS:
                break
        else:
            return
        stop.set()
        say(
            f"{signal.Signals(byte[0]).name}: stopping at the next batch boundary "
            "(send it again to abort now)"
        )
        if done.wait(STOP_SECONDS):
            return
        say(
            "the import did not stop in time (blocked reading or writing); ended now; "
            "the next import resumes from its last commit"
        )
        os._exit(EXIT_STATUS)

    previous = {sig: signal.signal(sig, handler) for sig in _SIGNALS}
    previous_fd = signal.set_wakeup_fd(wake_write, warn_on_full_buffer=False)
    guard = threading.Thread(target=watchdog, name="agentlake-stop", daemon=True)
    guard.start()
    try:
        yield stop
    finally:
        done.set()
        signal.set_wakeup_fd(previous_fd)
        for sig, old in previous.items():
            signal.signal(sig, old)
        with suppress(BlockingIOError):
            os.write(wake_write, _ENDED)
        guard.join()
        os.close(wake_read)
        os.close(wake_write)
