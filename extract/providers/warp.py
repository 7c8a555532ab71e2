"""Warp terminal (Agent Mode): the ``warp.sqlite`` store (provider-formats-more §7).

Discovery: ``warp.sqlite`` (and the TUI build's ``tui/warp.sqlite``) in Warp's state
directory, never its ``-wal``/``-shm`` files: ``$XDG_STATE_HOME/warp-terminal`` (default
``~/.local/state/warp-terminal``) on Linux, the app-group container
``~/Library/Group Containers/2BBY89MBSN.dev.warp/Library/Application Support/
dev.warp.Warp-Stable`` and the older ``~/Library/Application Support/dev.warp.Warp-Stable``
on macOS, ``%LOCALAPPDATA%\\warp\\Warp\\data`` on Windows [?]. Preview/Dev channels use
other directory names the reference does not give; they are not searched.

The database is live and in WAL mode: the framework opens it read-only, and every query
of one read runs inside ONE read transaction (``BEGIN`` … ``ROLLBACK``), so all of them
see the same snapshot even while Warp writes. It is re-read whole when it changes; rows
merge by identity.

Mapping (columns absent from an older store are read as null):

* ``ai_queries`` — one row per exchange, keyed by ``exchange_id``, grouped into a
  session by ``conversation_id``. Each item of the ``input`` JSON list is one block:
  ``{"Query": {"text", "context"}}`` is the user's prompt (``text``); another variant is
  kept as a system line naming it [?]. Only a conversation's first exchange is known to
  hold the query; later ones are often ``[]`` [peer], so those exchanges have no prompt.
  ``output_status`` (a status such as ``"Completed"``, not the agent's text) is one
  system event per exchange, so each exchange is recorded with its time and model
  (``model_id``; ``planning_model_id``/``coding_model_id`` are not imported). Session
  fields: ``working_directory`` (else a context ``Directory.pwd`` [peer]) is the project,
  a context ``Git.head`` [peer] the branch, ``start_ts`` the times, the latest
  ``model_id`` the model. The agent's own output lives in ``agent_tasks.task``, a
  protobuf message this adapter does not decode, and is not imported.
* ``agent_conversations`` — ``conversation_data`` JSON: ``parent_conversation_id``
  links a sub-agent to its parent; a fork (``forked_from_server_conversation_token``)
  links to the conversation holding that ``server_conversation_token`` when the store
  has it; ``summary`` is the title (rank 1, a summary), else ``agent_name`` (rank 0);
  ``last_modified_at`` dates the session's last update and its token totals.
* ``blocks`` — a terminal command block whose ``ai_metadata`` names a
  ``conversation_id`` was run by the agent: ``stylized_command`` is a tool call and
  ``stylized_output`` its result (ANSI styling removed), keyed by ``action_id``.

Token rule: ``conversation_usage_metadata.token_usage[]`` holds, per model, the
conversation's CUMULATIVE ``warp_tokens``, ``byok_tokens`` and
``custom_endpoint_tokens`` — totals only, with no input/output/cache split. Each
(conversation, model) is ONE usage row of session granularity (``per_session``, native
id ``session-total:<model>``, no message id), ranked by its total, so the latest
snapshot replaces an earlier one and snapshots are never summed. The total is stored as
``input_tokens`` (an agent's tokens are overwhelmingly re-sent context, so of the kinds a
report shows, input is the least wrong) and the row's model is ``warp:<model_id>``: no
price matches that name, so its cost is NULL and ``report --unpriced`` lists it. Pricing
the total at any one rate would invent a split; a user who wants an estimate can pin a
price to the ``warp:`` name. Credits and ``total_provider_cost_in_cents`` are not
imported (the catalog has no column for a cost the agent reports).

Format drift: the store has no format version. A table this adapter reads that lacks
one of the columns identifying its rows (``ai_queries.exchange_id``/``conversation_id``,
``agent_conversations.conversation_id``/``conversation_data``) means Warp changed its
schema in a way this adapter does not know: the store is refused (``FormatDrift``)
rather than read as empty. A missing table is an older or newer store and yields
nothing. A row whose JSON cannot be read is skipped (a database row has no byte span to
reject) and still counted as read.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import orjson

from ..adapter import FormatDrift, SourceContext, one_snapshot
from ..rows import RowSink
from ..sources import RelParts, Root, SourceFile
from ..values import json_text, token_count

PROVIDER_ID: Final = "warp"
ADAPTER_VERSION: Final = "1.0"
STORE_FORMAT: Final = "warp-sqlite"
STORE_NAME: Final = "warp.sqlite"
SESSION_TOTAL: Final = "session-total"
#: Prefix of the model name of a total-only usage row: it keeps the row unpriced.
TOTAL_MODEL_PREFIX: Final = "warp:"

_MAC_GROUP: Final = (
    "Library", "Group Containers", "2BBY89MBSN.dev.warp", "Library", "Application Support",
    "dev.warp.Warp-Stable",
)  # fmt: skip
_MAC_LEGACY: Final = ("Library", "Application Support", "dev.warp.Warp-Stable")
_WINDOWS: Final = ("AppData", "Local", "warp", "Warp", "data")

# Columns read per table; the first ones of each identify its rows (drift when absent).
_QUERY_COLUMNS: Final = (
    "exchange_id", "conversation_id", "start_ts", "input", "working_directory",
    "output_status", "model_id",
)  # fmt: skip
_CONVERSATION_COLUMNS: Final = (
    "conversation_id", "conversation_data", "last_modified_at", "summary",
)  # fmt: skip
_BLOCK_COLUMNS: Final = ("rowid", "ai_metadata", "stylized_command", "stylized_output")
_ANSI: Final = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
_STAMP: Final = re.compile(
    r"^(\d{4}-\d\d-\d\d)[ T](\d\d:\d\d:\d\d)(\.\d+)?[ ]?([Zz]|[+-]\d\d:?\d\d)?$"
)


def roots(home: Path, env: Mapping[str, str]) -> list[Root]:
    """Warp's state directory on Linux (``$XDG_STATE_HOME`` when absolute), macOS (the
    app-group container and the older location) and Windows, all under ``home``."""
    state = env.get("XDG_STATE_HOME", "").strip()
    if state and Path(state).is_absolute():
        linux = Root(PROVIDER_ID, Path(state) / "warp-terminal", "XDG_STATE_HOME", max_depth=2)
    else:
        linux = Root(PROVIDER_ID, home / ".local" / "state" / "warp-terminal", "default",
                     max_depth=2)  # fmt: skip
    return [
        linux,
        Root(PROVIDER_ID, home.joinpath(*_MAC_GROUP), "default", max_depth=2),
        Root(PROVIDER_ID, home.joinpath(*_MAC_LEGACY), "default", max_depth=2),
        Root(PROVIDER_ID, home.joinpath(*_WINDOWS), "default", max_depth=2),
    ]


def owns_store(rel: RelParts) -> bool:
    """``warp.sqlite`` or the TUI build's ``tui/warp.sqlite`` (never ``-wal``/``-shm``)."""
    return rel == (STORE_NAME,) or rel == ("tui", STORE_NAME)


