"""One session in detail (``agentlake sessions show``): metadata, parent and children,
token totals, tree and rate limits, and its timeline, bounded or streamed in chunks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, fields, replace
from datetime import datetime
from typing import Any, Final, Literal

import duckdb
import orjson
import pyarrow as pa

from agentlake import sql
from agentlake.errors import ConfigurationError
from agentlake.load.catalog import CatalogRef, reading
from agentlake.read.lifecycle_filters import tags_of
from agentlake.read.limits import latest_limits
from agentlake.read.names import session_named
from agentlake.read.rollup import SessionTree, session_tree
from agentlake.read.utc_tables import in_utc, naive_in_utc, utc_schema

Bucket = Literal["prompts", "responses", "tools"]

_BUCKETS: Final[tuple[Bucket, ...]] = ("prompts", "responses", "tools")

TIMELINE_COLUMNS: Final = (
    "ts", "seq", "kind", "role", "model", "tool_name", "tool_call_id", "is_error",
    "is_sidechain", "text", "tool_input", "bytes", "shown_bytes", "truncated", "event_id",
)  # fmt: skip


# -- values ------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class SessionInfo:
    """A session's metadata (the ``sessions`` row)."""

    session_id: str
    provider: str
    parent_session_id: str | None
    project_path: str | None
    title: str | None
    first_prompt: str | None
    preview: str | None
    model: str | None
    started_at: datetime | None
    updated_at: datetime | None
    prompts: int
    events: int
    tool_calls: int
    total_tokens: int
    index_tokens: int | None  # the thread index's figure (never a call)
    git_branch: str | None
    cli_version: str | None
    lifecycle: str
    archived: bool | None
    tags: tuple[str, ...] = ()  # `agentlake sessions tag`, sorted


@dataclass(frozen=True, slots=True)
class SessionRef:
    """Another session named by this one (its parent or a child)."""

    session_id: str
    title: str | None
    started_at: datetime | None = None
    updated_at: datetime | None = None
    known: bool = True  # False: a parent id the catalog has no session for


@dataclass(frozen=True, slots=True)
class TimelineBounds:
    """How much of a session a bounded view shows: the newest events of each bucket up
    to its count, then text budgets (UTF-8 bytes) shared by prompts and responses, and
    by tool events (calls' inputs and results' text)."""

    max_prompts: int = 1_000
    max_responses: int = 2_000
    max_tool_events: int = 2_000
    message_bytes: int = 2 * 1024 * 1024
    tool_bytes: int = 1024 * 1024

    def __post_init__(self) -> None:
        if min(asdict(self).values()) < 0:
            raise ConfigurationError("timeline bounds must not be negative")


@dataclass(frozen=True, slots=True)
class BucketCut:
    """What a bounded view kept of one bucket (events and their UTF-8 bytes)."""

    items: int = 0
    kept: int = 0
    omitted: int = 0
    truncated: int = 0
    bytes: int = 0
    shown_bytes: int = 0
    omitted_bytes: int = 0


@dataclass(frozen=True, slots=True)
class TimelineCut:
    """What a bounded view left out, per bucket: ``prompts`` (prompt events),
    ``responses`` (responses, reasoning, summaries, system events) and ``tools``
    (tool calls and results). Cut events are always the oldest of their bucket."""

    prompts: BucketCut = field(default_factory=BucketCut)
    responses: BucketCut = field(default_factory=BucketCut)
    tools: BucketCut = field(default_factory=BucketCut)

    @property
    def anything(self) -> bool:
        """Whether any event or byte was left out."""
        return any(b.omitted or b.truncated for b in (self.prompts, self.responses, self.tools))


class TimelineStream:
    """Every event of one session in time order, read in chunks of ``chunk_rows`` each
    time it is iterated (from a fresh read of the catalog, or from the connection given;
    do not run other statements on that connection while iterating)."""

    def __init__(
        self,
        catalog: CatalogRef,
        workspace: str,
        provider: str,
        session_id: str,
        *,
        chunk_rows: int = 10_000,
    ) -> None:
        self.catalog = catalog
        self.params = {"workspace": workspace, "provider": provider, "session_id": session_id}
        self.chunk_rows = chunk_rows

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        with reading(self.catalog) as con:
            con.execute(sql.query("sessions_timeline_full"), self.params)
            reader = con.to_arrow_reader(self.chunk_rows)
            schema = utc_schema(reader.schema)
            for batch in reader:
                yield batch.cast(schema)


