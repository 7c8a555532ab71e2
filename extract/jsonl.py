"""The shared byte-offset JSONL reader.

Every JSONL provider reads through :func:`read_lines`. It starts at a committed offset,
reads bounded chunks, and yields :class:`LineBatch` es of lines with the byte offset of
each, parsed as they are consumed. It never consumes a torn tail (a last line without
``\\n``), never holds an oversized line in memory, and turns each bad line into a
:class:`Reject` with its reason. Offsets it reports are always just after a newline.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import accumulate
from pathlib import Path
from typing import Any, Final

import orjson

from .digests import WINDOW_BYTES
from .schema import RejectReason
from .sources import open_regular

MiB: Final = 1024 * 1024


@dataclass(frozen=True, slots=True)
class RecordLimits:
    """Per-record ceilings (DESIGN §6)."""

    max_line_bytes: int = 4 * MiB
    max_depth: int = 64


@dataclass(frozen=True, slots=True)
class Reject:
    """One rejected span of a source, content-free."""

    offset: int
    length: int
    reason: RejectReason
    detail: str


@dataclass(slots=True)
class LineBatch:
    """Complete lines read from one source, in file order, not yet parsed.

    ``texts[i]`` is the line at ``offsets[i]`` (``lengths[i]`` bytes including its
    newline), for every line that is neither blank nor over the size limit; those over
    it are ``rejects`` already. :meth:`parsed` parses the texts one at a time, so that a
    consumer maps each record while it is fresh in the cache instead of holding a
    batch's worth of parsed objects. ``end_offset`` is just after the last newline consumed (valid
    lines, rejected lines and blank lines alike), so committing it never skips or
    repeats a byte.
    """

    texts: list[bytes] = field(default_factory=list)
    offsets: list[int] = field(default_factory=list)
    lengths: list[int] = field(default_factory=list)
    rejects: list[Reject] = field(default_factory=list)
    start_offset: int = 0
    end_offset: int = 0
    lines: int = 0
    limits: RecordLimits = RecordLimits()
    # The ≤ WINDOW_BYTES bytes just before ``end_offset`` as read, when the reader still
    # held them: the checkpoint's window digest is taken from them, not read again.
    window: bytes | None = None

    def parsed(self) -> Iterator[tuple[dict[str, Any] | Reject, int, int]]:
        """Each text parsed, in order, with its offset and length: its object, or its
        :class:`Reject`."""
        limits = self.limits
        for line, offset, length in zip(self.texts, self.offsets, self.lengths, strict=True):
            value = parse_line(line, limits)
            if isinstance(value, dict):
                yield value, offset, length
            else:
                yield Reject(offset, length, *value), offset, length


_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET = re.compile(rb"[\[\]{}]")


def nesting_depth(line: bytes) -> int:
    """Maximum bracket nesting of a JSON text, ignoring brackets inside strings."""
    brackets = _BRACKET.findall(_STRING.sub(b'""', line))
    steps = (1 if b in (b"[", b"{") else -1 for b in brackets)
    return max(accumulate(steps, initial=0))


def _is_utf8(line: bytes) -> bool:
    try:
        line.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def deeper_than(value: dict[str, Any] | list[Any], limit: int) -> bool:
    """Whether a parsed JSON container nests deeper than ``limit`` (the same depth
    :func:`nesting_depth` gives its text). Walks containers level by level and never
    looks into strings, so code full of brackets in a tool output costs nothing."""
    level: list[Any] = [value]
    depth = 1
    while level:
        if depth > limit:
            return True
        inner: list[Any] = []
        for node in level:
            for child in node.values() if type(node) is dict else node:
                if type(child) is dict or type(child) is list:
                    inner.append(child)
        level, depth = inner, depth + 1
    return False


def parse_line(line: bytes, limits: RecordLimits) -> dict[str, Any] | tuple[RejectReason, str]:
    """Parse one line into a JSON object, or say why it is rejected."""
    # Fewer opening brackets than the ceiling cannot nest too deep: only such lines are
    # measured, on the parsed value (orjson refuses texts nested past its own limit of
    # 1024, and a text cut short is not parsed at all: those are measured as text).
    deep_enough = line.count(b"{") + line.count(b"[") > limits.max_depth
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        if deep_enough and (depth := nesting_depth(line)) > limits.max_depth:
            return "TOO_DEEP", f"nesting depth {depth} exceeds {limits.max_depth}"
        if not _is_utf8(line):
            return "BAD_ENCODING", "line is not valid UTF-8"
        return "MALFORMED", f"invalid JSON at column {exc.colno}"
    if deep_enough and isinstance(value, (dict, list)) and deeper_than(value, limits.max_depth):
        depth = nesting_depth(line)
        return "TOO_DEEP", f"nesting depth {depth} exceeds {limits.max_depth}"
    if not isinstance(value, dict):
        return "MALFORMED", f"JSON {type(value).__name__} where an object was expected"
    return value


def read_lines(
    path: Path,
    *,
    start: int,
    stop: int,
    limits: RecordLimits = RecordLimits(),
    chunk_bytes: int = MiB,
    batch_lines: int = 50_000,
    batch_bytes: int | None = None,
) -> Iterator[LineBatch]:
    """Yield batches of the lines of ``path`` between byte ``start`` and ``stop``.

    ``start`` must be 0 or just after a newline. Bytes after the last newline before
    ``stop`` are the pending tail: not consumed, not rejected. An over-long line is
    rejected as ``OVERSIZED`` once its newline is found, without being buffered: at most
    ``limits.max_line_bytes`` of a pending line and one chunk are held at a time. Each
    batch holds at most ``batch_lines`` lines (valid, rejected and blank alike) and, with
    ``batch_bytes``, ends once it covers that many bytes (overshooting by at most one
    chunk or one line), so a file of huge lines does not make a huge batch.
    """
    max_len = limits.max_line_bytes
    batch_lines = max(1, batch_lines)
    batch = LineBatch(start_offset=start, end_offset=start, limits=limits)
    # The last two chunks read, contiguous (older first), and where each starts: the
    # window before a batch's end lies in them whenever it was read in this call.
    held: list[tuple[int, bytes]] = []

    def window(end: int) -> bytes | None:
        low = max(0, end - WINDOW_BYTES)
        if not held or low < held[0][0]:
            return None
        return b"".join(c[max(0, low - at) : max(0, end - at)] for at, c in held)

    with open_regular(path, buffering=0) as fh:
        fh.seek(start)
        chunk_pos = start  # file offset of the next chunk
        line_start = start  # file offset of the first unconsumed byte
        pending: list[bytes] = []  # the start of the line at line_start, split across chunks
        pending_len = 0
        skipping = False  # the line at line_start is oversized: its bytes are dropped
        remaining = stop - start
        while remaining > 0:
            chunk = fh.read(min(chunk_bytes, remaining))
            if not chunk:
                break  # the file shrank under us; the planner sees it next run
            remaining -= len(chunk)
            chunk_start, chunk_pos = chunk_pos, chunk_pos + len(chunk)
            held = [*held[-1:], (chunk_start, chunk)]
            lines = chunk.split(b"\n")  # no copy when the chunk holds no newline
            tail = lines.pop()
            first = 0  # index of the first line of ``lines`` still to parse
            if not lines:  # no newline: the line at line_start goes on
                if not skipping:
                    pending_len += len(tail)
                    if pending_len >= max_len:  # too long even before its newline
                        skipping, pending, pending_len = True, [], 0
                    else:
                        pending.append(tail)
                continue
            if skipping or pending:  # lines[0] ends the line at line_start
                length = chunk_start + len(lines[0]) + 1 - line_start
                if skipping or length > max_len:
                    detail = f"line of {length} bytes exceeds {max_len}"
                    batch.rejects.append(Reject(line_start, length, "OVERSIZED", detail))
                    batch.lines += 1
                    line_start += length
                    batch.end_offset = line_start
                    first = 1
                else:
                    pending.append(lines[0])
                    lines[0] = b"".join(pending)
                skipping, pending, pending_len = False, [], 0
            # Parse the complete lines, yielding each batch as soon as it is full.
            while True:
                if batch.lines >= batch_lines or (
                    batch_bytes is not None
                    and batch.lines
                    and batch.end_offset - batch.start_offset >= batch_bytes
                ):
                    batch.window = window(batch.end_offset)
                    yield batch
                    batch = LineBatch(start_offset=line_start, end_offset=line_start, limits=limits)
                if first >= len(lines):
                    break
                end = min(len(lines), first + batch_lines - batch.lines)
                todo = lines if first == 0 and end == len(lines) else lines[first:end]
                line_start = take_lines(todo, line_start, batch)
                first = end
            if tail:
                if len(tail) >= max_len:
                    skipping = True
                else:
                    pending, pending_len = [tail], len(tail)
    if batch.lines:
        batch.window = window(batch.end_offset)
        yield batch


def take_lines(lines: list[bytes], offset: int, batch: LineBatch) -> int:
    """Add ``lines`` (without their newlines; the first starts at file offset ``offset``)
    to ``batch``, rejecting those over the size limit and skipping blank ones, and
    return the offset just after the last one."""
    texts, offsets, lengths = batch.texts, batch.offsets, batch.lengths
    max_len = batch.limits.max_line_bytes
    for line in lines:
        length = len(line) + 1
        if length > max_len:
            batch.rejects.append(
                Reject(offset, length, "OVERSIZED", f"line of {length} bytes exceeds {max_len}")
            )
        elif line.strip():
            texts.append(line)
            offsets.append(offset)
            lengths.append(length)
        offset += length
    batch.lines += len(lines)
    batch.end_offset = offset
    return offset


def line_within(path: Path, start: int, stop: int, chunk: int = 64 * 1024) -> bool:
    """Whether ``path`` holds a newline in ``[start, stop)``: a complete line to read
    there (``False`` when it cannot be read now: the read itself will say why)."""
    try:
        with open_regular(path) as handle:
            handle.seek(start)
            while start < stop:
                data = handle.read(min(chunk, stop - start))
                if not data:
                    return False
                if b"\n" in data:
                    return True
                start += len(data)
    except OSError:
        return False
    return False
