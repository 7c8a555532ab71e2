"""The transform runner: raw extract tables → catalog-shaped tables for one batch.

Pure: no I/O, no catalog access. Cross-batch and cross-run work (global usage dedup,
session aggregates) is set work the load stage does in SQL against the catalog.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

import polars as pl
import pyarrow as pa

from agentlake.extract.rows import RawTables, with_constant

from .identity import with_id
from .limits import RATE_LIMIT_SCHEMA, normalize_rate_limits
from .redact import redact
from .streams import PROSE, redact_across_chunks

AMENDED_SCHEMA: Final = pa.schema([("event_id", pa.string()), ("text", pa.string())])

# An RFC 3339 time: ``Z`` (or ``z``) or a ``±hh:mm`` (also ``±hhmm``) offset, read in one
# pass (one pattern for each form had parsed every value twice).
_ISO: Final = "%Y-%m-%dT%H:%M:%S%.f%#z"


@dataclass(frozen=True, slots=True)
class CatalogRows:
    """One batch in catalog shape (without ``workspace``/``import_id``, which the load
    stage binds). ``amended`` rewrites the text of events committed earlier (``event_id``,
    ``text``): the first chunk of a secret cut across two commits. ``rate_limits`` holds
    the batch's rate-limit snapshots (:mod:`.limits`)."""

    events: pa.Table
    usage: pa.Table
    sessions: pa.Table
    retractions: pa.Table
    amended: pa.Table = field(default_factory=lambda: AMENDED_SCHEMA.empty_table())
    rate_limits: pa.Table = field(default_factory=lambda: RATE_LIMIT_SCHEMA.empty_table())


def utc_timestamp(column: pl.Expr) -> pl.Expr:
    """ISO-8601 text (``Z`` or ``z``, or a ``±hh:mm`` or ``±hhmm`` offset) → UTC
    timestamp; unparsable, or without an offset → null."""
    return column.str.to_datetime(_ISO, time_unit="us", strict=False).dt.convert_time_zone("UTC")


def event_kind(block_type: pl.Expr, role: pl.Expr) -> pl.Expr:
    """Classify a raw block into one of :data:`agentlake.extract.schema.EVENT_KINDS`."""
    prose = (
        pl.when(role == "user")
        .then(pl.lit("prompt"))
        .when(role == "assistant")
        .then(pl.lit("response"))
        .otherwise(pl.lit("system"))
    )
    return (
        pl.when(block_type.is_in(["text", "image"]))
        .then(prose)
        .when(block_type == "thinking")
        .then(pl.lit("reasoning"))
        .when(block_type == "tool_use")
        .then(pl.lit("tool_call"))
        .when(block_type == "tool_result")
        .then(pl.lit("tool_result"))
        .when(block_type == "summary")
        .then(pl.lit("summary"))
        .otherwise(pl.lit("system"))
    )


def _source_id(frame: pl.DataFrame, source_id: str) -> pl.Expr:
    """The rows' ``source_id`` column if the raw table carries one (several sources in
    one batch), else the literal ``source_id``."""
    return (
        pl.col("source_id")
        if "source_id" in frame.columns
        else pl.lit(source_id).alias("source_id")
    )


def _provider(provider: str, given: bool) -> pl.Expr:
    """The rows' provider: the batch's, unless a row was given its own."""
    batch = pl.lit(provider)
    return (pl.coalesce("given_provider", batch) if given else batch).alias("provider")


def normalize_events(raw: pa.Table, provider: str, source_id: str = "") -> pa.Table:
    """Events with deterministic ids, UTC timestamps, kinds and redacted text."""
    return _normalize_events(raw, provider, source_id, None)[0]