def instant(value: Any) -> str | None:
    """A stored time as ISO-8601 with an offset: SQLite ``TIMESTAMP`` text without a zone
    is read as UTC [?]; epoch numbers as seconds (milliseconds when very large)."""
    if type(value) is str:
        match = _STAMP.match(value.strip())
        if match is None:
            return None
        day, clock, fraction, zone = match.groups()
        return f"{day}T{clock}{fraction or ''}{zone or 'Z'}"
    if type(value) in (int, float) and value > 0:
        seconds = value / 1000 if value > 1e11 else value
        try:
            moment = datetime.fromtimestamp(seconds, UTC)
        except (OverflowError, ValueError, OSError):
            return None
        return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return None


def _json(value: Any) -> Any:
    """A TEXT/BLOB column holding JSON, parsed; ``None`` when it is not JSON."""
    if type(value) not in (str, bytes):
        return None
    try:
        return orjson.loads(value)
    except orjson.JSONDecodeError:
        return None


def _text(value: Any) -> str | None:
    """A non-empty string value (a BLOB decoded as UTF-8), else ``None``."""
    if type(value) is bytes:
        value = value.decode("utf-8", "replace")
    return value if type(value) is str and value.strip() else None


def _columns(con: sqlite3.Connection, table: str) -> set[str] | None:
    """The column names of ``table`` (lower case), ``None`` when it does not exist."""
    names = {str(row[1]).lower() for row in con.execute(f"PRAGMA table_info({table})")}
    return names or None


def _select(table: str, wanted: tuple[str, ...], present: set[str], where: str = "") -> str:
    """A SELECT of ``wanted`` columns in order, NULL for those the table lacks, in row
    order (the names come from this module's constants, never from input)."""
    exprs = ", ".join(c if c in present else f"NULL AS {c}" for c in wanted)
    return f"SELECT {exprs} FROM {table} {where} ORDER BY rowid"


