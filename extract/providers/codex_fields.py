"""Field readers of Codex rollout records: token counts, rate-limit windows, tool
outputs, times, fork parents and the session id in a rollout's head.

Pure functions over parsed JSON values (one of them reads a rollout's first bytes); the
adapter in :mod:`.codex` decides what a record becomes.
"""

from __future__ import annotations

import re
import zlib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import orjson

from ..schema import WINDOW_KINDS, WindowKind
from ..sources import open_regular
from ..values import json_text, token_count

#: How much of a rollout's head is read to find its session id (DESIGN §2).
HEADER_BYTES: Final = 64 * 1024

_USAGE_KEYS: Final = (
    "input_tokens",
    "cached_input_tokens",
    "output_tokens",
    "reasoning_output_tokens",
    "total_tokens",
)
_HEADER_ID: Final = re.compile(rb'^\s*\{.{0,200}?"payload"\s*:\s*\{\s*"id"\s*:\s*"([^"\\]{1,200})"')
_LEGACY_HEADER_ID: Final = re.compile(rb'^\s*\{\s*"id"\s*:\s*"([^"\\]{1,200})"')
_EXIT_CODE: Final = re.compile(r"(?:process exited with code|exit code:?)\s*(-?\d+)", re.IGNORECASE)
_EXIT_SCAN: Final = 512


def usage_counts(usage: dict[str, Any]) -> list[int]:
    """Input, cached input, output, reasoning and total tokens of a usage object."""
    return [token_count(usage.get(k)) for k in _USAGE_KEYS]


def json_or_text(value: Any) -> str | None:
    """JSON text for ``tool_input``: a string that already is JSON is kept as written,
    any other string becomes a JSON string."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            orjson.loads(value)
        except orjson.JSONDecodeError:
            return json_text(value)
        return value
    return json_text(value)


def nonempty_str(value: Any) -> str | None:
    """``value`` if it is a non-empty string, else ``None``."""
    return value if isinstance(value, str) and value else None


def number(value: Any) -> float | None:
    """A JSON number as a float (``None`` for anything else, booleans included)."""
    if type(value) is int or (type(value) is float and value == value and abs(value) < 1e300):
        return float(value)
    return None


def whole(value: Any) -> int | None:
    """A JSON number as a whole number (floats truncated), else ``None``."""
    found = number(value)
    return int(found) if found is not None and abs(found) < 1 << 62 else None


def rate_windows(
    limits: dict[str, Any],
) -> list[tuple[WindowKind, float, int | None, int | None, int | None]]:
    """The windows of one ``rate_limits`` object as (kind, used percent, length in
    minutes, reset in epoch seconds, reset in seconds from now), in every shape Codex
    wrote: ``{"primary": {"used_percent", "window_minutes", "resets_at" | "reset_at" |
    "resets_in_seconds"}}`` or the older flat ``primary_used_percent``,
    ``primary_window_minutes`` (``primary_reset_after_seconds``). A window without a
    used percentage is left out; a length of 0 is unknown."""
    windows: list[tuple[WindowKind, float, int | None, int | None, int | None]] = []
    for kind in WINDOW_KINDS:
        window = limits.get(kind)
        if isinstance(window, dict):
            used = number(window.get("used_percent"))
            minutes = whole(window.get("window_minutes"))
            at = whole(window.get("resets_at", window.get("reset_at")))
            after = whole(window.get("resets_in_seconds"))
        elif f"{kind}_used_percent" in limits:
            used = number(limits.get(f"{kind}_used_percent"))
            minutes = whole(limits.get(f"{kind}_window_minutes"))
            at = None
            after = whole(
                limits.get(f"{kind}_reset_after_seconds", limits.get(f"{kind}_resets_in_seconds"))
            )
        else:
            continue
        if used is None:
            continue
        windows.append((kind, used, minutes or None, at if at and at > 0 else None, after))
    return windows


def text_digest(text: str) -> str:
    """A short digest of a message's text (to pair its dual-written copies)."""
    return f"{zlib.crc32(text.encode()):08x}"


