"""Unit tests of transform/transform.py and transform/identity.py."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import polars as pl
import pyarrow as pa
import pytest

from agentlake.extract.rows import RowSink
from agentlake.extract.schema import EVENT_KINDS, RAW_EVENT_SCHEMA, RAW_USAGE_SCHEMA
from agentlake.transform.identity import stable_ids, with_id
from agentlake.transform.transform import (
    event_kind,
    normalize_events,
    normalize_usage,
    utc_timestamp,
)

TS = "2025-03-01T10:00:00.000Z"


def parse_ts(values: list[str | None]) -> list[datetime | None]:
    """``utc_timestamp`` applied to ``values``."""
    frame = pl.DataFrame({"t": values}, schema={"t": pl.String})
    return frame.select(utc_timestamp(pl.col("t"))).to_series().to_list()


def kinds(pairs: list[tuple[str | None, str | None]]) -> list[str]:
    """``event_kind`` of each ``(block_type, role)``."""
    frame = pl.DataFrame(
        {"b": [b for b, _ in pairs], "r": [r for _, r in pairs]},
        schema={"b": pl.String, "r": pl.String},
    )
    return frame.select(event_kind(pl.col("b"), pl.col("r"))).to_series().to_list()


def event_table(rows: list[dict[str, Any]]) -> pa.Table:
    """A RAW_EVENT_SCHEMA table; unspecified columns take plausible defaults."""
    defaults: dict[str, Any] = {
        "session_id": "s1",
        "native_id": "n1",
        "block_index": 0,
        "ts": TS,
        "block_type": "text",
        "role": "user",
        "model": None,
        "text": "hi",
        "tool_name": None,
        "tool_call_id": None,
        "tool_input": None,
        "is_error": None,
        "is_sidechain": False,
        "source_offset": 0,
    }
    full = [{**defaults, **row} for row in rows]
    return pa.Table.from_pylist(full, schema=RAW_EVENT_SCHEMA)


def usage_table(rows: list[dict[str, Any]]) -> pa.Table:
    """A RAW_USAGE_SCHEMA table built through :class:`RowSink`."""
    sink = RowSink()
    for row in rows:
        args: dict[str, Any] = {
            "session_id": "s1",
            "message_id": "msg_1",
            "request_id": "req_1",
            "native_id": "n1",
            "ts": TS,
            "model": "claude-sonnet-4",
            "input_tokens": 0,
            "cache_write_tokens": 0,
            "cache_write_1h_tokens": 0,
            "cache_read_tokens": 0,
            "output_tokens": 0,
            "reasoning_tokens": 0,
            "is_sidechain": False,
            "offset": 0,
        }
        args.update(row)
        sink.usage(**args)
    table = sink.build().usage
    assert table.schema == RAW_USAGE_SCHEMA
    return table


# -- utc_timestamp ---------------------------------------------------------------------


def test_utc_timestamp_z_suffix() -> None:
    assert parse_ts(["2025-01-02T03:04:05Z"]) == [datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)]


def test_utc_timestamp_milliseconds_and_microseconds() -> None:
    got = parse_ts(["2025-01-02T03:04:05.123Z", "2025-01-02T03:04:05.123456Z"])
    assert got == [
        datetime(2025, 1, 2, 3, 4, 5, 123000, tzinfo=UTC),
        datetime(2025, 1, 2, 3, 4, 5, 123456, tzinfo=UTC),
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2025-01-02T05:04:05+02:00", datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)),
        ("2025-01-02T01:04:05.250-02:00", datetime(2025, 1, 2, 3, 4, 5, 250000, tzinfo=UTC)),
        ("2025-01-02T03:04:05+00:00", datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)),
        ("2025-01-01T23:30:00-05:30", datetime(2025, 1, 2, 5, 0, 0, tzinfo=UTC)),
    ],
)
def test_utc_timestamp_offsets_convert_to_utc(text: str, expected: datetime) -> None:
    assert parse_ts([text]) == [expected]


def test_utc_timestamp_reads_a_lowercase_z_and_an_offset_without_colon() -> None:
    got = parse_ts(["2025-01-02T03:04:05z", "2025-01-02T05:04:05+0200"])
    assert got == [datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)] * 2


@pytest.mark.parametrize(
    "text",
    ["garbage", "", "2025-13-45T99:99:99Z", "yesterday", "2025-01-02T03:04:05", None],
)
def test_utc_timestamp_garbage_is_null(text: str | None) -> None:
    assert parse_ts([text]) == [None]


def test_utc_timestamp_mixed_column_keeps_rows_aligned() -> None:
    got = parse_ts(["2025-01-02T03:04:05Z", "nope", "2025-01-02T05:04:05+02:00"])
    assert got[0] == got[2] == datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert got[1] is None


def test_utc_timestamp_dtype_is_utc_microseconds() -> None:
    frame = pl.DataFrame({"t": ["2025-01-02T03:04:05Z"]})
    dtype = frame.select(utc_timestamp(pl.col("t"))).to_series().dtype
    assert dtype == pl.Datetime("us", "UTC")


# -- event_kind ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("block_type", "role", "kind"),
    [
        ("text", "user", "prompt"),
        ("text", "assistant", "response"),
        ("text", "system", "system"),
        ("text", None, "system"),
        ("image", "user", "prompt"),
        ("image", "assistant", "response"),
        ("image", None, "system"),
        ("thinking", "assistant", "reasoning"),
        ("thinking", None, "reasoning"),
        ("tool_use", "assistant", "tool_call"),
        ("tool_use", None, "tool_call"),
        ("tool_result", "user", "tool_result"),
        ("tool_result", None, "tool_result"),
        ("summary", None, "summary"),
        ("summary", "assistant", "summary"),
        ("system", "system", "system"),
        ("system", "user", "system"),
        ("something_new", "user", "system"),
        (None, None, "system"),
    ],
)
def test_event_kind(block_type: str | None, role: str | None, kind: str) -> None:
    assert kinds([(block_type, role)]) == [kind]
    assert kind in EVENT_KINDS


# -- identity --------------------------------------------------------------------------


def test_stable_ids_are_deterministic_and_distinct() -> None:
    first = stable_ids("claude", ["a", "a", "b"], [1, 2, 1])
    again = stable_ids("claude", ["a", "a", "b"], [1, 2, 1])
    assert first == again
    assert len(set(first)) == 3
    assert all(len(i) == 32 and int(i, 16) >= 0 for i in first)


def test_stable_ids_depend_on_provider() -> None:
    assert stable_ids("claude", ["a"]) != stable_ids("codex", ["a"])


def test_stable_ids_null_hashes_as_empty_string() -> None:
    assert stable_ids("p", ["x"], [None]) == stable_ids("p", ["x"], [""])


def test_stable_ids_parts_are_separated() -> None:
    assert stable_ids("p", ["ab"], ["c"]) != stable_ids("p", ["a"], ["bc"])


def test_with_id_adds_a_string_column() -> None:
    frame = pl.DataFrame({"a": ["x", "y"], "b": [1, 2]})
    out = with_id(frame, "id", "p", ["a", "b"])
    assert out.columns == ["a", "b", "id"]
    assert out.get_column("id").to_list() == stable_ids("p", ["x", "y"], [1, 2])


# -- normalize_events ------------------------------------------------------------------


def test_event_id_is_deterministic() -> None:
    raw = event_table([{"native_id": "u1"}, {"native_id": "a1", "role": "assistant"}])
    first = normalize_events(raw, "claude").column("event_id").to_pylist()
    again = normalize_events(raw, "claude").column("event_id").to_pylist()
    assert first == again
    assert len(set(first)) == 2


def test_event_id_ignores_time_offset_and_text() -> None:
    a = event_table([{"native_id": "u1", "ts": TS, "source_offset": 0, "text": "a"}])
    b = event_table(
        [{"native_id": "u1", "ts": "2030-01-01T00:00:00Z", "source_offset": 999, "text": "b"}]
    )
    assert normalize_events(a, "claude").column("event_id") == normalize_events(b, "claude").column(
        "event_id"
    )


def test_event_id_differs_by_session_block_and_provider() -> None:
    base = normalize_events(event_table([{}]), "claude").column("event_id")[0].as_py()
    other_session = normalize_events(event_table([{"session_id": "s2"}]), "claude")
    other_block = normalize_events(event_table([{"block_index": 1}]), "claude")
    other_native = normalize_events(event_table([{"native_id": "n2"}]), "claude")
    other_provider = normalize_events(event_table([{}]), "codex")
    others = [
        t.column("event_id")[0].as_py()
        for t in (other_session, other_block, other_native, other_provider)
    ]
    assert base not in others
    assert len(set(others)) == 4


def test_repeated_native_event_in_a_batch_is_kept_once() -> None:
    raw = event_table(
        [
            {"native_id": "u1", "source_offset": 0, "text": "first"},
            {"native_id": "u2", "source_offset": 10},
            {"native_id": "u1", "source_offset": 20, "text": "repeat"},
        ]
    )
    out = normalize_events(raw, "claude")
    assert out.num_rows == 2
    assert out.column("text").to_pylist() == ["first", "hi"]
    assert out.column("source_offset").to_pylist() == [0, 10]


def test_blocks_of_one_native_event_are_distinct_events() -> None:
    raw = event_table(
        [
            {"native_id": "a1", "block_index": 0, "block_type": "thinking", "role": "assistant"},
            {"native_id": "a1", "block_index": 1, "block_type": "text", "role": "assistant"},
            {
                "native_id": "a1",
                "block_index": 2,
                "block_type": "tool_use",
                "role": "assistant",
                "tool_name": "Bash",
                "tool_input": '{"command":"ls"}',
            },
        ]
    )
    out = normalize_events(raw, "claude")
    assert out.column("kind").to_pylist() == ["reasoning", "response", "tool_call"]
    assert len(set(out.column("event_id").to_pylist())) == 3


def test_events_text_and_tool_input_are_redacted() -> None:
    key = "sk-ant-api03-" + "Q" * 40
    raw = event_table(
        [
            {"native_id": "u1", "text": f"my key is {key}"},
            {
                "native_id": "a1",
                "block_type": "tool_use",
                "role": "assistant",
                "text": None,
                "tool_input": '{"command": "export GITHUB_TOKEN=ghp_' + "x" * 36 + '"}',
            },
        ]
    )
    out = normalize_events(raw, "claude")
    text = out.column("text").to_pylist()
    assert text == ["my key is [REDACTED:anthropic-key]", None]
    tool_input = out.column("tool_input").to_pylist()[1]
    assert "ghp_" not in tool_input
    assert "[REDACTED:github-token]" in tool_input


def test_events_shape() -> None:
    raw = event_table(
        [
            {
                "native_id": "u1",
                "source_offset": 42,
                "block_index": 3,
                "ts": "2025-01-02T05:04:05+02:00",
            }
        ]
    )
    out = normalize_events(raw, "claude")
    row = out.to_pylist()[0]
    assert row["provider"] == "claude"
    assert row["seq"] == 42 * 1000 + 3
    assert row["ts"] == datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert row["kind"] == "prompt"
    assert {
        "event_id",
        "session_id",
        "role",
        "model",
        "text",
        "tool_name",
        "tool_call_id",
        "tool_input",
        "is_error",
        "is_sidechain",
        "source_offset",
    } <= set(out.column_names)


def test_empty_events_batch() -> None:
    out = normalize_events(RAW_EVENT_SCHEMA.empty_table(), "claude")
    assert out.num_rows == 0
    assert "event_id" in out.column_names


# -- normalize_usage -------------------------------------------------------------------


def test_usage_keeps_the_largest_copy_per_message_and_request() -> None:
    raw = usage_table(
        [
            {"input_tokens": 10, "output_tokens": 1, "offset": 0},
            {"input_tokens": 10, "output_tokens": 50, "offset": 100},
            {"input_tokens": 10, "output_tokens": 20, "offset": 200},
        ]
    )
    out = normalize_usage(raw, "claude").to_pylist()
    assert len(out) == 1
    assert out[0]["output_tokens"] == 50
    assert out[0]["source_offset"] == 100
    assert out[0]["total_tokens"] == 60


def test_usage_ties_keep_the_earliest_copy() -> None:
    raw = usage_table([{"output_tokens": 5, "offset": 300}, {"output_tokens": 5, "offset": 100}])
    out = normalize_usage(raw, "claude").to_pylist()
    assert [r["source_offset"] for r in out] == [100]


def test_usage_different_request_ids_are_different_calls() -> None:
    raw = usage_table(
        [
            {"request_id": "req_1", "output_tokens": 5},
            {"request_id": "req_2", "output_tokens": 7},
            {"message_id": "msg_2", "request_id": "req_1", "output_tokens": 9},
        ]
    )
    out = normalize_usage(raw, "claude")
    assert sorted(out.column("output_tokens").to_pylist()) == [5, 7, 9]
    assert len(set(out.column("call_id").to_pylist())) == 3


def test_usage_same_message_in_other_session_is_the_same_call() -> None:
    # A transcript copied into another session (--resume) must not double count.
    raw = usage_table(
        [
            {"session_id": "s1", "output_tokens": 5},
            {"session_id": "s2", "output_tokens": 5, "offset": 9},
        ]
    )
    assert normalize_usage(raw, "claude").num_rows == 1


def test_usage_rows_without_message_id_are_never_merged() -> None:
    raw = usage_table(
        [
            {
                "message_id": None,
                "request_id": None,
                "native_id": "@0",
                "output_tokens": 5,
                "offset": 0,
            },
            {
                "message_id": None,
                "request_id": None,
                "native_id": "@80",
                "output_tokens": 5,
                "offset": 80,
            },
            {
                "message_id": None,
                "request_id": None,
                "native_id": "@160",
                "output_tokens": 9,
                "offset": 160,
            },
        ]
    )
    out = normalize_usage(raw, "codex")
    assert out.num_rows == 3
    assert sorted(out.column("source_offset").to_pylist()) == [0, 80, 160]


def test_usage_without_message_id_is_scoped_to_its_session() -> None:
    raw = usage_table(
        [
            {"session_id": "s1", "message_id": None, "native_id": "@0", "output_tokens": 5},
            {"session_id": "s2", "message_id": None, "native_id": "@0", "output_tokens": 5},
        ]
    )
    assert normalize_usage(raw, "codex").num_rows == 2


def test_usage_without_message_id_never_merges_with_one_that_has_it() -> None:
    raw = usage_table(
        [
            {"message_id": None, "request_id": "req_1", "native_id": "msg_1", "output_tokens": 5},
            {
                "message_id": "msg_1",
                "request_id": "req_1",
                "native_id": "msg_1",
                "output_tokens": 5,
            },
        ]
    )
    assert normalize_usage(raw, "claude").num_rows == 2


def test_usage_call_id_is_deterministic() -> None:
    a = usage_table([{"output_tokens": 1, "offset": 0, "ts": TS}])
    b = usage_table([{"output_tokens": 99, "offset": 500, "ts": "2026-01-01T00:00:00Z"}])
    assert normalize_usage(a, "claude").column("call_id") == normalize_usage(b, "claude").column(
        "call_id"
    )
    assert normalize_usage(a, "claude").column("call_id") != normalize_usage(a, "codex").column(
        "call_id"
    )


def test_usage_rows_with_unparsable_ts_are_dropped() -> None:
    raw = usage_table(
        [
            {"message_id": "m1", "ts": "not a time", "output_tokens": 100},
            {"message_id": "m2", "ts": None, "output_tokens": 100},
            {"message_id": "m3", "ts": TS, "output_tokens": 1},
        ]
    )
    out = normalize_usage(raw, "claude")
    assert out.column("message_id").to_pylist() == ["m3"]


def test_usage_unparsable_copy_does_not_win_over_a_dated_one() -> None:
    raw = usage_table([{"ts": "garbage", "output_tokens": 100}, {"ts": TS, "output_tokens": 1}])
    out = normalize_usage(raw, "claude").to_pylist()
    assert [r["output_tokens"] for r in out] == [1]


def test_usage_total_tokens() -> None:
    raw = usage_table(
        [
            {
                "input_tokens": 3,
                "cache_write_tokens": 500,
                "cache_write_1h_tokens": 200,
                "cache_read_tokens": 7000,
                "output_tokens": 40,
                "reasoning_tokens": 30,
            }
        ]
    )
    row = normalize_usage(raw, "claude").to_pylist()[0]
    assert row["total_tokens"] == 3 + 500 + 7000 + 40
    assert row["cache_write_1h_tokens"] == 200
    assert row["reasoning_tokens"] == 30


def test_usage_shape() -> None:
    raw = usage_table([{"ts": "2025-01-02T05:04:05.5+02:00", "offset": 77}])
    out = normalize_usage(raw, "claude")
    row = out.to_pylist()[0]
    assert row["provider"] == "claude"
    assert row["ts"] == datetime(2025, 1, 2, 3, 4, 5, 500000, tzinfo=UTC)
    assert row["source_offset"] == 77
    assert "_scope" not in out.column_names and "_key" not in out.column_names
    assert {
        "call_id",
        "session_id",
        "message_id",
        "request_id",
        "is_sidechain",
        "model",
        "total_tokens",
    } <= set(out.column_names)


def test_empty_usage_batch() -> None:
    out = normalize_usage(RAW_USAGE_SCHEMA.empty_table(), "claude")
    assert out.num_rows == 0
    assert "call_id" in out.column_names


def test_given_identity_is_kept_and_other_rows_derive_theirs() -> None:
    """Rows re-imported from an export keep their provider, ids and seq; rows of the
    same batch without one (a plain interchange file) get the batch's, and sessions of
    two providers sharing an id stay apart, each with its own title."""
    from agentlake.extract.rows import GivenIdentity, build_tagged
    from agentlake.transform.transform import transform_batch

    exported, plain = RowSink(), RowSink()
    for provider in ("codex", "cursor"):
        exported.event("s1", "n1", 0, "2026-05-01T10:00:00Z", "text", "user", "hi", 0,
                       given=GivenIdentity(provider, f"e-{provider}", 7))  # fmt: skip
        exported.usage("s1", None, None, "n1", "2026-05-01T10:00:00Z", "m", 1, 0, 0, 0, 2, 0,
                       False, 0, rank=9, given=GivenIdentity(provider, f"c-{provider}"))  # fmt: skip
        exported.session("s1", given_provider=provider, title=f"t-{provider}", title_rank=2,
                         hidden=provider == "cursor")  # fmt: skip
    plain.event("s2", "n2", 0, "2026-05-01T10:00:00Z", "text", "user", "yo", 3)
    plain.session("s2", title="plain", title_rank=1)
    rows = transform_batch(build_tagged([(exported, "a"), (plain, "b")]), provider="generic")
    events = rows.events.select(["event_id", "provider", "seq"]).to_pylist()
    assert events[:2] == [
        {"event_id": "e-codex", "provider": "codex", "seq": 7},
        {"event_id": "e-cursor", "provider": "cursor", "seq": 7},
    ]
    assert events[2]["provider"] == "generic" and events[2]["seq"] == 3000
    assert events[2]["event_id"] == stable_ids("generic", ["s2"], ["n2"], [0])[0]
    calls = rows.usage.select(["call_id", "provider", "merge_rank"]).to_pylist()
    assert sorted(c["call_id"] for c in calls) == ["c-codex", "c-cursor"]
    assert {c["merge_rank"] for c in calls} == {9}
    sessions = rows.sessions.select(["provider", "session_id", "title", "hidden"]).to_pylist()
    assert sorted(sessions, key=str) == sorted([
        {"provider": "codex", "session_id": "s1", "title": "t-codex", "hidden": False},
        {"provider": "cursor", "session_id": "s1", "title": "t-cursor", "hidden": True},
        {"provider": "generic", "session_id": "s2", "title": "plain", "hidden": False},
    ], key=str)  # fmt: skip
