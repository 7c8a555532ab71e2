"""Purging a session for good: ``agentlake sessions purge ID [--confirm OPERATION_ID]``.

A purge is irreversible, so it is done in two steps. :func:`preview` counts what would
go — the session's row, its archived versions, events, calls, rate-limit snapshots,
tags, its events' postings in the search index and their pending withdrawals — for the
session and every session of its sub-agent subtree (a parent is purged with its
children: their transcripts were spawned from it), and names the scope by an operation
id, a digest of the sessions, the counts and the ids of every row. :func:`purge` with
that id recomputes the scope under the writer lock and deletes exactly it, in one
transaction with a content-free receipt (``purge_receipts``), the revocation of every
purged session (``purge_revocations``) and the audit row. If anything changed since the
preview (an import added events, a tag was set) it refuses with the new preview; a
repeated confirmation of a done purge returns the stored receipt.

Revocation: the load stage withholds every row of a revoked session that a later import
reads (the same bytes read again, or the transcript's later appends: the whole session
stays out) and counts them in the import's receipt. Only ``import --allow-purged``
brings such sessions back (agentlake.load.load.CatalogWriter).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final, Literal

import duckdb
import orjson

from agentlake import sql
from agentlake.errors import ConfigurationError, NotFoundError
from agentlake.load.catalog import open_for_read, run_script, statements
from agentlake.load.lake import Catalog
from agentlake.read.names import session_named

from .audit import record
from .authz import Authorization
from .writes import mutation

#: The tables a purge deletes rows of, in the order counts are shown. Any other table
#: with a session's rows (or its events') joins this list, sql/queries/purge_scope.sql
#: and purge_delete.sql (tests/pipeline/test_purge.py scans every table with a
#: ``session_id`` or ``event_id`` column after a purge).
TABLES: Final[tuple[str, ...]] = (
    "sessions", "session_versions", "events", "usage", "rate_limits", "session_tags",
    "search_docs", "search_postings", "search_withdrawn", "search_vectors", "vector_withdrawn",
)  # fmt: skip
RECEIPT_VERSION: Final = 1

#: Tests only: called once the rows are deleted and the receipt written, before commit.
PurgeFault = Callable[[Literal["after-delete"]], None]


@dataclass(frozen=True, slots=True)
class PurgePreview:
    """What a purge of one session would delete, and the operation id naming exactly
    that scope (stable while nothing in it changes)."""

    workspace: str
    provider: str
    session_id: str
    children: tuple[str, ...]  # the sessions of its sub-agent subtree, purged with it
    counts: Mapping[str, int]
    digests: Mapping[str, str] = field(repr=False)
    operation_id: str = ""

    @property
    def session_ids(self) -> list[str]:
        """The session named first, then its subtree."""
        return [self.session_id, *self.children]

    def to_dict(self) -> dict[str, Any]:
        """The preview as ``sessions purge ID --json`` prints it."""
        return {
            "status": "preview", "workspace": self.workspace, "provider": self.provider,
            "session_id": self.session_id, "children": list(self.children),
            "counts": dict(self.counts), "operation_id": self.operation_id,
        }  # fmt: skip


@dataclass(frozen=True, slots=True)
class PurgeReceipt:
    """The content-free receipt of a purge (``purge_receipts``); ``repeated`` when a
    confirmation of a purge already done returned it."""

    workspace: str
    operation_id: str
    provider: str
    session_id: str
    session_ids: tuple[str, ...]
    counts: Mapping[str, int]
    digests: Mapping[str, str]
    purged_at: datetime
    actor: str
    repeated: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The receipt as ``sessions purge ID --confirm OPID --json`` prints it."""
        return {
            "status": "repeated" if self.repeated else "purged",
            "receipt_version": RECEIPT_VERSION, "workspace": self.workspace,
            "operation_id": self.operation_id, "provider": self.provider,
            "session_id": self.session_id, "session_ids": list(self.session_ids),
            "counts": dict(self.counts), "digests": dict(self.digests),
            "purged_at": self.purged_at.isoformat(), "actor": self.actor,
        }  # fmt: skip


class ScopeChanged(ConfigurationError):
    """The scope differs from the one the confirmed operation id names (exit 2); carries
    the new preview."""

    def __init__(self, message: str, preview: PurgePreview) -> None:
        super().__init__(message)
        self.preview = preview


def preview(catalog: Catalog, auth: Authorization, ident: str) -> PurgePreview:
    """What purging the session ``ident`` (an id or a unique prefix) of
    ``auth.workspace`` would delete. A session of another workspace, or one already
    purged, is :class:`NotFoundError` (a purged one's message names its receipt)."""
    with open_for_read(catalog) as con:
        return _scope(con, auth.workspace, ident)