def _normalize_events(
    raw: pa.Table, provider: str, source_id: str, context: pa.Table | None
) -> tuple[pa.Table, pa.Table]:
    """:func:`normalize_events`, reading ``context`` (each source's last raw prose event
    of the previous commit) as the rows before ``raw``; also returns the amended text
    of context rows a secret cut across the two commits reached."""
    frame = pl.from_arrow(raw)
    assert isinstance(frame, pl.DataFrame)
    carried = 0 if context is None else context.num_rows
    if carried:
        before = pl.from_arrow(context)
        assert isinstance(before, pl.DataFrame)
        before = before.with_columns(  # a context row never carries a given identity
            pl.lit(None, frame.schema[c]).alias(c) for c in frame.columns if c not in before.columns
        )
        frame = pl.concat([before.select(frame.columns), frame])
    frame = with_id(frame, "event_id", provider, ["session_id", "native_id", "block_index"])
    given = "given_id" in frame.columns  # rows re-imported from an export keep their identity
    if given:
        frame = frame.with_columns(pl.coalesce("given_id", "event_id").alias("event_id"))
    raw_text = frame.get_column("text")
    frame = redact_across_chunks(frame, "source_id" if "source_id" in frame.columns else None)
    amended = (
        frame.head(carried)
        .filter(pl.col("text") != raw_text.head(carried))
        .select("event_id", redact(pl.col("text")).alias("text"))
    )
    frame = frame.slice(carried)
    seq = pl.col("source_offset") * 1000 + pl.col("block_index")
    frame = frame.select(
        "event_id",
        _provider(provider, given),
        "session_id",
        (pl.coalesce("given_seq", seq) if given else seq).alias("seq"),
        utc_timestamp(pl.col("ts")).alias("ts"),
        event_kind(pl.col("block_type"), pl.col("role")).alias("kind"),
        "role",
        "model",
        redact(pl.col("text")).alias("text"),
        "tool_name",
        "tool_call_id",
        redact(pl.col("tool_input")).alias("tool_input"),
        "is_error",
        "is_sidechain",
        _source_id(frame, source_id),
        "source_offset",
        "native_id",
    )
    # A batch can hold the same native event twice (a file that repeats a line): the
    # first copy stays, as across batches. Formats whose later copy replaces a message
    # withdraw the earlier one explicitly (RowSink.retract).
    events = frame.unique("event_id", keep="first", maintain_order=True).to_arrow()
    return events, amended.to_arrow()


def normalize_usage(raw: pa.Table, provider: str, source_id: str = "") -> pa.Table:
    """Usage candidates with a ``call_id``, UTC ``ts``, ``total_tokens`` and
    ``merge_rank`` (the adapter's rank, else the token total), reduced to the
    highest-ranked copy per call within the batch. Candidates without a parsable
    timestamp are not countable calls (they cannot be put on a day) and are dropped."""
    frame = pl.from_arrow(raw)
    assert isinstance(frame, pl.DataFrame)
    frame = frame.with_columns(
        pl.when(pl.col("message_id").is_not_null())
        .then(pl.lit("m"))
        .otherwise(pl.col("session_id"))
        .alias("_scope"),
        pl.when(pl.col("message_id").is_not_null())
        .then(pl.col("request_id"))
        .otherwise(pl.col("native_id"))
        .alias("_key"),
    )
    frame = with_id(frame, "call_id", provider, ["_scope", "message_id", "_key"])
    given = "given_id" in frame.columns
    if given:
        frame = frame.with_columns(pl.coalesce("given_id", "call_id").alias("call_id"))
    tokens = ["input_tokens", "cache_write_tokens", "cache_read_tokens", "output_tokens"]
    frame = (
        frame.with_columns(
            utc_timestamp(pl.col("ts")).alias("ts"),
            pl.sum_horizontal(tokens).alias("total_tokens"),
            _provider(provider, given),
            _source_id(frame, source_id),
        )
        .with_columns(pl.coalesce("rank", "total_tokens").alias("merge_rank"))
        .filter(pl.col("ts").is_not_null())
        .sort(
            ["merge_rank", "session_id", "source_offset", "source_id"],
            descending=[True, False, False, False],
        )
        .unique("call_id", keep="first", maintain_order=True)
        .select(
            "call_id",
            "provider",
            "session_id",
            "message_id",
            "request_id",
            "is_sidechain",
            "ts",
            "model",
            "input_tokens",
            "cache_write_tokens",
            "cache_write_1h_tokens",
            "cache_read_tokens",
            "output_tokens",
            "reasoning_tokens",
            "total_tokens",
            "source_id",
            "source_offset",
            "merge_rank",
            "native_id",
            pl.col("per_session").fill_null(False),
        )
    )
    return frame.to_arrow()


