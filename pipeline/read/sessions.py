"""Session listing with stable cursors, and a bounded view of one session.

**Listing.** :func:`list_sessions` returns sessions newest first (update time, then
provider and session id, ascending, for ties) with keyset pagination. The first page
fixes a *snapshot*: the workspace's newest import at that moment. Later pages show the
sessions as of that snapshot — sessions created since are left out, and a session an
import changed since (new events, new title, new token total) keeps its position and
values of the snapshot (``session_versions``, see ``sql/005_session_snapshots.sql``) —
so paging through a listing neither skips nor repeats a session while imports run
between pages. The cursor is signed with the catalog's secret and bound to the
workspace, the filters and the ordering (:mod:`agentlake.read.cursors`).

Pages come from SQL (``sql/queries/sessions_list.sql``). Given an open *read-only*
connection, whose catalog cannot change while it is open (DuckDB's file lock keeps
writers out), the listing of its snapshot is read once and later pages and filters are
picked from it with polars — the same rows in the same order, without a query per page.

**Detail** (:mod:`agentlake.read.session_detail`, its names re-exported here).
:func:`show_session` resolves a full id or a unique prefix and returns the
session's metadata, its token totals by model, its place in the tree of parent links
with its own and its subtree's totals (:mod:`agentlake.read.rollup`), the latest rate-limit
snapshot it carried (:mod:`agentlake.read.limits`), and its timeline (ts, then seq). By
default the timeline is bounded (:class:`TimelineBounds`): the newest events are kept
first, and :class:`TimelineCut` says exactly how many events and bytes were left out of
each bucket. ``bounds=None`` streams every event in chunks instead.

**Index tokens.** ``index_tokens`` is the token total the provider's own thread index
records for the session (Codex ``state_5.sqlite``), null when it records none. It is
never a call and never in ``total_tokens`` (the sum of the session's calls): a listing
shows it, marked, in place of a total of 0 (a thread whose rollout is gone); when the
session has calls they win, and ``sessions show`` prints the index figure beside them,
for comparison, only when the two differ.

JSON shapes (``agentlake sessions … --json``; stable, new keys may be added)::

    sessions list → {"sessions": [SESSION, …], "next_cursor": str | null}
    SESSION = {"session_id", "provider", "parent_session_id", "project_path", "title",
               "first_prompt", "preview", "model", "started_at", "updated_at",
               "prompts", "events", "tool_calls", "total_tokens", "index_tokens",
               "lifecycle"}    ('active', or 'tombstoned': hidden, with --include-hidden)

    sessions show → {
      "session":  SESSION + {"git_branch", "cli_version", "archived", "tags": [str, …]},
      "parent":   {"session_id", "title", "known"} | null,
      "children": [{"session_id", "title", "started_at", "updated_at"}, …],
      "tokens":   [{"model", "calls", "input_tokens", "cache_write_tokens",
                    "cache_write_1h_tokens", "cache_read_tokens", "output_tokens",
                    "reasoning_tokens", "total_tokens"}, …],
      "tree":     {"root_session_id", "depth", "children_count", "subtree_sessions"},
      "totals":   {"own": TOTALS, "subtree": TOTALS},   (subtree: itself and every
                                                        descendant, each call once)
      TOTALS = {"calls", "input_tokens", "cache_write_tokens", "cache_write_1h_tokens",
                "cache_read_tokens", "output_tokens", "reasoning_tokens", "total_tokens"}
      "rate_limits": [{"provider", "limit_id", "window_kind", "window_minutes",
                       "plan_type", "used_percent", "resets_at", "resets_in_seconds",
                       "reset_passed", "observed_at", "age_seconds", "session_id"}, …],
                  (the latest snapshot of each limit window the session carried)
      "bounds":   {"max_prompts", "max_responses", "max_tool_events",
                   "message_bytes", "tool_bytes"} | null,          (null with --full)
      "cut":      {"prompts" | "responses" | "tools":
                     {"items", "kept", "omitted", "truncated",
                      "bytes", "shown_bytes", "omitted_bytes"}} | null,
      "timeline": [{"ts", "seq", "kind", "role", "model", "tool_name", "tool_call_id",
                    "is_error", "is_sidechain", "text", "tool_input", "bytes",
                    "shown_bytes", "truncated", "event_id"}, …]   (time order)
    }

Times are ISO 8601 in UTC. ``tool_input`` is the call's input as JSON text (a prefix of
it when ``truncated``); ``bytes`` is an event's UTF-8 size of text plus tool input and
``shown_bytes`` what the view carries of it.
"""

