"""Column builders that adapters emit rows into.

An adapter maps one provider record to zero or more rows by calling :meth:`RowSink.event`,
:meth:`RowSink.usage`, :meth:`RowSink.session` and :meth:`RowSink.rate_limit`. The sink keeps each row as a tuple of
its values, in its schema's column order, and :meth:`RowSink.build` turns the rows into
Arrow columns in bulk (one conversion of the rows as a struct array, in C), which is far
cheaper than building a dict or an Arrow row per record, appending to a list per column,
or converting each column apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import chain, repeat
from operator import itemgetter
from typing import Any

import pyarrow as pa

from .schema import (
    GIVEN_EVENT_COLUMNS,
    GIVEN_USAGE_COLUMNS,
    RAW_EVENT_SCHEMA,
    RAW_RATE_LIMIT_SCHEMA,
    RAW_SESSION_SCHEMA,
    RAW_USAGE_SCHEMA,
    RETRACTION_SCHEMA,
    BlockType,
    WindowKind,
)


def with_constant(table: pa.Table, name: str, value: str) -> pa.Table:
    """``table`` with a string column ``name`` holding ``value`` in every row. The scalar
    is typed: converting a bare ``str`` makes pyarrow try optional imports (dateutil) on
    every call, which costs more than the column itself."""
    return table.append_column(name, pa.repeat(pa.scalar(value, pa.string()), table.num_rows))


@dataclass(frozen=True, slots=True)
class RawTables:
    """What the extract stage hands to transform for one batch."""

    events: pa.Table
    usage: pa.Table
    sessions: pa.Table
    retractions: pa.Table
    rate_limits: pa.Table = field(default_factory=RAW_RATE_LIMIT_SCHEMA.empty_table)

    def tagged(self, source_id: str) -> RawTables:
        """These tables with a ``source_id`` column on events, usage and rate limits, so
        batches of several sources can be concatenated and transformed together."""
        return RawTables(
            with_constant(self.events, "source_id", source_id),
            with_constant(self.usage, "source_id", source_id),
            self.sessions,
            self.retractions,
            with_constant(self.rate_limits, "source_id", source_id),
        )

    @staticmethod
    def concat(parts: list[RawTables]) -> RawTables:
        """One batch from several (tagged) ones."""
        return RawTables(
            pa.concat_tables([p.events for p in parts]),
            pa.concat_tables([p.usage for p in parts]),
            pa.concat_tables([p.sessions for p in parts]),
            pa.concat_tables([p.retractions for p in parts]),
            pa.concat_tables([p.rate_limits for p in parts]),
        )


@dataclass(frozen=True, slots=True)
class GivenIdentity:
    """The identity a re-imported row had in the catalog that exported it (see
    :data:`~agentlake.extract.schema.GIVEN_EVENT_COLUMNS`): its provider, its event or
    call id, and an event's ``seq``."""

    provider: str
    row_id: str
    seq: int | None = None


# Rows of a sink that carry a given identity: (row number, provider, id, seq).
_Given = list[tuple[int, str, str, int | None]]


def _with_given(table: pa.Table, given: list[tuple[int, _Given]], columns: pa.Schema) -> pa.Table:
    """``table`` with the given-identity ``columns`` appended: null except at the rows
    of ``given`` (each sink's rows, numbered from that sink's first row in the table)."""
    values: list[list[Any]] = [[None] * table.num_rows for _ in columns]
    for first, rows in given:
        for row, *parts in rows:
            for column, value in zip(values, parts, strict=False):
                column[first + row] = value
    for spec, column in zip(columns, values, strict=True):
        table = table.append_column(spec, pa.array(column, spec.type))
    return table


def _table(rows: list[tuple[Any, ...]], schema: pa.Schema) -> pa.Table:
    """``rows`` (tuples of values in ``schema``'s column order) as a table, converted in
    one call as a struct array whose fields are the columns (cheaper than converting
    column by column, for a small file's few rows as for a large batch)."""
    struct = pa.array(rows, type=pa.struct(list(schema)))
    return pa.Table.from_batches([pa.RecordBatch.from_struct_array(struct)], schema=schema)


