"""Redaction across the chunks of a streamed message (transform/streams.py)."""

from __future__ import annotations

import re
from typing import Any

import polars as pl
import pyarrow as pa
import pytest

from agentlake.extract.rows import RawTables
from agentlake.extract.schema import RAW_EVENT_SCHEMA
from agentlake.transform.redact import RULES, redact
from agentlake.transform.streams import WINDOW, join_pair, redact_across_chunks
from agentlake.transform.transform import normalize_events, stream_context, transform_batch
from tests.transform.test_redact import CASES, PRIVATE_KEY

SPLIT = "ghp_CANARYsplit0123456789abcdefghijkl"


def chunk(text: str | None, **overrides: Any) -> dict[str, Any]:
    """One raw event row: an assistant text block of session s1, unless overridden."""
    row: dict[str, Any] = {name: None for name in RAW_EVENT_SCHEMA.names}
    row.update(session_id="s1", block_index=0, ts="2026-05-01T09:00:00Z",
               block_type="text", role="assistant", text=text, source_offset=0)  # fmt: skip
    row.update(overrides)
    return row


def raw_events(rows: list[dict[str, Any]]) -> pa.Table:
    for i, row in enumerate(rows):  # distinct identities, in source order
        row["native_id"] = row["native_id"] or f"n{i}"
        row["source_offset"] = i
    return pa.Table.from_pylist(rows, schema=RAW_EVENT_SCHEMA)


def stored(rows: list[dict[str, Any]]) -> list[str | None]:
    """The texts ``normalize_events`` stores for ``rows``."""
    texts: list[str | None] = (
        normalize_events(raw_events(rows), "claude").column("text").to_pylist()
    )
    return texts


def fragments(secret: str, size: int = 8) -> set[str]:
    return {secret[i : i + size] for i in range(len(secret) - size + 1)}


def leaked(secret: str, texts: list[str | None]) -> set[str]:
    joined = "\x00".join(t or "" for t in texts)
    return {f for f in fragments(secret) if f in joined}


@pytest.mark.parametrize(
    ("cls", "text", "secret"), CASES, ids=[f"{c}-{i}" for i, (c, _, _) in enumerate(CASES)]
)
def test_a_secret_cut_anywhere_across_two_chunks_is_redacted(
    cls: str, text: str, secret: str
) -> None:
    start = text.index(secret)
    for cut in range(start + 1, start + len(secret)):
        out = stored([chunk(text[:cut]), chunk(text[cut:])])
        assert not leaked(secret, out), (cls, cut, out)
        assert f"[REDACTED:{cls}]" in "".join(t or "" for t in out)


def test_the_marker_ends_the_first_chunk_and_the_rest_stays() -> None:
    first, second = stored([chunk("use gh"), chunk(SPLIT[2:] + " now")])
    assert (first, second) == ("use [REDACTED:github-token]", " now")


def test_three_chunks_cutting_one_secret_twice() -> None:
    out = stored([chunk("token gh"), chunk(SPLIT[2:12]), chunk(SPLIT[12:] + " ok")])
    assert not leaked(SPLIT, out)
    assert "".join(t or "" for t in out) == "token [REDACTED:github-token] ok"


def test_a_private_key_cut_in_its_body_is_redacted_whole() -> None:
    cut = len(PRIVATE_KEY) // 2
    out = stored([chunk("key:\n" + PRIVATE_KEY[:cut]), chunk(PRIVATE_KEY[cut:] + "\nthanks")])
    assert out == ["key:\n[REDACTED:private-key]", "\nthanks"]


@pytest.mark.parametrize(
    "second",
    [
        {"session_id": "s2"},  # another session
        {"block_type": "tool_result", "role": "user"},  # not prose
        {"role": "user"},  # another speaker
        {"block_type": "thinking"},  # another block type
    ],
)
def test_only_continuing_chunks_are_joined(second: dict[str, Any]) -> None:
    out = stored([chunk("use gh"), chunk(SPLIT[2:], **second)])
    assert out == ["use gh", SPLIT[2:]]