def _require(table: str, present: set[str], identity: tuple[str, ...]) -> None:
    missing = [c for c in identity if c not in present]
    if missing:
        raise FormatDrift(
            f"Warp's {table} table has no {', '.join(missing)} column: a schema this "
            "adapter does not know"
        )


class _Conversation:
    """What the store says about one conversation (session)."""

    __slots__ = ("branch", "model", "parent", "project", "started", "updated")

    def __init__(self) -> None:
        self.project: str | None = None
        self.branch: str | None = None
        self.model: str | None = None
        self.started: str | None = None
        self.updated: str | None = None
        self.parent: str | None = None


class WarpStoreAdapter:
    """Maps ``warp.sqlite`` (see the module docstring)."""

    def locate(self, source: SourceFile) -> SourceContext:
        """The store holds many conversations; its context names none."""
        return SourceContext(source, "")

    def map_database(self, con: sqlite3.Connection, ctx: SourceContext, sink: RowSink) -> int:
        """Emit events, sessions and per-session totals; returns the rows read. All
        queries run in one read transaction: one consistent snapshot of the WAL store."""
        with one_snapshot(con):
            tables = {
                str(name).lower()
                for (name,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            }
            query_cols = _columns(con, "ai_queries") if "ai_queries" in tables else None
            conv_cols = (
                _columns(con, "agent_conversations") if "agent_conversations" in tables else None
            )
            block_cols = _columns(con, "blocks") if "blocks" in tables else None
            if block_cols is not None:
                block_cols.add("rowid")
            if query_cols is not None:
                _require("ai_queries", query_cols, _QUERY_COLUMNS[:2])
            if conv_cols is not None:
                _require("agent_conversations", conv_cols, _CONVERSATION_COLUMNS[:2])
            conversations: dict[str, _Conversation] = {}
            rows = 0
            if query_cols is not None:
                rows += self._queries(con, query_cols, conversations, sink)
            if conv_cols is not None:
                rows += self._conversations(con, conv_cols, conversations, sink)
            if block_cols is not None and "ai_metadata" in block_cols:
                rows += self._blocks(con, block_cols, conversations, sink)
        for cid, c in conversations.items():
            sink.session(
                cid, parent_session_id=c.parent, project_path=c.project, git_branch=c.branch,
                model=c.model, started_at=c.started, updated_at=c.updated,
            )  # fmt: skip
        return rows

    # -- exchanges -------------------------------------------------------------------
    def _queries(
        self,
        con: sqlite3.Connection,
        present: set[str],
        conversations: dict[str, _Conversation],
        sink: RowSink,
    ) -> int:
        rows = 0
        event = sink.event
        for exchange, cid, start, raw_input, cwd, status, model in con.execute(
            _select("ai_queries", _QUERY_COLUMNS, present)
        ):
            rows += 1
            exchange, cid = _text(exchange), _text(cid)
            if exchange is None or cid is None:
                continue
            c = conversations.setdefault(cid, _Conversation())
            ts, model = instant(start), _text(model)
            if ts is not None:
                c.started = ts if c.started is None or ts < c.started else c.started
                c.updated = ts if c.updated is None or ts > c.updated else c.updated
            if model is not None:
                c.model = model  # rows are read in insertion order: the latest wins
            if c.project is None:
                c.project = _text(cwd)
            items = _json(raw_input)
            items = items if isinstance(items, list) else []
            for block, item in enumerate(items):
                if not isinstance(item, dict) or len(item) != 1:
                    continue
                ((variant, body),) = item.items()
                if variant == "Query" and isinstance(body, dict):
                    self._context(body.get("context"), c)
                    text = body.get("text")
                    if type(text) is str and text:
                        event(cid, exchange, block, ts, "text", "user", text, 0, model=model)
                else:  # a kind of input the reference does not describe [?]
                    event(cid, exchange, block, ts, "system", "system", f"input: {variant}", 0,
                          model=model)  # fmt: skip
            if status is not None:
                shown = status if type(status) is str else json_text(status)
                event(cid, exchange, len(items), ts, "system", "system",
                      f"agent output: {shown}", 0, model=model)  # fmt: skip
        return rows

    @staticmethod
    def _context(context: Any, c: _Conversation) -> None:
        """Project and branch from a query's context items [peer]:
        ``{"Directory": {"pwd"}}`` and ``{"Git": {"head"}}``."""
        if not isinstance(context, list):
            return
        for item in context:
            if not isinstance(item, dict):
                continue
            directory, git = item.get("Directory"), item.get("Git")
            if isinstance(directory, dict) and c.project is None:
                c.project = _text(directory.get("pwd"))
            if isinstance(git, dict) and c.branch is None:
                c.branch = _text(git.get("head"))

    # -- conversations ---------------------------------------------------------------
    def _conversations(
        self,
        con: sqlite3.Connection,
        present: set[str],
        conversations: dict[str, _Conversation],
        sink: RowSink,
    ) -> int:
        rows = 0
        forks: dict[str, str] = {}  # conversation -> the server token it was forked from
        tokens: dict[str, str] = {}  # server token -> conversation
        for cid, raw, modified, summary in con.execute(
            _select("agent_conversations", _CONVERSATION_COLUMNS, present)
        ):
            rows += 1
            cid = _text(cid)
            if cid is None:
                continue
            c = conversations.setdefault(cid, _Conversation())
            ts = instant(modified)
            if ts is not None and (c.updated is None or ts > c.updated):
                c.updated = ts
            data = _json(raw)
            data = data if isinstance(data, dict) else {}
            title = _text(summary)
            name = _text(data.get("agent_name"))
            if title is not None:
                sink.session(cid, title=title, title_rank=1)
            elif name is not None:
                sink.session(cid, title=name, title_rank=0)
            parent = _text(data.get("parent_conversation_id"))
            if parent is not None and parent != cid:
                c.parent = parent
            if (token := _text(data.get("server_conversation_token"))) is not None:
                tokens[token] = cid
            if (forked := _text(data.get("forked_from_server_conversation_token"))) is not None:
                forks[cid] = forked
            usage = data.get("conversation_usage_metadata")
            if isinstance(usage, dict):
                self._totals(cid, usage.get("token_usage"), ts or c.updated, sink)
        for cid, forked in forks.items():
            origin = tokens.get(forked)
            c = conversations[cid]
            if c.parent is None and origin is not None and origin != cid:
                c.parent = origin
        return rows

    @staticmethod
    def _totals(cid: str, entries: Any, ts: str | None, sink: RowSink) -> None:
        """One session-granularity row per model: the sum of its three token counters,
        stored as input and unpriced (see the module docstring)."""
        if not isinstance(entries, list):
            return
        per_model: dict[str, int] = {}
        for entry in entries:
            if not isinstance(entry, dict) or (model := _text(entry.get("model_id"))) is None:
                continue
            total = sum(
                token_count(entry.get(k))
                for k in ("warp_tokens", "byok_tokens", "custom_endpoint_tokens")
            )
            per_model[model] = per_model.get(model, 0) + total  # listed twice: summed [?]
        for model, total in per_model.items():
            if total:
                sink.usage(
                    cid, None, None, f"{SESSION_TOTAL}:{model}", ts, TOTAL_MODEL_PREFIX + model,
                    total, 0, 0, 0, 0, 0, False, 0, rank=total, per_session=True,
                )  # fmt: skip

    # -- agent-run commands ----------------------------------------------------------
    def _blocks(
        self,
        con: sqlite3.Connection,
        present: set[str],
        conversations: dict[str, _Conversation],
        sink: RowSink,
    ) -> int:
        rows = 0
        query = _select("blocks", _BLOCK_COLUMNS, present,
                        "WHERE instr(ai_metadata, 'conversation_id') > 0")  # fmt: skip
        for rowid, raw, command, output in con.execute(query):
            rows += 1
            meta = _json(raw)
            if not isinstance(meta, dict) or (cid := _text(meta.get("conversation_id"))) is None:
                continue
            conversations.setdefault(cid, _Conversation())
            action = _text(meta.get("action_id"))
            native = f"action:{action}" if action else f"block:{rowid}"
            command_text = _plain(command)
            sink.event(
                cid, native, 0, None, "tool_use", "assistant", None, 0, tool_name="command",
                tool_call_id=action,
                tool_input=json_text({"command": command_text}) if command_text else None,
            )  # fmt: skip
            result = _plain(output)
            if result is not None:
                sink.event(cid, native, 1, None, "tool_result", "tool", result, 0,
                           tool_call_id=action)  # fmt: skip
        return rows


def _plain(value: Any) -> str | None:
    """A stylized terminal text without its ANSI escape sequences."""
    text = _text(value)
    return _ANSI.sub("", text) if text is not None else None