class RowSink:
    """Accumulates the raw rows of one batch."""

    def __init__(self) -> None:
        # One tuple per row, in the order of RAW_EVENT_SCHEMA and RAW_USAGE_SCHEMA.
        self._events: list[tuple[Any, ...]] = []
        self._usage: list[tuple[Any, ...]] = []
        # Keyed by session id; a session given its provider (a re-imported export, whose
        # providers may share an id) by (session id, provider).
        self._sessions: dict[str | tuple[str, str], dict[str, Any]] = {}
        self._retracted: list[tuple[str, str]] = []
        self._rate_limits: list[tuple[Any, ...]] = []  # in RAW_RATE_LIMIT_SCHEMA's order
        # (session, native id) -> how many events and calls were emitted before its
        # latest withdrawal: those of its rows are dropped when the batch is built.
        self._withdrawn: dict[tuple[str, str], tuple[int, int]] = {}
        # Rows that keep the identity an export gave them (GivenIdentity), by table.
        self._given_events: _Given = []
        self._given_usage: _Given = []

    @property
    def event_count(self) -> int:
        """Events emitted so far."""
        return len(self._events)

    def event(
        self,
        session_id: str,
        native_id: str,
        block_index: int,
        ts: str | None,
        block_type: BlockType,
        role: str | None,
        text: str | None,
        offset: int,
        *,
        model: str | None = None,
        tool_name: str | None = None,
        tool_call_id: str | None = None,
        tool_input: str | None = None,
        is_error: bool | None = None,
        is_sidechain: bool = False,
        given: GivenIdentity | None = None,
    ) -> None:
        """Emit one event row (``given``: the identity it keeps, for re-imported rows)."""
        if given is not None:
            self._given_events.append((len(self._events), given.provider, given.row_id, given.seq))
        self._events.append((
            session_id,
            native_id,
            block_index,
            ts,
            block_type,
            role,
            model,
            text,
            tool_name,
            tool_call_id,
            tool_input,
            is_error,
            is_sidechain,
            offset,
        ))  # fmt: skip

    def usage(
        self,
        session_id: str,
        message_id: str | None,
        request_id: str | None,
        native_id: str,
        ts: str | None,
        model: str | None,
        input_tokens: int,
        cache_write_tokens: int,
        cache_write_1h_tokens: int,
        cache_read_tokens: int,
        output_tokens: int,
        reasoning_tokens: int,
        is_sidechain: bool,
        offset: int,
        *,
        rank: int | None = None,
        per_session: bool = False,
        given: GivenIdentity | None = None,
    ) -> None:
        """Emit one usage candidate (a model call as written; dedup happens later).
        Among copies of one call the highest ``rank`` wins (default: the token total).
        ``per_session``: the row is a session's cumulative totals for one model, not a
        call (agents that record no per-call counts); give each snapshot of a session
        and model the same identity and a growing ``rank``, so the latest replaces the
        earlier and snapshots are never summed. ``given``: the identity a re-imported
        call keeps."""
        if given is not None:
            self._given_usage.append((len(self._usage), given.provider, given.row_id, None))
        self._usage.append((
            session_id,
            message_id,
            request_id,
            native_id,
            ts,
            model,
            input_tokens,
            cache_write_tokens,
            cache_write_1h_tokens,
            cache_read_tokens,
            output_tokens,
            reasoning_tokens,
            is_sidechain,
            offset,
            rank,
            per_session,
        ))  # fmt: skip

    def session(self, session_id: str, **fields: Any) -> None:
        """Record session metadata; within a batch the latest non-null value wins,
        except ``title``, where the highest ``title_rank`` wins."""
        given = fields.get("given_provider")
        row = self._sessions.setdefault(session_id if given is None else (session_id, given), {})
        title_rank = fields.pop("title_rank", None)
        title = fields.pop("title", None)
        if title is not None and (title_rank or 0) >= row.get("title_rank", -1):
            row["title"], row["title_rank"] = title, title_rank or 0
        for key, value in fields.items():
            if value is not None:
                row[key] = value

    def rate_limit(
        self,
        session_id: str,
        ts: str | None,
        window_kind: WindowKind,
        used_percent: float | None,
        offset: int,
        *,
        limit_id: str | None = None,
        window_minutes: int | None = None,
        resets_at: int | None = None,
        resets_in: int | None = None,
        plan_type: str | None = None,
    ) -> None:
        """Emit one window of a rate-limit snapshot: its reset as epoch seconds
        (``resets_at``) or as seconds after ``ts`` (``resets_in``)."""
        self._rate_limits.append((
            session_id,
            ts,
            limit_id,
            window_kind,
            used_percent,
            window_minutes,
            resets_at,
            resets_in,
            plan_type,
            offset,
        ))  # fmt: skip

    def retract(self, session_id: str, native_id: str) -> None:
        """Withdraw every event and call of one native message: those emitted earlier in
        this batch now, those already in the catalog when the batch is committed (a
        rewind, or a message re-written whose last copy wins)."""
        self._retracted.append((session_id, native_id))
        emitted = (len(self._events), len(self._usage))
        self._withdrawn[(session_id, native_id)] = emitted

    def withdraw_emitted(self, session_ids: set[str], pairs: set[tuple[str, str]]) -> None:
        """Apply a later batch's withdrawal to this batch's rows before either is
        committed, as if this batch had been committed first: every row emitted so far
        of the (session, native id) ``pairs`` goes, and so do the time hints of
        ``session_ids``, since a commit that withdraws rows recomputes those sessions'
        times from their remaining events alone. Other session fields are kept."""
        emitted = (len(self._events), len(self._usage))
        for pair in pairs:
            self._withdrawn[pair] = emitted
        for sid in session_ids:
            row = self._sessions.get(sid)
            if row is not None:
                row.pop("started_at", None)
                row.pop("updated_at", None)

    @property
    def retracts(self) -> bool:
        """Whether this batch withdraws rows already committed."""
        return bool(self._retracted)

    def withdrawn_pairs(self) -> set[tuple[str, str]]:
        """The (session, native id) pairs this batch withdraws."""
        return set(self._retracted)

    def build(self) -> RawTables:
        """Turn the accumulated rows into Arrow tables."""
        events = _table(self._events, RAW_EVENT_SCHEMA)
        usage = _table(self._usage, RAW_USAGE_SCHEMA)
        if self._given_events or self._given_usage:
            events = _with_given(events, [(0, self._given_events)], GIVEN_EVENT_COLUMNS)
            usage = _with_given(usage, [(0, self._given_usage)], GIVEN_USAGE_COLUMNS)
        if self._withdrawn:
            events = _kept(events, self._spans(0, 0))
            usage = _kept(usage, self._spans(1, 0))
        return RawTables(
            events,
            usage,
            self._session_table(),
            self._retraction_table(),
            _table(self._rate_limits, RAW_RATE_LIMIT_SCHEMA),
        )

    def _session_table(self) -> pa.Table:
        return _table(self._session_rows(), RAW_SESSION_SCHEMA)

    def _session_rows(self) -> list[tuple[Any, ...]]:
        fields = RAW_SESSION_SCHEMA.names[1:]
        return [
            (key if isinstance(key, str) else key[0], *(row.get(name) for name in fields))
            for key, row in self._sessions.items()
        ]

    def _retraction_table(self) -> pa.Table:
        return _table(self._retracted, RETRACTION_SCHEMA)

    def sessions_withdrawn_from(self) -> set[str]:
        """The sessions this batch withdraws rows of."""
        return set(map(itemgetter(0), self._retracted))

    def sessions_touched(self) -> set[str]:
        """Every session this batch has rows of (events, calls, session fields, rate
        limits or withdrawals)."""
        first = itemgetter(0)  # each row's session id, taken in C
        return {
            *map(first, self._events),
            *map(first, self._usage),
            *(key if isinstance(key, str) else key[0] for key in self._sessions),
            *map(first, self._retracted),
            *map(first, self._rate_limits),
        }

    def last_event(self) -> pa.Table:
        """The batch's last event as built (no row when it has none)."""
        if self._withdrawn:
            events = self.build().events
            return events.slice(max(events.num_rows - 1, 0))
        return _table(self._events[-1:], RAW_EVENT_SCHEMA)

    def _spans(self, which: int, first: int) -> list[tuple[str, str, int, int]]:
        """(session, native id, first row, end row) of each withdrawal over this batch's
        events (``which`` 0) or calls (1), whose first row is row ``first`` of a table
        holding them: the rows of the pair in that range are dropped."""
        return [(s, n, first, first + e[which]) for (s, n), e in self._withdrawn.items()]