def iso_ms(ms: int) -> str | None:
    """Epoch milliseconds as an ISO-8601 UTC time, ``None`` when out of range."""
    try:
        moment = datetime.fromtimestamp(ms / 1000, UTC)
    except (OverflowError, OSError, ValueError):
        return None
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def epoch_ms(iso: str) -> int | None:
    """An ISO-8601 time (UTC when it names no zone) as epoch milliseconds, else ``None``."""
    try:
        moment = datetime.fromisoformat(iso)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


def uuid7_ms(value: Any) -> int | None:
    """The creation time (ms) of a UUIDv7 string, else ``None``."""
    if not isinstance(value, str) or len(value) != 36 or value[14] != "7":
        return None
    try:
        return int(value[:8] + value[9:13], 16)
    except ValueError:
        return None


def parent_of(payload: dict[str, Any]) -> str | None:
    """The thread a fork or subagent rollout was started from, if it names one."""
    for key in ("forked_from_id", "parent_thread_id"):
        parent = nonempty_str(payload.get(key))
        if parent:
            return parent
    source = payload.get("source")
    if isinstance(source, dict):
        sub = source.get("subagent")
        spawn = sub.get("thread_spawn") if isinstance(sub, dict) else None
        if isinstance(spawn, dict):
            return nonempty_str(spawn.get("parent_thread_id"))
    return None


def tool_output(output: Any) -> tuple[str | None, bool | None]:
    """Text and error status of a tool call's output, in every shape Codex wrote.

    Status comes from ``{"output":..,"metadata":{"exit_code":N}}`` JSON, from a
    ``Process exited with code N`` / ``Exit code: N`` header, or from ``success``;
    ``None`` when the output does not say.
    """
    if isinstance(output, str):
        if output.startswith("{") and '"metadata"' in output:
            try:
                parsed = orjson.loads(output)
            except orjson.JSONDecodeError:
                parsed = None
            if isinstance(parsed, dict) and isinstance(parsed.get("metadata"), dict):
                code = parsed["metadata"].get("exit_code")
                inner = parsed.get("output")
                text = inner if isinstance(inner, str) else output
                return text, (code != 0) if type(code) is int else None
        match = _EXIT_CODE.search(output, 0, _EXIT_SCAN)
        return output, (int(match.group(1)) != 0) if match else None
    if isinstance(output, list):
        texts = []
        for item in output:
            if isinstance(item, dict):
                value = item.get("text")
                if isinstance(value, str):
                    texts.append(value)
                elif item.get("type") in ("input_image", "image"):
                    texts.append("[image]")
        joined = "\n".join(texts) if texts else None
        if joined is None:
            return None, None
        return tool_output(joined)
    if isinstance(output, dict):
        success = output.get("success")
        for key in ("text", "content", "output"):
            inner = output.get(key)
            if isinstance(inner, str | list):
                found, status = tool_output(inner)
                return found, (not success) if isinstance(success, bool) else status
        return json_text(output), (not success) if isinstance(success, bool) else None
    return (None, None) if output is None else (json_text(output), None)


def session_id_from_header(path: Path) -> str | None:
    """``session_meta.payload.id`` (or a pre-envelope header's ``id``) from the first
    :data:`HEADER_BYTES` of a rollout; a header line longer than that is searched for
    its leading id (Codex writes ``id`` first)."""
    try:
        with open_regular(path) as fh:
            head = fh.read(HEADER_BYTES)
    except OSError:
        return None
    end = head.find(b"\n")
    if end >= 0:
        try:
            first = orjson.loads(head[:end])
        except orjson.JSONDecodeError:
            first = None
        if isinstance(first, dict):
            payload = first.get("payload")
            if first.get("type") == "session_meta" and isinstance(payload, dict):
                return nonempty_str(payload.get("id"))
            if "type" not in first and "payload" not in first:
                return nonempty_str(first.get("id"))
            return None
    for pattern in (_HEADER_ID, _LEGACY_HEADER_ID):
        match = pattern.match(head)
        if match:
            try:
                return match.group(1).decode()
            except UnicodeDecodeError:
                return None
    return None