from __future__ import annotations

import bisect
import re
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING, Any, Final

import duckdb
import pyarrow as pa

from agentlake import sql
from agentlake.errors import ConfigurationError
from agentlake.load.catalog import CatalogRef, reading
from agentlake.read import cursors
from agentlake.read.names import provider_ids
from agentlake.read.session_detail import (
    DEFAULT_BOUNDS,
    TIMELINE_COLUMNS,
    BucketCut,
    SessionDetail,
    SessionInfo,
    SessionRef,
    TimelineBounds,
    TimelineCut,
    TimelineStream,
    show_session,
)
from agentlake.read.utc_tables import in_utc

if TYPE_CHECKING:
    import polars as pl

__all__ = [
    "DEFAULT_BOUNDS",
    "DEFAULT_LIMIT",
    "LISTED_COLUMNS",
    "MAX_LIMIT",
    "ORDER",
    "PIN_LIMIT",
    "TIMELINE_COLUMNS",
    "BucketCut",
    "SessionDetail",
    "SessionInfo",
    "SessionPage",
    "SessionRef",
    "TimelineBounds",
    "TimelineCut",
    "TimelineStream",
    "list_sessions",
    "parse_age",
    "show_session",
]

DEFAULT_LIMIT: Final = 25
MAX_LIMIT: Final = 500
ORDER: Final = "updated_at desc, provider, session_id"
_NULL_KEY: Final = -9223372036854775807  # order key of a session without an update time
_TEXT_COLUMNS: Final = ("title", "first_prompt", "preview")
PIN_LIMIT: Final = 100_000  # sessions a read-only connection keeps in memory per workspace
_AGE: Final = re.compile(r"^\s*(\d+)\s*([smhdw])\s*$")
_AGE_UNITS: Final = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}

LISTED_COLUMNS: Final = (
    "session_id", "provider", "parent_session_id", "project_path", "title", "first_prompt",
    "preview", "model", "started_at", "updated_at", "prompts", "events", "tool_calls",
    "total_tokens", "index_tokens", "lifecycle",
)  # fmt: skip


# -- values ------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class SessionPage:
    """One page of a listing: ``sessions`` (columns :data:`LISTED_COLUMNS`, newest
    first), the cursor of the next page (``None`` on the last one) and the snapshot (the
    import id) every page of this listing shows."""

    sessions: pa.Table
    next_cursor: str | None
    snapshot: int

    def to_dict(self) -> dict[str, Any]:
        """The documented JSON shape of ``sessions list``."""
        return {"sessions": self.sessions.to_pylist(), "next_cursor": self.next_cursor}


# -- listing -----------------------------------------------------------------------------
def parse_age(text: str) -> timedelta:
    """``30m``, ``12h``, ``7d``, ``2w`` (or ``45s``) as a positive duration."""
    match = _AGE.match(text)
    if not match or int(match.group(1)) == 0:
        raise ConfigurationError(
            f"--max-age must be a positive number and a unit such as 30m, 12h, 7d or 2w (got {text!r})"
        )
    return timedelta(**{_AGE_UNITS[match.group(2)]: int(match.group(1))})