def _kept(table: pa.Table, spans: list[tuple[str, str, int, int]]) -> pa.Table:
    """``table`` without the rows a withdrawal took back: the rows of each span's
    (session, native id) between its first and end row, joined in bulk (re-scanning the
    batch at each withdrawal made a long rewound session quadratic, and joining each
    sink apart cost a join per withdrawing file of a commit)."""
    import pyarrow.compute as pc  # a run with nothing new never loads it

    withdrawn = pa.table(
        {
            "session_id": pa.array([s[0] for s in spans], pa.string()),
            "native_id": pa.array([s[1] for s in spans], pa.string()),
            "first": pa.array([s[2] for s in spans], pa.int64()),
            "end": pa.array([s[3] for s in spans], pa.int64()),
        }
    )
    rows = table.select(["session_id", "native_id"]).append_column(
        "row", pa.array(range(table.num_rows), pa.int64())
    )
    gone = rows.join(withdrawn, ["session_id", "native_id"], join_type="inner").filter(
        (pc.field("row") >= pc.field("first")) & (pc.field("row") < pc.field("end"))
    )
    if not gone.num_rows:
        return table
    return table.filter(pc.invert(pc.is_in(rows.column("row"), value_set=gone.column("row"))))


def build_tagged(parts: Sequence[tuple[RowSink, str]]) -> RawTables:
    """One batch from several sinks, each with the id of the source it was read from:
    the tables :meth:`RawTables.concat` makes of each sink's built and
    :meth:`RawTables.tagged` tables, but with the rows of every sink converted together
    (a commit of a bulk import gathers hundreds of small files; converting each apart
    cost a table per file and a polars frame of hundreds of chunks), and the rows the
    sinks withdrew dropped in one join for all of them."""
    together = _converted_together(parts)
    if not any(sink._withdrawn for sink, _ in parts):
        return together
    spans: tuple[list[tuple[str, str, int, int]], list[tuple[str, str, int, int]]] = ([], [])
    first = [0, 0]  # each sink's first row in the events and the calls
    for sink, _ in parts:
        for which in (0, 1):
            spans[which].extend(sink._spans(which, first[which]))
        first[0] += len(sink._events)
        first[1] += len(sink._usage)
    retracted = chain.from_iterable(sink._retracted for sink, _ in parts)
    return RawTables(
        _kept(together.events, spans[0]) if spans[0] else together.events,
        _kept(together.usage, spans[1]) if spans[1] else together.usage,
        together.sessions,
        _table(list(retracted), RETRACTION_SCHEMA),
        together.rate_limits,
    )


