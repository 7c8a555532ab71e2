"""Field readers of Cursor values: ``<timestamp>`` clocks, stored instants, model names
and absolute paths. Pure functions shared by the transcript and ``state.vscdb`` adapters.
"""

from __future__ import annotations

import math
import ntpath
import posixpath
import re
from datetime import UTC, datetime, timedelta
from typing import Any, Final

_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_MONTH_NAMES: Final = (
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december",
)  # fmt: skip
_MONTHS: Final = {
    **{name: number for number, name in enumerate(_MONTH_NAMES, 1)},
    **{name[:3]: number for number, name in enumerate(_MONTH_NAMES, 1)},
    "sept": 9,
}
# "Friday, May 1, 2026, 9:00 AM (UTC-5)"; weekday, seconds, AM/PM and zone optional.
_CLOCK: Final = re.compile(
    r"\s*(?:[A-Za-z]+,\s*)?([A-Za-z]{3,})\.?\s+(\d{1,2}),?\s+(\d{4}),?\s+"
    r"(\d{1,2}):(\d{2})(?::(\d{2}))?\s*([AaPp]\.?[Mm]\.?)?\s*"
    r"(?:\(\s*(?:UTC|GMT)\s*(?:([+-])\s*(\d{1,2})(?::?(\d{2}))?)?\s*\))?\s*"
)


def parse_timestamp(text: str) -> str | None:
    """The UTC ISO-8601 instant of a ``<timestamp>`` body such as
    ``Friday, May 1, 2026, 9:00 AM (UTC-5)`` (→ ``2026-05-01T14:00:00.000Z``); a body
    without a zone is read as UTC; ``None`` when it cannot be read."""
    match = _CLOCK.fullmatch(text)
    if match is None:
        return None
    month_name, day, year, hour, minute, second, half, sign, off_h, off_m = match.groups()
    month = _MONTHS.get(month_name.lower())
    if month is None:
        return None
    h = int(hour)
    if half is not None:
        if not 1 <= h <= 12:
            return None
        h = h % 12 + (12 if half[0] in "Pp" else 0)
    try:
        local = datetime(int(year), month, int(day), h, int(minute), int(second or 0), tzinfo=UTC)
    except ValueError:
        return None
    if sign is not None:
        offset = timedelta(hours=int(off_h), minutes=int(off_m or 0))
        local = local - offset if sign == "+" else local + offset
    return f"{local:%Y-%m-%dT%H:%M:%S}.000Z"


def instant(value: Any) -> str | None:
    """A time as Cursor stores it (epoch milliseconds, or ISO-8601 text) → ISO text."""
    if type(value) is str:
        if len(value) >= 19 and value[4] == "-" and value[10] in "T ":
            return value if value[10] == "T" else value[:10] + "T" + value[11:]
        if not (value.isascii() and value.isdigit()) or len(value) > 19:
            return None
        value = int(value)
    if type(value) is float and math.isfinite(value):
        value = int(value)
    if type(value) is not int or value <= 0:
        return None
    ms = value if value >= 100_000_000_000 else value * 1000  # seconds, if that small
    try:
        moment = _EPOCH + timedelta(milliseconds=ms)
    except OverflowError:
        return None
    return f"{moment:%Y-%m-%dT%H:%M:%S}.{ms % 1000:03d}Z"


def pinned_model(value: Any) -> str | None:
    """A model name, unless empty or ``default`` (Cursor's "auto": never pinned)."""
    if type(value) is str and value and value != "default":
        return value
    return None


def text_or_none(value: Any) -> str | None:
    """``value`` if it is text, else ``None``."""
    return value if isinstance(value, str) else None


def is_absolute(path: str) -> bool:
    """Whether ``path`` is absolute, POSIX (``/…``) or Windows (``C:\\…``) style."""
    return path.startswith("/") or (
        len(path) > 2 and path[1] == ":" and path[2] in "\\/" and path[0].isalpha()
    )


def common_parent(current: str | None, path: str) -> str | None:
    """The common parent of ``current`` and ``path`` (same path style), else ``current``."""
    if current is None:
        return path
    posix = current.startswith("/")
    if path.startswith("/") != posix:
        return current
    try:
        common: str = (posixpath if posix else ntpath).commonpath([current, path])
    except ValueError:
        return current
    return common