def normalize_sessions(raw: pa.Table, provider: str) -> pa.Table:
    """One metadata row per session, merged in arrival order the way the catalog merges
    across batches: the first known parent and project path, the latest git branch and
    CLI version, the highest-ranked title (the latest among equals), the latest thread
    index token figure; titles redacted."""
    frame = pl.from_arrow(raw)
    assert isinstance(frame, pl.DataFrame)
    frame = frame.with_row_index("_order")
    keys = ["session_id", "given_provider"]
    merged = frame.group_by(keys, maintain_order=True).agg(
        pl.col("parent_session_id").drop_nulls().first(),
        pl.col("project_path").drop_nulls().first(),
        pl.col("git_branch").drop_nulls().last(),
        pl.col("cli_version").drop_nulls().last(),
        pl.col("model").drop_nulls().last(),
        pl.col("preview").drop_nulls().last(),
        pl.col("archived").drop_nulls().last(),
        pl.col("index_tokens").drop_nulls().last(),
        pl.col("hidden").drop_nulls().last(),
        utc_timestamp(pl.col("started_at")).min(),
        utc_timestamp(pl.col("updated_at")).max(),
    )
    titles = (
        frame.filter(pl.col("title").is_not_null())
        .sort(["title_rank", "_order"])
        .group_by(keys)
        .agg(pl.col("title").last(), pl.col("title_rank").last())
    )
    return (
        merged.join(titles, on=keys, how="left", nulls_equal=True)
        .select(
            _provider(provider, True),
            "session_id",
            "parent_session_id",
            "project_path",
            redact(pl.col("title")).alias("title"),
            "title_rank",
            "git_branch",
            "cli_version",
            "model",
            redact(pl.col("preview")).alias("preview"),
            "archived",
            pl.col("started_at").alias("hint_started_at"),
            pl.col("updated_at").alias("hint_updated_at"),
            "index_tokens",
            pl.col("hidden").fill_null(False),
        )
        .to_arrow()
    )


def stream_context(events: pa.Table, source_id: str) -> pa.Table:
    """What the next commit of ``source_id`` may continue (see :mod:`.streams`): the
    last of its raw ``events`` when it is prose, tagged with ``source_id``; else no row."""
    last = events.slice(max(events.num_rows - 1, 0))
    if not (last.num_rows and last["text"][0].is_valid and last["block_type"][0].as_py() in PROSE):
        last = last.slice(0, 0)
    return with_constant(last, "source_id", source_id)


def transform_batch(
    raw: RawTables, *, provider: str, source_id: str = "", context: pa.Table | None = None
) -> CatalogRows:
    """Normalize one raw batch of ``provider`` (read from ``source_id``, unless the raw
    tables carry a ``source_id`` column). ``context`` holds the raw events the batch's
    sources ended on in the previous commit (:func:`stream_context`)."""
    events, amended = _normalize_events(raw.events, provider, source_id, context)
    return CatalogRows(
        events=events,
        usage=normalize_usage(raw.usage, provider, source_id),
        sessions=normalize_sessions(raw.sessions, provider),
        retractions=with_constant(raw.retractions, "provider", provider),
        amended=amended,
        rate_limits=normalize_rate_limits(raw.rate_limits, provider, source_id),
    )
