"""The row sink adapters emit into: withdrawals take back exactly the rows emitted
before them."""

from __future__ import annotations

from agentlake.extract.rows import RowSink


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