def list_sessions(
    catalog: CatalogRef,
    workspace: str,
    *,
    provider: str | Sequence[str] | None = None,
    project: str | None = None,
    since: date | datetime | None = None,
    max_age: str | timedelta | None = None,
    text: str | None = None,
    tag: str | None = None,
    include_hidden: bool = False,
    limit: int = DEFAULT_LIMIT,
    cursor: str | None = None,
    now: datetime | None = None,
) -> SessionPage:
    """One page of the workspace's sessions, newest first.

    Filters: ``provider`` (ids or aliases), ``project`` (substring of the project path),
    ``since`` (updated at or after; a date means 00:00 UTC) or ``max_age`` (updated
    within this long before ``now``), ``text`` (case-insensitive substring of the title,
    the first prompt or the provider's preview), ``tag`` (sessions with this tag).
    Hidden sessions (``sessions hide``) are left out unless ``include_hidden``.
    ``cursor`` continues a listing made with
    the same workspace and filters, as of its first page's snapshot; anything else is
    refused with :class:`ConfigurationError`.
    """
    if not 1 <= limit <= MAX_LIMIT:
        raise ConfigurationError(f"--limit must be between 1 and {MAX_LIMIT} (got {limit})")
    if since is not None and max_age is not None:
        raise ConfigurationError("pass --since or --max-age, not both")
    age = parse_age(max_age) if isinstance(max_age, str) else max_age
    if age is not None and age <= timedelta(0):
        raise ConfigurationError("--max-age must be positive")
    since_at = _utc(since) if since is not None else None
    providers, project, text = _providers(provider), project or None, text or None
    if tag is not None:
        from agentlake.read.lifecycle_filters import check_tag

        check_tag(tag)
    filters = {
        "include_hidden": include_hidden,
        "tag": tag,
        "providers": providers,
        "project": project,
        "since": since_at.isoformat() if since_at else None,
        "max_age": str(max_age) if max_age is not None else None,
        "text": text,
    }
    with reading(catalog) as con:
        pin = _pin(con, workspace) if isinstance(catalog, duckdb.DuckDBPyConnection) else None
        if pin is not None:
            secret, current = pin.secret, pin.snapshot
        else:
            secret, current = _snapshot(con, workspace)
        if cursor:
            expect = {
                "kind": "sessions",
                "workspace": workspace,
                "order": ORDER,
                "filters": filters,
            }
            snapshot, bound, after = _cursor_state(cursors.decode(cursor, secret, expect=expect))
        else:
            snapshot, after = current, None
            if age is not None:
                since_at = (now or datetime.now(UTC)) - age
            bound = since_at.isoformat() if since_at else None
        query = _PageQuery(
            workspace=workspace,
            snapshot=snapshot,
            providers=tuple(providers),
            project=project,
            since=datetime.fromisoformat(bound) if bound else None,
            text=text,
            after=after,
            limit=limit,
            include_hidden=include_hidden,
            tag=tag,
        )
        # The pinned listing holds the visible sessions, untagged: lifecycle and tag
        # filters read from SQL.
        pinned = not include_hidden and tag is None
        if pinned and pin is not None and pin.table is not None and snapshot == pin.snapshot:
            table = _page_from_pin(pin, query)
        else:
            table = in_utc(con.execute(sql.query("sessions_list"), query.params()).to_arrow_table())
    next_cursor = None
    if table.num_rows > limit:
        table = table.slice(0, limit)
        last = table.slice(limit - 1, 1).select(["order_key", "provider", "session_id"])
        key = last.to_pylist()[0]
        next_cursor = cursors.encode(
            {
                "kind": "sessions",
                "workspace": workspace,
                "order": ORDER,
                "filters": filters,
                "snapshot": snapshot,
                "since": bound,
                "after": [key["order_key"], key["provider"], key["session_id"]],
            },
            secret,
        )
    return SessionPage(table.select(list(LISTED_COLUMNS)), next_cursor, snapshot)


@dataclass(frozen=True, slots=True)
class _PageQuery:
    """One page request, filters resolved (``since`` absolute, providers canonical)."""

    workspace: str
    snapshot: int
    providers: tuple[str, ...]
    project: str | None
    since: datetime | None
    text: str | None
    after: tuple[int, str, str] | None
    limit: int
    include_hidden: bool = False
    tag: str | None = None

    def params(self) -> dict[str, Any]:
        """The parameters of ``sessions_list.sql``."""
        after = self.after or (None, None, None)
        return {
            "workspace": self.workspace, "snapshot": self.snapshot,
            "providers": list(self.providers), "project": self.project, "since": self.since,
            "text": self.text, "include_hidden": self.include_hidden, "tag": self.tag,
            "after_key": after[0], "after_provider": after[1],
            "after_session": after[2], "limit": self.limit,
        }  # fmt: skip


@dataclass(frozen=True, slots=True)
class _Pin:
    """What a read-only connection sees of one workspace. It cannot change while the
    connection is open — DuckDB's file lock keeps every writer out — so the whole
    listing of its snapshot (in order, at most :data:`PIN_LIMIT` sessions) is read once;
    later pages and filters of that snapshot pick their rows from it with polars."""

    secret: str
    snapshot: int
    table: pa.Table | None  # the listing in order; None: over PIN_LIMIT (pages from SQL)
    keys: pl.DataFrame  # per row: position, filter columns, lower-cased searchable text
    descending: list[int]  # -order_key per row (ascending): a cursor's row by bisection


_pins: weakref.WeakKeyDictionary[duckdb.DuckDBPyConnection, dict[str, _Pin] | None] = (
    weakref.WeakKeyDictionary()
)


def _snapshot(con: duckdb.DuckDBPyConnection, workspace: str) -> tuple[str, int]:
    row = con.execute(sql.query("sessions_snapshot"), {"workspace": workspace}).fetchone()
    assert row is not None
    return str(row[0]), int(row[1])


