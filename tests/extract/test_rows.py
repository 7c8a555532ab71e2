"""The row sink adapters emit into: withdrawals take back exactly the rows emitted
before them."""

from __future__ import annotations

from agentlake.extract.rows import RawTables, RowSink, build_tagged


def _emit(sink: RowSink, sid: str, mid: str, offset: int) -> None:
    sink.event(sid, mid, 0, None, "text", "assistant", f"{mid}@{offset}", offset)
    sink.usage(sid, mid, None, mid, None, "m", 1, 0, 0, 0, 1, 0, False, offset)


def test_a_withdrawal_drops_the_rows_emitted_before_it_and_keeps_later_copies() -> None:
    sink = RowSink()
    _emit(sink, "s1", "a", 0)
    _emit(sink, "s1", "b", 1)
    _emit(sink, "s2", "a", 2)  # same message id, other session: untouched
    sink.retract("s1", "a")
    _emit(sink, "s1", "a", 3)  # the re-written message: kept
    sink.retract("s1", "b")
    sink.retract("s1", "b")  # twice: still gone, nothing else
    _emit(sink, "s1", "c", 4)
    sink.retract("s1", "a")  # the re-written copy withdrawn too
    _emit(sink, "s1", "a", 5)
    built = sink.build()
    assert built.events.column("text").to_pylist() == ["a@2", "c@4", "a@5"]
    assert built.usage.column("source_offset").to_pylist() == [2, 4, 5]
    assert built.retractions.num_rows == 4
    assert sink.retracts


def test_withdrawals_over_a_long_batch_keep_every_other_row_in_order() -> None:
    sink = RowSink()
    for i in range(4000):
        _emit(sink, "s", f"m{i}", i)
        if i % 2:
            sink.retract("s", f"m{i - 1}")
    built = sink.build()
    assert built.events.column("source_offset").to_pylist() == list(range(1, 4000, 2))
    assert built.usage.num_rows == 2000


def test_every_value_lands_in_its_own_column() -> None:
    """Rows are kept as tuples in the schemas' column order: each argument must come
    out in the column of its name, for events, calls and sessions alike."""
    sink = RowSink()
    sink.event("s", "n", 3, "2026-01-02T03:04:05Z", "tool_use", "assistant", "text", 77,
               model="m", tool_name="Bash", tool_call_id="c", tool_input="{}", is_error=True,
               is_sidechain=True)  # fmt: skip
    sink.usage("s", "msg", "req", "n", "ts", "m", 1, 2, 3, 4, 5, 6, True, 77, rank=9,
               per_session=True)  # fmt: skip
    sink.session("s", project_path="/p", cli_version="1.0", title="t", title_rank=2)
    built = sink.build()
    assert built.events.to_pylist() == [
        {"session_id": "s", "native_id": "n", "block_index": 3, "ts": "2026-01-02T03:04:05Z",
         "block_type": "tool_use", "role": "assistant", "model": "m", "text": "text",
         "tool_name": "Bash", "tool_call_id": "c", "tool_input": "{}", "is_error": True,
         "is_sidechain": True, "source_offset": 77}
    ]  # fmt: skip
    assert built.usage.to_pylist() == [
        {"session_id": "s", "message_id": "msg", "request_id": "req", "native_id": "n",
         "ts": "ts", "model": "m", "input_tokens": 1, "cache_write_tokens": 2,
         "cache_write_1h_tokens": 3, "cache_read_tokens": 4, "output_tokens": 5,
         "reasoning_tokens": 6, "is_sidechain": True, "source_offset": 77, "rank": 9,
         "per_session": True}
    ]  # fmt: skip
    session = built.sessions.to_pylist()
    assert len(session) == 1
    assert {k: v for k, v in session[0].items() if v is not None} == {
        "session_id": "s", "project_path": "/p", "cli_version": "1.0", "title": "t",
        "title_rank": 2,
    }  # fmt: skip
    empty = RowSink().build()
    assert empty.events.num_rows == empty.usage.num_rows == empty.sessions.num_rows == 0


def _tagged_one_by_one(parts: list[tuple[RowSink, str]]) -> RawTables:
    return RawTables.concat([sink.build().tagged(sid) for sink, sid in parts])


def test_sinks_converted_together_equal_each_built_and_tagged_in_turn() -> None:
    """A commit converts the rows of its sinks together; it must make the very tables
    (rows, order, types) of building and tagging each sink apart, with sinks that
    withdraw rows, empty sinks and session fields among them."""
    parts: list[tuple[RowSink, str]] = []
    for k in range(7):
        sink = RowSink()
        for i in range(k * 3):
            _emit(sink, f"s{k}", f"m{i}", i)
        if k == 3:
            sink.retract(f"s{k}", "m1")
            _emit(sink, f"s{k}", "m1", 99)
        if k % 2:
            sink.session(f"s{k}", project_path=f"/p{k}", title="t", title_rank=1)
        parts.append((sink, f"src{k}"))
    for chosen in (parts, parts[:3], parts[3:4], parts[4:], parts[:1], []):
        together = build_tagged(chosen)
        one_by_one = _tagged_one_by_one(chosen) if chosen else RowSink().build().tagged("x")
        for name in ("events", "usage", "sessions", "retractions"):
            assert getattr(together, name).equals(getattr(one_by_one, name)), name


def test_sessions_touched_and_last_event_follow_the_built_rows() -> None:
    sink = RowSink()
    _emit(sink, "s1", "a", 0)
    _emit(sink, "s2", "b", 1)
    sink.session("s3", title="t")
    assert sink.sessions_touched() == {"s1", "s2", "s3"}
    assert sink.last_event().column("text").to_pylist() == ["b@1"]
    sink.retract("s2", "b")
    assert sink.sessions_withdrawn_from() == {"s2"}
    assert sink.last_event().column("text").to_pylist() == ["a@0"]
    assert RowSink().last_event().num_rows == 0


def test_a_later_withdrawal_takes_every_queued_row_of_its_messages_and_the_times() -> None:
    """What a later batch's withdrawal does to a batch queued in the same commit: its
    rows of the withdrawn messages go wherever they were emitted, and its time hints
    of those sessions go (the commit recomputes their times from the events), while
    other messages, sessions and session fields stay."""
    sink = RowSink()
    _emit(sink, "s1", "a", 0)
    sink.retract("s1", "a")  # its own withdrawal, then a copy the later one takes too
    _emit(sink, "s1", "a", 1)
    _emit(sink, "s1", "b", 2)
    _emit(sink, "s2", "a", 3)
    sink.session("s1", title="t", title_rank=2, started_at="2026-01-01", updated_at="2026-01-02")
    sink.session("s2", started_at="2026-01-03")
    sink.withdraw_emitted({"s1"}, {("s1", "a")})
    _emit(sink, "s1", "a", 4)  # emitted after: kept
    built = sink.build()
    assert built.events.column("text").to_pylist() == ["b@2", "a@3", "a@4"]
    assert built.usage.column("source_offset").to_pylist() == [2, 3, 4]
    assert built.retractions.num_rows == 1  # the later batch sends its own
    sessions = {r["session_id"]: r for r in built.sessions.to_pylist()}
    assert (sessions["s1"]["title"], sessions["s1"]["started_at"]) == ("t", None)
    assert sessions["s1"]["updated_at"] is None and sessions["s2"]["started_at"] == "2026-01-03"
    together = build_tagged([(sink, "src")])
    assert together.events.equals(built.tagged("src").events)