def test_chunks_of_different_sources_are_not_joined() -> None:
    frame = pl.from_arrow(raw_events([chunk("use gh"), chunk(SPLIT[2:])]))
    assert isinstance(frame, pl.DataFrame)
    frame = frame.with_columns(pl.Series("source_id", ["a", "b"]))
    assert redact_across_chunks(frame, "source_id")["text"].to_list() == ["use gh", SPLIT[2:]]


def test_sources_interleaved_in_a_batch_pair_within_each_source() -> None:
    frame = pl.from_arrow(
        raw_events([chunk("use gh"), chunk("other", session_id="x"), chunk(SPLIT[2:])])
    )
    assert isinstance(frame, pl.DataFrame)
    frame = frame.with_columns(pl.Series("source_id", ["a", "b", "a"]))
    out = redact_across_chunks(frame, "source_id")["text"].to_list()
    assert out == ["use [REDACTED:github-token]", "other", ""]


def test_text_without_a_crossing_secret_is_unchanged() -> None:
    texts = ["The build passed; ", "see https://example.com/docs for the token format.", None]
    frame = pl.from_arrow(raw_events([chunk(t) for t in texts]))
    assert isinstance(frame, pl.DataFrame)
    assert redact_across_chunks(frame)["text"].to_list() == texts


def test_a_secret_longer_than_the_window_before_the_join_is_still_cut_at_its_end() -> None:
    filler = "x" * (WINDOW * 2)
    out = stored([chunk(filler + " use gh"), chunk(SPLIT[2:])])
    assert out == [filler + " use [REDACTED:github-token]", ""]


def test_join_pair_leaves_secrets_inside_one_chunk_to_the_per_event_rules() -> None:
    assert join_pair(f"a {SPLIT} b", "c") == (f"a {SPLIT} b", "c")


@pytest.mark.parametrize("text", [t for _, t, _ in CASES] + ["plain text", "a=b https://x/y"])
def test_both_regex_engines_read_the_rules_alike(text: str) -> None:
    """The window check uses Python's engine for positions; per-event redaction uses
    polars' (Rust). Applying the rules one by one, both must give the same text."""
    python = text
    for _cls, pattern, replacement in RULES:
        python = re.sub(pattern, re.sub(r"\$\{(\d+)\}", r"\\g<\1>", replacement), python)
    rust = pl.select(redact(pl.lit(text))).item()
    assert python == rust


def context_batch(rows: list[dict[str, Any]], source_id: str) -> RawTables:
    events = raw_events(rows)
    empty = RawTables(events, *(t.schema.empty_table() for t in _empty_tables()))
    return empty.tagged(source_id)


def _empty_tables() -> tuple[pa.Table, pa.Table, pa.Table]:
    from agentlake.extract.rows import RowSink

    built = RowSink().build()
    return built.usage, built.sessions, built.retractions


def test_a_secret_cut_across_two_commits_amends_the_earlier_event() -> None:
    earlier = raw_events([chunk("prose"), chunk("use gh", native_id="a")])
    context = stream_context(earlier, "src")
    assert context.column("text").to_pylist() == ["use gh"]
    later = context_batch([chunk(SPLIT[2:] + " now", native_id="b")], "src")
    rows = transform_batch(later, provider="claude", context=context)
    assert rows.events.column("text").to_pylist() == [" now"]
    first_id = normalize_events(earlier, "claude").column("event_id")[1].as_py()
    assert rows.amended.to_pylist() == [
        {"event_id": first_id, "text": "use [REDACTED:github-token]"}
    ]


def test_no_amendment_without_a_crossing() -> None:
    earlier = raw_events([chunk("hello")])
    later = context_batch([chunk("world", native_id="b")], "src")
    rows = transform_batch(later, provider="claude", context=stream_context(earlier, "src"))
    assert rows.amended.num_rows == 0
    assert rows.events.column("text").to_pylist() == ["world"]


def test_the_context_of_a_batch_ending_on_a_tool_call_is_empty() -> None:
    events = raw_events([chunk("x"), chunk(None, block_type="tool_use")])
    assert stream_context(events, "src").num_rows == 0
