"""Unit tests of the shared byte-offset JSONL reader (extract/jsonl.py)."""

from __future__ import annotations

import tracemalloc
from itertools import pairwise
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentlake.extract.digests import WINDOW_BYTES
from agentlake.extract.jsonl import (
    LineBatch,
    MiB,
    RecordLimits,
    Reject,
    deeper_than,
    nesting_depth,
    parse_line,
    read_lines,
)

DEFAULT_LIMITS = RecordLimits()


def write(path: Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` and return the path."""
    path.write_bytes(data)
    return path


def read_all(
    path: Path,
    *,
    start: int = 0,
    stop: int | None = None,
    limits: RecordLimits = DEFAULT_LIMITS,
    chunk_bytes: int = MiB,
    batch_lines: int = 50_000,
) -> list[LineBatch]:
    """Every batch of ``path`` from ``start`` to ``stop`` (default: its size)."""
    end = path.stat().st_size if stop is None else stop
    batches = read_lines(path, start=start, stop=end, limits=limits, chunk_bytes=chunk_bytes,
                         batch_lines=batch_lines)  # fmt: skip
    return list(batches)


def parsed_records(batches: list[LineBatch]) -> list[tuple[int, dict[str, object]]]:
    """Every record of ``batches`` with its offset, in order."""
    return [(o, r) for b in batches for r, o, _ in b.parsed() if isinstance(r, dict)]


def records(batches: list[LineBatch]) -> list[dict[str, object]]:
    """Every parsed record of ``batches``, in order."""
    return [r for _, r in parsed_records(batches)]


def record_offsets(batches: list[LineBatch]) -> list[int]:
    """The offset of every parsed record of ``batches``, in order."""
    return [o for o, _ in parsed_records(batches)]


def rejects(batches: list[LineBatch]) -> list[Reject]:
    """Every reject of ``batches`` (of reading and of parsing), in order."""
    return [
        reject
        for b in batches
        for reject in sorted(
            [*b.rejects, *(r for r, _, _ in b.parsed() if isinstance(r, Reject))],
            key=lambda r: r.offset,
        )
    ]


def end_offset(batches: list[LineBatch], default: int = 0) -> int:
    """Where the last batch ends (``default`` when nothing was consumed)."""
    return batches[-1].end_offset if batches else default


def deep(depth: int) -> bytes:
    """A JSON object nested ``depth`` levels deep (the outer object counts as one)."""
    return b'{"a":' + b"[" * (depth - 1) + b"1" + b"]" * (depth - 1) + b"}"


LINES = [b'{"n":0}', b'{"n":1,"text":"hello world"}', b'{"n":2,"nested":{"k":[1,2,3]}}',
         b'{"n":3,"s":"caf\xc3\xa9"}', b'{"n":4}']  # fmt: skip


# -- offsets ---------------------------------------------------------------------------


@pytest.mark.parametrize("chunk_bytes", [1, 2, 3, 7, 16, 1024, MiB])
def test_offsets_are_exact_for_every_chunk_size(tmp_path: Path, chunk_bytes: int) -> None:
    data = b"\n".join(LINES) + b"\n"
    path = write(tmp_path / "s.jsonl", data)
    batches = read_all(path, chunk_bytes=chunk_bytes)
    got = records(batches)
    assert [r["n"] for r in got] == [0, 1, 2, 3, 4]
    offsets = [o for b in batches for o in b.offsets]
    lengths = [n for b in batches for n in b.lengths]
    expected_offset = 0
    for line, offset, length in zip(LINES, offsets, lengths, strict=True):
        assert offset == expected_offset
        assert length == len(line) + 1
        assert data[offset : offset + length] == line + b"\n"
        expected_offset += length
    assert end_offset(batches) == len(data)
    assert rejects(batches) == []


@pytest.mark.parametrize("chunk_bytes", [1, 7, 64, 256, MiB])
@pytest.mark.parametrize("start_line", [0, 40])
def test_a_batch_window_is_the_bytes_before_its_end_or_none(
    tmp_path: Path, chunk_bytes: int, start_line: int
) -> None:
    """The window a batch carries is exactly the ≤ WINDOW_BYTES bytes of the file
    before its end (the checkpoint digests it instead of reading them again), or
    ``None`` when the reader no longer held them all, never other bytes."""
    lines = [b'{"n":%d,"pad":"%s"}' % (i, b"x" * (i * 37 % 3000)) for i in range(120)]
    data = b"\n".join(lines) + b"\n" + b'{"torn":'
    path = write(tmp_path / "s.jsonl", data)
    start = sum(len(line) + 1 for line in lines[:start_line])
    seen = 0
    for batch_lines in (1, 7, 50_000):
        batches = read_all(path, start=start, chunk_bytes=chunk_bytes, batch_lines=batch_lines)
        for batch in batches:
            if batch.window is not None:
                seen += 1
                low = max(0, batch.end_offset - WINDOW_BYTES)
                assert low >= start and batch.window == data[low : batch.end_offset]
    if chunk_bytes >= WINDOW_BYTES:
        assert seen


@pytest.mark.parametrize("chunk_bytes", [1, 5, 64])
def test_end_offset_is_always_just_after_a_newline(tmp_path: Path, chunk_bytes: int) -> None:
    data = b"\n".join(LINES) + b"\n" + b'{"torn":'
    path = write(tmp_path / "s.jsonl", data)
    for batch in read_all(path, chunk_bytes=chunk_bytes, batch_lines=1):
        assert batch.end_offset > 0
        assert data[batch.end_offset - 1 : batch.end_offset] == b"\n"


def test_lines_split_across_chunks_parse_intact(tmp_path: Path) -> None:
    long_text = "x" * 50
    data = b'{"t":"' + long_text.encode() + b'"}\n{"t":"short"}\n'
    path = write(tmp_path / "s.jsonl", data)
    got = records(read_all(path, chunk_bytes=4))
    assert got == [{"t": long_text}, {"t": "short"}]


def test_multibyte_utf8_split_across_chunks(tmp_path: Path) -> None:
    data = '{"t":"ünïcødé — 漢字 🙂"}\n'.encode()
    path = write(tmp_path / "s.jsonl", data)
    for chunk_bytes in (1, 2, 3):
        batches = read_all(path, chunk_bytes=chunk_bytes)
        assert records(batches) == [{"t": "ünïcødé — 漢字 🙂"}]
        assert rejects(batches) == []


# -- torn tail, blank lines --------------------------------------------------------------


def test_torn_last_line_is_not_consumed(tmp_path: Path) -> None:
    good = b'{"n":1}\n'
    path = write(tmp_path / "s.jsonl", good + b'{"n":2,"par')
    batches = read_all(path, chunk_bytes=3)
    assert records(batches) == [{"n": 1}]
    assert rejects(batches) == []
    assert end_offset(batches) == len(good)


def test_torn_tail_is_read_once_completed(tmp_path: Path) -> None:
    good = b'{"n":1}\n'
    path = write(tmp_path / "s.jsonl", good + b'{"n":2,"par')
    first = read_all(path)
    committed = end_offset(first)
    with path.open("ab") as fh:
        fh.write(b't":true}\n{"n":3}\n')
    second = read_all(path, start=committed)
    assert records(second) == [{"n": 2, "part": True}, {"n": 3}]
    assert second[0].start_offset == committed == second[0].offsets[0]
    assert end_offset(second) == path.stat().st_size


def test_only_a_torn_line_yields_nothing(tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", b'{"n":1')
    assert read_all(path) == []


def test_empty_range_yields_nothing(tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", b'{"n":1}\n')
    assert read_all(path, start=8, stop=8) == []


def test_blank_lines_are_consumed_without_records_or_rejects(tmp_path: Path) -> None:
    data = b'\n{"n":1}\n\n   \n\r\n{"n":2}\n\n'
    path = write(tmp_path / "s.jsonl", data)
    batches = read_all(path, chunk_bytes=3)
    assert records(batches) == [{"n": 1}, {"n": 2}]
    assert rejects(batches) == []
    assert record_offsets(batches) == [1, 16]
    assert end_offset(batches) == len(data)
    assert sum(b.lines for b in batches) == 7


def test_only_blank_lines_are_consumed(tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", b"\n\n\n")
    batches = read_all(path)
    assert records(batches) == []
    assert end_offset(batches) == 3


# -- rejects ---------------------------------------------------------------------------


def test_parse_line_accepts_an_object() -> None:
    assert parse_line(b'{"a":[1,{"b":null}]}', RecordLimits()) == {"a": [1, {"b": None}]}


@pytest.mark.parametrize("line", [b'{"a":', b"not json", b'{"a":1}}', b"{'a':1}"])
def test_parse_line_invalid_json_is_malformed(line: bytes) -> None:
    result = parse_line(line, RecordLimits())
    assert isinstance(result, tuple)
    assert result[0] == "MALFORMED"


@pytest.mark.parametrize("line", [b"42", b'"text"', b"[1,2]", b"null", b"true"])
def test_parse_line_non_object_is_malformed(line: bytes) -> None:
    result = parse_line(line, RecordLimits())
    assert isinstance(result, tuple)
    assert result[0] == "MALFORMED"


@pytest.mark.parametrize("line", [b'{"a":"\xff\xfe"}', b'{"a":"caf\xe9"}', b'{"a":"\xc3"}'])
def test_parse_line_invalid_utf8_is_bad_encoding(line: bytes) -> None:
    result = parse_line(line, RecordLimits())
    assert isinstance(result, tuple)
    assert result[0] == "BAD_ENCODING"


def test_parse_line_100_deep_is_too_deep() -> None:
    result = parse_line(deep(100), RecordLimits())
    assert isinstance(result, tuple)
    assert result[0] == "TOO_DEEP"


def test_parse_line_60_deep_passes() -> None:
    result = parse_line(deep(60), RecordLimits())
    assert isinstance(result, dict)
    assert set(result) == {"a"}


def test_parse_line_depth_limit_is_inclusive() -> None:
    assert isinstance(parse_line(deep(64), RecordLimits()), dict)
    result = parse_line(deep(65), RecordLimits())
    assert isinstance(result, tuple) and result[0] == "TOO_DEEP"


def test_parse_line_brackets_inside_strings_do_not_count() -> None:
    line = b'{"a":"' + b"[{" * 100 + b'","b":"\\"[[[["}'
    assert nesting_depth(line) == 1
    assert parse_line(line, RecordLimits()) == {"a": "[{" * 100, "b": '"[[[['}


def test_parse_line_many_shallow_brackets_pass() -> None:
    line = b'{"a":[' + b",".join([b"[1]"] * 200) + b"]}"
    assert nesting_depth(line) == 3
    assert isinstance(parse_line(line, RecordLimits()), dict)


def test_parse_line_too_deep_wins_over_malformed_and_shape() -> None:
    # A deep text cut short, a deep top-level array and one past orjson's own recursion
    # limit (1024) are all too deep, as they were when depth was measured first.
    limits = RecordLimits()
    for line in (deep(100)[:-3], b"[" * 80 + b"]" * 80, deep(2000)):
        result = parse_line(line, limits)
        assert isinstance(result, tuple) and result[0] == "TOO_DEEP", line[:20]
    assert parse_line(b"[" * 10 + b"]" * 10, limits)[0] == "MALFORMED"  # type: ignore[index]


def test_parse_line_reports_the_text_depth() -> None:
    result = parse_line(deep(70), RecordLimits())
    assert result == ("TOO_DEEP", "nesting depth 70 exceeds 64")


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-9, 9) | st.text(alphabet='[]{}\\"ab', max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(alphabet="[]{}ab", max_size=3), inner, max_size=3)
    ),
    max_leaves=40,
)


@settings(max_examples=300, deadline=None)
@given(value=st.dictionaries(st.just("k"), _JSON, min_size=1), limit=st.integers(1, 8))
def test_deeper_than_agrees_with_the_text_depth(value: dict[str, object], limit: int) -> None:
    assert deeper_than(value, limit) == (nesting_depth(orjson.dumps(value)) > limit)


@pytest.mark.parametrize(
    ("line", "depth"),
    [(b"1", 0), (b"{}", 1), (b'{"a":[]}', 2), (b"[[1],[2,[3]]]", 3), (b'{"a":"}}}]]"}', 1)],
)
def test_nesting_depth(line: bytes, depth: int) -> None:
    assert nesting_depth(line) == depth


def test_each_reject_reason_in_a_file(tmp_path: Path) -> None:
    lines = [b'{"ok":1}', b'{"bad":', b"42", b'{"enc":"\xff"}', deep(100), deep(60), b'{"ok":2}']
    data = b"\n".join(lines) + b"\n"
    path = write(tmp_path / "s.jsonl", data)
    batches = read_all(path, chunk_bytes=5)
    assert [r.get("ok") for r in records(batches)] == [1, None, 2]
    got = rejects(batches)
    assert [r.reason for r in got] == ["MALFORMED", "MALFORMED", "BAD_ENCODING", "TOO_DEEP"]
    for reject, line in zip(got, lines[1:5], strict=True):
        assert data[reject.offset : reject.offset + reject.length] == line + b"\n"
        assert reject.detail
    assert end_offset(batches) == len(data)


def test_rejected_lines_are_content_free(tmp_path: Path) -> None:
    secret = b"sk-ant-api03-SECRETSECRETSECRET"
    path = write(tmp_path / "s.jsonl", b'{"k":"' + secret + b'"\n')
    (reject,) = rejects(read_all(path))
    assert reject.reason == "MALFORMED"
    assert secret.decode() not in reject.detail


# -- oversized -------------------------------------------------------------------------


def _oversized_file(tmp_path: Path, size: int) -> tuple[Path, bytes, bytes, bytes]:
    first, last = b'{"n":1}\n', b'{"n":2}\n'
    long = b'{"x":"' + b"a" * (size - 9) + b'"}\n'
    return write(tmp_path / "s.jsonl", first + long + last), first, long, last


@pytest.mark.parametrize("chunk_bytes", [MiB, 64 * 1024, 3 * MiB + 17])
def test_oversized_line_between_good_lines(tmp_path: Path, chunk_bytes: int) -> None:
    path, first, long, _ = _oversized_file(tmp_path, 5 * MiB)
    assert len(long) == 5 * MiB
    batches = read_all(path, chunk_bytes=chunk_bytes)
    assert records(batches) == [{"n": 1}, {"n": 2}]
    assert record_offsets(batches) == [0, len(first) + len(long)]
    (reject,) = rejects(batches)
    assert reject.reason == "OVERSIZED"
    assert (reject.offset, reject.length) == (len(first), len(long))
    assert end_offset(batches) == path.stat().st_size


def test_oversized_line_spanning_many_chunks(tmp_path: Path) -> None:
    path, first, long, _ = _oversized_file(tmp_path, 11 * MiB + 123)
    batches = read_all(path, chunk_bytes=MiB)
    assert records(batches) == [{"n": 1}, {"n": 2}]
    (reject,) = rejects(batches)
    assert (reject.offset, reject.length, reject.reason) == (len(first), len(long), "OVERSIZED")
    assert end_offset(batches) == path.stat().st_size


def test_oversized_line_at_start_of_file(tmp_path: Path) -> None:
    long = b"z" * 300 + b"\n"
    path = write(tmp_path / "s.jsonl", long + b'{"n":1}\n')
    batches = read_all(path, chunk_bytes=16, limits=RecordLimits(max_line_bytes=100))
    assert records(batches) == [{"n": 1}]
    assert [(r.offset, r.length, r.reason) for r in rejects(batches)] == [(0, 301, "OVERSIZED")]


@pytest.mark.parametrize("chunk_bytes", [1, 7, 32, 100, 101, 1000])
def test_line_length_limit_boundary(tmp_path: Path, chunk_bytes: int) -> None:
    limits = RecordLimits(max_line_bytes=100)
    fits = b'{"x":"' + b"a" * (100 - 9) + b'"}\n'  # exactly 100 bytes with its newline
    over = b'{"x":"' + b"a" * (101 - 9) + b'"}\n'  # 101 bytes
    assert (len(fits), len(over)) == (100, 101)
    path = write(tmp_path / "s.jsonl", fits + over + fits)
    batches = read_all(path, chunk_bytes=chunk_bytes, limits=limits)
    assert record_offsets(batches) == [0, 201]
    assert [(r.offset, r.length, r.reason) for r in rejects(batches)] == [(100, 101, "OVERSIZED")]
    assert end_offset(batches) == 301


def test_several_oversized_lines_in_a_row(tmp_path: Path) -> None:
    limits = RecordLimits(max_line_bytes=50)
    longs = [b"a" * 120 + b"\n", b"b" * 51 + b"\n", b"c" * 500 + b"\n"]
    data = b'{"n":0}\n' + b"".join(longs) + b'{"n":1}\n'
    path = write(tmp_path / "s.jsonl", data)
    batches = read_all(path, chunk_bytes=13, limits=limits)
    assert records(batches) == [{"n": 0}, {"n": 1}]
    got = [(r.offset, r.length) for r in rejects(batches)]
    assert got == [(8, 121), (129, 52), (181, 501)]
    assert all(r.reason == "OVERSIZED" for r in rejects(batches))
    assert end_offset(batches) == len(data)


def test_oversized_torn_tail_is_neither_rejected_nor_consumed(tmp_path: Path) -> None:
    good = b'{"n":1}\n'
    path = write(tmp_path / "s.jsonl", good + b'{"x":"' + b"a" * (5 * MiB))
    batches = read_all(path)
    assert records(batches) == [{"n": 1}]
    assert rejects(batches) == []
    assert end_offset(batches) == len(good)


def test_oversized_torn_tail_alone_yields_nothing(tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", b"a" * 500)
    batches = read_all(path, chunk_bytes=16, limits=RecordLimits(max_line_bytes=100))
    assert batches == []


def test_oversized_tail_is_rejected_once_completed(tmp_path: Path) -> None:
    limits = RecordLimits(max_line_bytes=100)
    good = b'{"n":1}\n'
    path = write(tmp_path / "s.jsonl", good + b"a" * 300)
    committed = end_offset(read_all(path, chunk_bytes=16, limits=limits))
    assert committed == len(good)
    with path.open("ab") as fh:
        fh.write(b"\n" + b'{"n":2}\n')
    batches = read_all(path, start=committed, chunk_bytes=16, limits=limits)
    assert [(r.offset, r.length, r.reason) for r in rejects(batches)] == [(8, 301, "OVERSIZED")]
    assert records(batches) == [{"n": 2}]


# -- bounds and batches ----------------------------------------------------------------


def test_start_and_stop_bound_the_read(tmp_path: Path) -> None:
    data = b"\n".join(LINES) + b"\n"
    path = write(tmp_path / "s.jsonl", data)
    starts = [0]
    for line in LINES:
        starts.append(starts[-1] + len(line) + 1)
    # From the start of line 1 to the middle of line 3: lines 1 and 2 only.
    batches = read_all(path, start=starts[1], stop=starts[3] + 3, chunk_bytes=4)
    assert [r["n"] for r in records(batches)] == [1, 2]
    assert batches[0].start_offset == starts[1]
    assert end_offset(batches) == starts[3]


def test_stop_exactly_after_a_newline(tmp_path: Path) -> None:
    data = b"\n".join(LINES) + b"\n"
    path = write(tmp_path / "s.jsonl", data)
    stop = len(LINES[0]) + 1 + len(LINES[1]) + 1
    batches = read_all(path, stop=stop)
    assert [r["n"] for r in records(batches)] == [0, 1]
    assert end_offset(batches) == stop


def test_stop_past_end_of_file(tmp_path: Path) -> None:
    data = b"\n".join(LINES) + b"\n"
    path = write(tmp_path / "s.jsonl", data)
    batches = read_all(path, stop=len(data) + 1000)
    assert len(records(batches)) == len(LINES)
    assert end_offset(batches) == len(data)


@pytest.mark.parametrize("chunk_bytes", [3, 40, 97])
def test_batch_lines_splits_into_contiguous_batches(tmp_path: Path, chunk_bytes: int) -> None:
    lines = [b'{"n":%d}' % i for i in range(50)] + [b"", b"oops"]
    data = b"\n".join(lines) + b"\n"
    path = write(tmp_path / "s.jsonl", data)
    batches = read_all(path, chunk_bytes=chunk_bytes, batch_lines=7)
    assert len(batches) >= 3
    assert batches[0].start_offset == 0
    for prev, nxt in pairwise(batches):
        assert nxt.start_offset == prev.end_offset
    for batch in batches:
        assert batch.start_offset < batch.end_offset
        assert all(batch.start_offset <= o < batch.end_offset for o in batch.offsets)
        assert all(batch.start_offset <= r.offset < batch.end_offset for r in batch.rejects)
    assert [r["n"] for r in records(batches)] == list(range(50))
    assert [r.reason for r in rejects(batches)] == ["MALFORMED"]
    assert end_offset(batches) == len(data)
    assert sum(b.lines for b in batches) == len(lines)


def test_small_batches_with_tiny_chunks_hold_at_most_batch_lines(tmp_path: Path) -> None:
    data = b"".join(b'{"n":%d}\n' % i for i in range(20))
    path = write(tmp_path / "s.jsonl", data)
    # With chunks shorter than a line, each chunk completes at most one line.
    batches = read_all(path, chunk_bytes=4, batch_lines=3)
    assert [b.lines for b in batches] == [3, 3, 3, 3, 3, 3, 2]


@pytest.mark.parametrize("chunk_bytes", [5, 13, 64, MiB])
@pytest.mark.parametrize("batch_lines", [1, 3, 4, 100])
def test_batches_never_exceed_batch_lines(
    tmp_path: Path, chunk_bytes: int, batch_lines: int
) -> None:
    limits = RecordLimits(max_line_bytes=40)
    lines = [b'{"n":%d}' % i for i in range(30)]
    lines[4] = lines[17] = b'{"x":"' + b"a" * 60 + b'"}'  # oversized
    lines[9] = b""
    lines[22] = b"oops"
    data = b"\n".join(lines) + b"\n"
    path = write(tmp_path / "s.jsonl", data)
    batches = read_all(path, chunk_bytes=chunk_bytes, batch_lines=batch_lines, limits=limits)
    full, rest = divmod(30, batch_lines)
    assert [b.lines for b in batches] == [batch_lines] * full + [rest] * bool(rest)
    for prev, nxt in pairwise(batches):
        assert nxt.start_offset == prev.end_offset
    assert [r["n"] for r in records(batches)] == [i for i in range(30) if i not in (4, 9, 17, 22)]
    assert [r.reason for r in rejects(batches)] == ["OVERSIZED", "OVERSIZED", "MALFORMED"]
    assert end_offset(batches) == len(data)


_LINE = st.one_of(
    st.integers(0, 10**6).map(lambda n: b'{"n":%d}' % n),
    st.integers(0, 120).map(lambda k: b'{"x":"' + b"a" * k + b'"}'),
    st.sampled_from([b"", b"  ", b"oops", b"[1]", b'{"e":"\xff"}']),
)


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    lines=st.lists(_LINE, max_size=25),
    torn=st.sampled_from([b"", b'{"t":', b"b" * 90]),
    chunk_bytes=st.integers(1, 200),
    batch_lines=st.integers(1, 8),
    max_line_bytes=st.integers(10, 100),
)
def test_reader_matches_a_whole_file_split(
    tmp_path: Path,
    lines: list[bytes],
    torn: bytes,
    chunk_bytes: int,
    batch_lines: int,
    max_line_bytes: int,
) -> None:
    limits = RecordLimits(max_line_bytes=max_line_bytes)
    data = b"".join(line + b"\n" for line in lines) + torn
    path = write(tmp_path / "p.jsonl", data)
    batches = read_all(path, chunk_bytes=chunk_bytes, batch_lines=batch_lines, limits=limits)
    expected_records, expected_rejects, offset = [], [], 0
    for line in lines:
        length = len(line) + 1
        if length > max_line_bytes:
            expected_rejects.append((offset, length, "OVERSIZED"))
        elif line.strip():
            parsed = parse_line(line, limits)
            if isinstance(parsed, dict):
                expected_records.append((offset, parsed))
            else:
                expected_rejects.append((offset, length, parsed[0]))
        offset += length
    assert parsed_records(batches) == expected_records
    assert [(r.offset, r.length, r.reason) for r in rejects(batches)] == expected_rejects
    assert end_offset(batches) == offset
    assert all(0 < b.lines <= batch_lines for b in batches)
    assert sum(b.lines for b in batches) == len(lines)
    for prev, nxt in pairwise(batches):
        assert nxt.start_offset == prev.end_offset


# -- memory ----------------------------------------------------------------------------


def _peak_reading(path: Path) -> tuple[int, list[LineBatch]]:
    tracemalloc.start()
    try:
        batches = read_all(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak, batches


def _huge_line_file(tmp_path: Path, size: int) -> Path:
    path = tmp_path / "huge.jsonl"
    with path.open("wb") as fh:
        fh.write(b'{"n":1}\n{"x":"')
        block = b"a" * MiB
        for _ in range(size // MiB):
            fh.write(block)
        fh.write(b'"}\n{"n":2}\n')
    return path


def test_memory_of_a_20_mib_line_stays_well_under_its_size(tmp_path: Path) -> None:
    path = _huge_line_file(tmp_path, 20 * MiB)
    peak, batches = _peak_reading(path)
    assert [r.reason for r in rejects(batches)] == ["OVERSIZED"]
    assert peak < 8 * MiB, f"peak traced memory {peak / MiB:.1f} MiB"


def test_memory_of_an_oversized_line_does_not_grow_with_its_length(tmp_path: Path) -> None:
    (tmp_path / "small").mkdir()
    (tmp_path / "big").mkdir()
    small_peak, small = _peak_reading(_huge_line_file(tmp_path / "small", 6 * MiB))
    big_peak, big = _peak_reading(_huge_line_file(tmp_path / "big", 24 * MiB))
    assert records(small) == records(big) == [{"n": 1}, {"n": 2}]
    assert big_peak < 12 * MiB, f"peak traced memory {big_peak / MiB:.1f} MiB"
    assert big_peak < small_peak + MiB
