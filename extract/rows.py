"""Column builders that adapters emit rows into.

An adapter maps one provider record to zero or more rows by calling :meth:`RowSink.event`,
:meth:`RowSink.usage` and :meth:`RowSink.session`. The sink appends to plain Python lists
(one per column) and :meth:`RowSink.build` turns them into Arrow tables in bulk, which is
far cheaper than building a dict or an Arrow row per record.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from .schema import (
    RAW_EVENT_SCHEMA,
    RAW_SESSION_SCHEMA,
    RAW_USAGE_SCHEMA,
    RETRACTION_SCHEMA,
    BlockType,
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

    def tagged(self, source_id: str) -> RawTables:
        """These tables with a ``source_id`` column on events and usage, so batches of
        several sources can be concatenated and transformed together."""
        return RawTables(
            with_constant(self.events, "source_id", source_id),
            with_constant(self.usage, "source_id", source_id),
            self.sessions,
            self.retractions,
        )

    @staticmethod
    def concat(parts: list[RawTables]) -> RawTables:
        """One batch from several (tagged) ones."""
        return RawTables(
            pa.concat_tables([p.events for p in parts]),
            pa.concat_tables([p.usage for p in parts]),
            pa.concat_tables([p.sessions for p in parts]),
            pa.concat_tables([p.retractions for p in parts]),
        )


class _Columns:
    __slots__ = ("cols", "schema")

    def __init__(self, schema: pa.Schema) -> None:
        self.schema = schema
        self.cols: dict[str, list[Any]] = {name: [] for name in schema.names}

    def table(self) -> pa.Table:
        return pa.table(
            [pa.array(self.cols[f.name], type=f.type) for f in self.schema], schema=self.schema
        )


class RowSink:
    """Accumulates the raw rows of one batch."""

    def __init__(self) -> None:
        self._events = _Columns(RAW_EVENT_SCHEMA)
        self._usage = _Columns(RAW_USAGE_SCHEMA)
        self._sessions: dict[str, dict[str, Any]] = {}
        self._retracted: list[tuple[str, str]] = []
        # (session, native id) -> how many events and calls were emitted before its
        # latest withdrawal: those of its rows are dropped when the batch is built.
        self._withdrawn: dict[tuple[str, str], tuple[int, int]] = {}
        e = self._events.cols
        self._ev_append = (
            e["session_id"].append,
            e["native_id"].append,
            e["block_index"].append,
            e["ts"].append,
            e["block_type"].append,
            e["role"].append,
            e["model"].append,
            e["text"].append,
            e["tool_name"].append,
            e["tool_call_id"].append,
            e["tool_input"].append,
            e["is_error"].append,
            e["is_sidechain"].append,
            e["source_offset"].append,
        )
        u = self._usage.cols
        self._us_append = tuple(u[name].append for name in RAW_USAGE_SCHEMA.names)

    @property
    def event_count(self) -> int:
        """Events emitted so far."""
        return len(self._events.cols["session_id"])

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
    ) -> None:
        """Emit one event row."""
        values = (
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
        )
        for append, value in zip(self._ev_append, values, strict=True):
            append(value)

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
    ) -> None:
        """Emit one usage candidate (a model call as written; dedup happens later).
        Among copies of one call the highest ``rank`` wins (default: the token total)."""
        values = (
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
        )
        for append, value in zip(self._us_append, values, strict=True):
            append(value)

    def session(self, session_id: str, **fields: Any) -> None:
        """Record session metadata; within a batch the latest non-null value wins,
        except ``title``, where the highest ``title_rank`` wins."""
        row = self._sessions.setdefault(session_id, {})
        title_rank = fields.pop("title_rank", None)
        title = fields.pop("title", None)
        if title is not None and (title_rank or 0) >= row.get("title_rank", -1):
            row["title"], row["title_rank"] = title, title_rank or 0
        for key, value in fields.items():
            if value is not None:
                row[key] = value

    def retract(self, session_id: str, native_id: str) -> None:
        """Withdraw every event and call of one native message: those emitted earlier in
        this batch now, those already in the catalog when the batch is committed (a
        rewind, or a message re-written whose last copy wins)."""
        self._retracted.append((session_id, native_id))
        emitted = (self.event_count, len(self._usage.cols["session_id"]))
        self._withdrawn[(session_id, native_id)] = emitted

    @property
    def retracts(self) -> bool:
        """Whether this batch withdraws rows (it must then be committed on its own)."""
        return bool(self._retracted)

    def build(self) -> RawTables:
        """Turn the accumulated rows into Arrow tables."""
        sessions = _Columns(RAW_SESSION_SCHEMA)
        for sid, row in self._sessions.items():
            for name in RAW_SESSION_SCHEMA.names:
                sessions.cols[name].append(sid if name == "session_id" else row.get(name))
        retractions = pa.table(
            [
                pa.array([s for s, _ in self._retracted], pa.string()),
                pa.array([n for _, n in self._retracted], pa.string()),
            ],
            schema=RETRACTION_SCHEMA,
        )
        events, usage = self._events.table(), self._usage.table()
        if self._withdrawn:
            events = self._kept(events, 0)
            usage = self._kept(usage, 1)
        return RawTables(events, usage, sessions.table(), retractions)

    def _kept(self, table: pa.Table, which: int) -> pa.Table:
        """``table`` without the rows a later withdrawal took back: rows joined in bulk
        to the withdrawn (session, native id) pairs, and dropped when emitted before that
        withdrawal (re-scanning the batch at each withdrawal made a long rewound session
        quadratic)."""
        import pyarrow.compute as pc  # a run with nothing new never loads it

        withdrawn = pa.table(
            {
                "session_id": pa.array([s for s, _ in self._withdrawn], pa.string()),
                "native_id": pa.array([n for _, n in self._withdrawn], pa.string()),
                "before": pa.array([e[which] for e in self._withdrawn.values()], pa.int64()),
            }
        )
        rows = table.select(["session_id", "native_id"]).append_column(
            "row", pa.array(range(table.num_rows), pa.int64())
        )
        gone = rows.join(withdrawn, ["session_id", "native_id"], join_type="inner").filter(
            pc.field("row") < pc.field("before")
        )
        if not gone.num_rows:
            return table
        return table.filter(pc.invert(pc.is_in(rows.column("row"), value_set=gone.column("row"))))