def _converted_together(parts: Sequence[tuple[RowSink, str]]) -> RawTables:
    """The rows of sinks as emitted (withdrawals not applied), tagged and converted in
    one pass; no retraction rows."""

    def tagged(rows: list[list[tuple[Any, ...]]], schema: pa.Schema) -> pa.Table:
        table = _table(list(chain.from_iterable(rows)), schema)
        source_ids = chain.from_iterable(
            repeat(sid, len(r)) for r, (_, sid) in zip(rows, parts, strict=True)
        )
        return table.append_column(
            "source_id", pa.array(source_ids, pa.string(), size=table.num_rows)
        )

    sessions = chain.from_iterable(sink._session_rows() for sink, _ in parts)
    events = tagged([sink._events for sink, _ in parts], RAW_EVENT_SCHEMA)
    usage = tagged([sink._usage for sink, _ in parts], RAW_USAGE_SCHEMA)
    if any(sink._given_events or sink._given_usage for sink, _ in parts):
        firsts = [0, 0]  # each sink's first event and call in the tables
        given_events: list[tuple[int, _Given]] = []
        given_usage: list[tuple[int, _Given]] = []
        for sink, _ in parts:
            given_events.append((firsts[0], sink._given_events))
            given_usage.append((firsts[1], sink._given_usage))
            firsts[0] += len(sink._events)
            firsts[1] += len(sink._usage)
        events = _with_given(events, given_events, GIVEN_EVENT_COLUMNS)
        usage = _with_given(usage, given_usage, GIVEN_USAGE_COLUMNS)
    return RawTables(
        events,
        usage,
        _table(list(sessions), RAW_SESSION_SCHEMA),
        RETRACTION_SCHEMA.empty_table(),
        tagged([sink._rate_limits for sink, _ in parts], RAW_RATE_LIMIT_SCHEMA),
    )