@dataclass(frozen=True, slots=True)
class SessionDetail:
    """One session: metadata, parent and children, token totals by model, its place in
    its tree with its own and subtree totals, its latest rate-limit snapshot, and its
    timeline — a table (bounded view; ``cut`` says what was left out) or a
    :class:`TimelineStream` (``bounds`` is ``None``: everything)."""

    session: SessionInfo
    parent: SessionRef | None
    children: tuple[SessionRef, ...]
    tokens: pa.Table
    timeline: pa.Table | TimelineStream
    bounds: TimelineBounds | None
    cut: TimelineCut | None
    tree: SessionTree | None = None
    rate_limits: pa.Table | None = None

    def header(self) -> dict[str, Any]:
        """The documented JSON shape of ``sessions show`` without ``timeline``."""
        return {
            "session": asdict(self.session),
            "parent": None
            if self.parent is None
            else {
                "session_id": self.parent.session_id,
                "title": self.parent.title,
                "known": self.parent.known,
            },
            "children": [
                {
                    "session_id": c.session_id,
                    "title": c.title,
                    "started_at": c.started_at,
                    "updated_at": c.updated_at,
                }
                for c in self.children
            ],
            "tokens": self.tokens.to_pylist(),
            **(self.tree or SessionTree(self.session.session_id)).to_json(),
            "rate_limits": [] if self.rate_limits is None else self.rate_limits.to_pylist(),
            "bounds": None if self.bounds is None else asdict(self.bounds),
            "cut": None if self.cut is None else asdict(self.cut),
        }

    def batches(self) -> Iterator[pa.RecordBatch]:
        """The timeline in chunks (columns :data:`TIMELINE_COLUMNS`)."""
        if isinstance(self.timeline, pa.Table):
            yield from self.timeline.to_batches()
        else:
            yield from self.timeline

    def write_json(self, write: Callable[[str], object]) -> None:
        """The documented JSON document of ``sessions show``, written piece by piece:
        the header, then the timeline one event per line as its chunks arrive."""
        header = orjson.dumps(self.header(), option=orjson.OPT_INDENT_2).decode()
        write(header[: header.rindex("}")].rstrip() + ',\n  "timeline": [')
        first = True
        for batch in self.batches():
            for event in batch.to_pylist():
                write(("\n    " if first else ",\n    ") + orjson.dumps(event).decode())
                first = False
        write("\n  ]\n}\n" if not first else "]\n}\n")


DEFAULT_BOUNDS: Final = TimelineBounds()


# -- detail ------------------------------------------------------------------------------
def show_session(
    catalog: CatalogRef,
    workspace: str,
    session: str,
    *,
    bounds: TimelineBounds | None = DEFAULT_BOUNDS,
    chunk_rows: int = 10_000,
    include_hidden: bool = False,
) -> SessionDetail:
    """The session whose id is ``session`` or starts with it (at least 4 characters).

    An unknown id, or one of another workspace, raises :class:`NotFoundError`; a prefix
    that several sessions share raises :class:`ConfigurationError` naming a few. With
    ``bounds`` the timeline is a bounded table and ``cut`` says what it left out; with
    ``bounds=None`` it is a :class:`TimelineStream` over every event.

    A hidden session (``sessions hide``) is not found, with a message saying it is
    hidden, unless ``include_hidden``: then it is shown, its ``lifecycle``
    ``'tombstoned'``. Hidden children leave its children and subtree totals likewise.
    """
    with reading(catalog) as con:
        provider, session_id = session_named(con, workspace, session, include_hidden=include_hidden)
        key = {"workspace": workspace, "provider": provider, "session_id": session_id}
        meta = (
            con.execute(sql.query("sessions_get"), {**key, "include_hidden": include_hidden})
            .to_arrow_table()
            .to_pylist()[0]
        )
        tokens = con.execute(sql.query("sessions_tokens"), key).to_arrow_table()
        tags = tags_of(con, workspace, provider, session_id)
        tree = session_tree(
            con, workspace, provider, session_id, children_count=len(meta["children"]),
            include_hidden=include_hidden,
        )  # fmt: skip
        limits = naive_in_utc(
            # the session shown: its snapshots too, hidden or not
            latest_limits(
                con, workspace, provider=provider, session_id=session_id, include_hidden=True
            )
        )
        if bounds is None:
            timeline: pa.Table | TimelineStream = TimelineStream(
                catalog, workspace, provider, session_id, chunk_rows=chunk_rows
            )
            cut = None
        else:
            timeline, cut = _bounded_timeline(con, key, bounds)
    info = SessionInfo(**{f.name: meta[f.name] for f in fields(SessionInfo) if f.name != "tags"})
    info = replace(info, tags=tags)
    parent = (
        SessionRef(info.parent_session_id, meta["parent_title"], known=bool(meta["parent_known"]))
        if info.parent_session_id
        else None
    )
    children = tuple(
        SessionRef(c["session_id"], c["title"], c["started_at"], c["updated_at"])
        for c in meta["children"]
    )
    return SessionDetail(info, parent, children, tokens, timeline, bounds, cut, tree, limits)