def purge(
    catalog: Catalog,
    auth: Authorization,
    ident: str,
    *,
    confirm: str,
    wait: bool = False,
    faults: PurgeFault | None = None,
) -> PurgeReceipt:
    """Purge the scope the operation id ``confirm`` names: the session ``ident`` and its
    subtree, in one transaction with the receipt, the revocations and the audit row. A
    scope that no longer matches ``confirm`` is :class:`ScopeChanged` (nothing is
    deleted); a ``confirm`` of a purge already done returns its stored receipt."""
    confirm = confirm.strip()
    with mutation(catalog, workspace=auth.workspace, wait=wait) as con:
        done = receipt_of(con, auth.workspace, operation_id=confirm)
        if done is not None and _names(done, ident):
            return done
        scope = _scope(con, auth.workspace, ident)
        if scope.operation_id != confirm:
            raise ScopeChanged(
                f"the scope of purging session {scope.session_id} is not the one operation "
                f"{confirm!r} names (it changed since the preview, or the id is another "
                f"session's); nothing was deleted; review the new preview and confirm "
                f"with --confirm {scope.operation_id}",
                scope,
            )
        params = {"workspace": auth.workspace}
        run_script(con, sql.query("purge_prepare"), params)
        run_script(con, sql.query("search_index_remove"), params)
        run_script(con, sql.query("purge_delete"), params)
        counts_json = orjson.dumps(dict(scope.counts)).decode()
        digests_json = orjson.dumps(dict(scope.digests)).decode()
        values: dict[str, object] = {
            **params, "operation_id": scope.operation_id, "provider": scope.provider,
            "session_id": scope.session_id, "session_ids": scope.session_ids,
            "counts": counts_json, "digests": digests_json, "actor": auth.actor,
        }  # fmt: skip
        revoke, insert, stamped = statements(sql.query("purge_receipt_insert"))
        run_script(con, revoke, _bound(revoke, values))
        con.execute(insert, _bound(insert, values))
        row = con.execute(stamped, _bound(stamped, values)).fetchone()
        assert row is not None
        record(
            con, auth, provider=scope.provider, session_id=scope.session_id,
            counts=scope.counts, digest=scope.operation_id,
        )  # fmt: skip
        if faults is not None:
            faults("after-delete")
        return PurgeReceipt(
            auth.workspace, scope.operation_id, scope.provider, scope.session_id,
            tuple(scope.session_ids), dict(scope.counts), dict(scope.digests),
            row[0].replace(tzinfo=UTC), auth.actor,
        )  # fmt: skip


def receipt_of(
    con: duckdb.DuckDBPyConnection,
    workspace: str,
    *,
    operation_id: str | None = None,
    session_id: str | None = None,
) -> PurgeReceipt | None:
    """The stored receipt of ``workspace``'s purge ``operation_id``, or else of the
    newest purge that deleted ``session_id``; ``None`` when there is none."""
    row = con.execute(
        sql.query("purge_receipt_get"),
        {"workspace": workspace, "operation_id": operation_id, "session_id": session_id},
    ).fetchone()
    if row is None:
        return None
    op, provider, sid, sids, counts, digests, at, actor = row
    return PurgeReceipt(
        workspace, str(op), str(provider), str(sid), tuple(sids), orjson.loads(counts),
        orjson.loads(digests), at.replace(tzinfo=UTC), str(actor), repeated=True,
    )  # fmt: skip


def _names(receipt: PurgeReceipt, ident: str) -> bool:
    """Whether ``ident`` names the receipt's session (its id or a prefix of it)."""
    ident = ident.strip()
    return bool(ident) and receipt.session_id.startswith(ident)


def _scope(con: duckdb.DuckDBPyConnection, workspace: str, ident: str) -> PurgePreview:
    """The scope of purging ``ident`` (temp table ``purge_scope`` holds its sessions on
    ``con`` afterwards)."""
    try:
        provider, session_id = session_named(con, workspace, ident)
    except NotFoundError:
        done = receipt_of(con, workspace, session_id=ident.strip())
        if done is None:
            raise
        raise NotFoundError(
            f"session {ident.strip()!r} was purged on {done.purged_at:%Y-%m-%d %H:%M:%S} UTC "
            f"by {done.actor} (operation {done.operation_id}); nothing is left to purge"
        ) from None
    row = con.execute(
        sql.query("sessions_subtree"),
        # hidden sessions too: a purge takes the whole subtree, hidden or not
        {"workspace": workspace, "provider": provider, "session_id": session_id,
         "include_hidden": True},
    ).fetchone()  # fmt: skip
    subtree = [str(s) for s in (row[2] if row and row[2] else [])]
    children = tuple(s for s in subtree if s != session_id)
    con.execute("CREATE OR REPLACE TEMP TABLE purge_scope (provider VARCHAR, session_id VARCHAR)")
    con.executemany(
        "INSERT INTO purge_scope VALUES (?, ?)",
        [(provider, s) for s in (session_id, *children)],
    )
    found = {
        str(t): (int(n), str(d))
        for t, n, d in con.execute(sql.query("purge_scope"), {"workspace": workspace}).fetchall()
    }
    counts: dict[str, int] = {t: found.get(t, (0, ""))[0] for t in TABLES}
    digests: dict[str, str] = {t: found[t][1] for t in TABLES if t in found}
    named = orjson.dumps(
        {"workspace": workspace, "provider": provider, "sessions": [session_id, *children],
         "counts": counts, "digests": digests},
        option=orjson.OPT_SORT_KEYS,
    )  # fmt: skip
    operation_id = "purge-" + hashlib.sha256(named).hexdigest()[:32]
    return PurgePreview(workspace, provider, session_id, children, counts, digests, operation_id)


def _bound(statement: str, values: Mapping[str, object]) -> dict[str, object]:
    """The ``values`` ``statement`` names as ``$name`` parameters."""
    import re

    return {k: values[k] for k in dict.fromkeys(re.findall(r"\$([A-Za-z_]\w*)", statement))}