def _pin(con: duckdb.DuckDBPyConnection, workspace: str) -> _Pin | None:
    """The pinned listing of ``workspace`` on ``con`` when ``con`` is read-only."""
    if con not in _pins:
        row = con.execute(sql.query("sessions_access_mode")).fetchone()
        _pins[con] = {} if row is not None and row[0] == "read_only" else None
    pins = _pins[con]
    if pins is None:
        return None
    if workspace not in pins:
        import polars as pl  # only a connection kept across calls pins its listing

        secret, snapshot = _snapshot(con, workspace)
        whole = _PageQuery(workspace, snapshot, (), None, None, None, None, PIN_LIMIT)
        table = in_utc(con.execute(sql.query("sessions_list"), whole.params()).to_arrow_table())
        over = table.num_rows > PIN_LIMIT  # too many to keep: every page comes from SQL
        if over:
            table = table.slice(0, 0)
        keys = (
            pl.DataFrame(table)
            .with_row_index("position")
            .select(
                "position", "order_key", "provider", "session_id", "project_path", "updated_at",
                pl.concat_str(_TEXT_COLUMNS, separator="\x00", ignore_nulls=True)
                .str.to_lowercase()
                .alias("text"),
            )
        )  # fmt: skip
        pins[workspace] = _Pin(
            secret,
            snapshot,
            None if over else table,
            keys,
            (-keys.get_column("order_key")).to_list(),
        )
    return pins[workspace]


def _page_from_pin(pin: _Pin, query: _PageQuery) -> pa.Table:
    """The rows ``sessions_list.sql`` returns for ``query``, taken from the pinned listing
    (same order and filters; text matched case-insensitively by Unicode lower case)."""
    import polars as pl

    assert pin.table is not None
    start = 0 if query.after is None else _position_after(pin, query.after)
    where: list[pl.Expr] = []
    if query.providers:
        where.append(pl.col("provider").is_in(list(query.providers)))
    if query.project is not None:
        where.append(pl.col("project_path").str.contains(query.project, literal=True))
    if query.since is not None:
        where.append(pl.col("updated_at") >= query.since)
    if query.text is not None:
        # Matches never span two fields: a NUL joins them and never occurs in text.
        needle = str(pl.Series([query.text]).str.to_lowercase()[0])
        where.append(pl.col("text").str.contains(needle, literal=True) & ("\x00" not in needle))
    if not where:
        return pin.table.slice(start, query.limit + 1)
    keys = pin.keys.slice(start)
    match = keys.select(pl.all_horizontal(where).fill_null(False)).to_series()
    positions = keys.get_column("position").filter(match).head(query.limit + 1)
    return pin.table.take(positions.to_arrow())


def _position_after(pin: _Pin, after: tuple[int, str, str]) -> int:
    """The position just after the row ``after`` (order key, provider, session id) in
    the pinned order: bisect on the order key, then step over its ties."""
    assert pin.table is not None
    key, provider, session = after
    low = bisect.bisect_left(pin.descending, -key)
    high = bisect.bisect_right(pin.descending, -key, lo=low)
    ties = zip(
        pin.table.column("provider").slice(low, high - low).to_pylist(),
        pin.table.column("session_id").slice(low, high - low).to_pylist(),
        strict=True,
    )
    return low + sum(1 for tie in ties if tie <= (provider, session))


def _cursor_state(state: dict[str, Any]) -> tuple[int, str | None, tuple[int, str, str]]:
    """Snapshot, resolved lower time bound and keyset position of a verified cursor."""
    snapshot, bound, after = state.get("snapshot"), state.get("since"), state.get("after")
    if (
        not isinstance(snapshot, int)
        or not (bound is None or isinstance(bound, str))
        or not (isinstance(after, list) and len(after) == 3)
        or not isinstance(after[0], int)
        or not all(isinstance(v, str) for v in after[1:])
    ):
        raise ConfigurationError("--cursor is not a sessions cursor; run the first page again")
    return snapshot, bound, (after[0], after[1], after[2])


def _providers(provider: str | Sequence[str] | None) -> list[str]:
    names = [provider] if isinstance(provider, str) else list(provider or ())
    return sorted(provider_ids(names))


def _utc(moment: date | datetime) -> datetime:
    if not isinstance(moment, datetime):
        return datetime(moment.year, moment.month, moment.day, tzinfo=UTC)
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