def _bounded_timeline(
    con: duckdb.DuckDBPyConnection, key: dict[str, str], bounds: TimelineBounds
) -> tuple[pa.Table, TimelineCut]:
    params = {
        **key,
        "max_prompts": bounds.max_prompts,
        "max_responses": bounds.max_responses,
        "max_tools": bounds.max_tool_events,
        "message_bytes": bounds.message_bytes,
        "tool_bytes": bounds.tool_bytes,
    }
    try:
        con.execute(sql.query("sessions_timeline_window"), params)
        totals = con.execute(sql.query("sessions_timeline_totals")).to_arrow_table()
        table = in_utc(con.execute(sql.query("sessions_timeline"), key).to_arrow_table())
    finally:
        con.execute(sql.query("sessions_timeline_drop"))
    table = _trim_truncated(table)
    # A bounded view keeps a few thousand events: summed in Python, without a frame.
    kept: dict[str, dict[str, int]] = {}
    for row in table.select(["bucket", "shown_bytes", "truncated"]).to_pylist():
        got = kept.setdefault(str(row["bucket"]), {"kept": 0, "shown_bytes": 0, "truncated": 0})
        got["kept"] += 1
        got["shown_bytes"] += int(row["shown_bytes"] or 0)
        got["truncated"] += int(bool(row["truncated"]))
    cuts: dict[str, BucketCut] = {}
    for total in totals.to_pylist():
        got = kept.get(str(total["bucket"]), {"kept": 0, "shown_bytes": 0, "truncated": 0})
        cuts[str(total["bucket"])] = BucketCut(
            items=int(total["items"]),
            kept=int(got["kept"]),
            omitted=int(total["items"]) - int(got["kept"]),
            truncated=int(got["truncated"]),
            bytes=int(total["bytes"]),
            shown_bytes=int(got["shown_bytes"]),
            omitted_bytes=int(total["bytes"]) - int(got["shown_bytes"]),
        )
    return table.select(list(TIMELINE_COLUMNS)), TimelineCut(**cuts)


def _trim_truncated(table: pa.Table) -> pa.Table:
    """Cut each truncated event (at most one per budget) to exactly its ``keep_bytes``
    UTF-8 bytes, text first, on a character boundary; add ``shown_bytes``."""
    shown = table.column("bytes")
    if not any(table.column("truncated").to_pylist()):
        # The usual view truncates nothing: no Arrow compute kernels to load.
        return table.append_column("shown_bytes", shown)
    import pyarrow.compute as pc

    mask = table.column("truncated")
    picked = table.filter(mask)
    if picked.num_rows:
        texts, inputs, sizes = [], [], []
        for row in picked.select(["text", "tool_input", "keep_bytes"]).to_pylist():
            room = int(row["keep_bytes"])
            text = _prefix(row["text"], room)
            room -= len(text.encode()) if text is not None else 0
            tool_input = _prefix(row["tool_input"], room)
            texts.append(text)
            inputs.append(tool_input)
            sizes.append(len((text or "").encode()) + len((tool_input or "").encode()))
        full_mask = pc.fill_null(mask, False)
        table = table.set_column(
            table.schema.get_field_index("text"),
            "text",
            pc.replace_with_mask(
                table.column("text").combine_chunks(),
                full_mask.combine_chunks(),
                pa.array(texts, pa.string()),
            ),
        )
        table = table.set_column(
            table.schema.get_field_index("tool_input"),
            "tool_input",
            pc.replace_with_mask(
                table.column("tool_input").combine_chunks(),
                full_mask.combine_chunks(),
                pa.array(inputs, pa.string()),
            ),
        )
        shown = pc.replace_with_mask(
            shown.combine_chunks(), full_mask.combine_chunks(), pa.array(sizes, pa.int64())
        )
    return table.append_column("shown_bytes", pc.cast(shown, pa.int64()))


def _prefix(text: str | None, size: int) -> str | None:
    """The longest prefix of ``text`` of at most ``size`` UTF-8 bytes."""
    if text is None:
        return None
    return text.encode()[: max(size, 0)].decode("utf-8", "ignore")
