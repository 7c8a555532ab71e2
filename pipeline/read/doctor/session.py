"""`agentlake doctor SESSION`: whether one session is in the workspace's catalog and from
which sources, or which file under the roots mentions it and why it is not imported."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

import duckdb

from agentlake import sql
from agentlake.errors import REMEDIES, ConfigurationError
from agentlake.errors import RESTART_REMEDY as _RESTART
from agentlake.extract.providers import ProviderSpec, by_id
from agentlake.extract.sources import HEAD_BYTES, head_mentions, walk_unowned
from agentlake.ingest.plan import Plan, PlannedSource, make_plan, select_providers
from agentlake.load.bindings import CatalogBindings
from agentlake.load.catalog import catalog_exists, open_for_read
from agentlake.load.checkpoint import Checkpoint, load_checkpoints
from agentlake.load.lake import Catalog
from agentlake.read.names import MIN_PREFIX

from .session_values import FileCandidate, SessionDiagnosis, SessionRecord, SessionSource
from .values import (
    IMPORT_REMEDY,
    MAX_MATCHES,
    CandidateState,
    as_utc,
    plural,
)


# -- explain_session -------------------------------------------------------------------
def explain_session(
    catalog: Catalog,
    workspace: str,
    session_id: str,
    *,
    home: Path,
    env: Mapping[str, str],
    providers: Sequence[str] = (),
) -> SessionDiagnosis:
    """Why the session ``session_id`` (full id or unique prefix) is or is not in this
    workspace's catalog. When it is not, provider-owned files under the roots whose path
    or first 64 KiB mention it are reported with the reason they are not imported, and
    look-alike files (under a root, owned by no predicate) whose path mentions it."""
    needle = session_id.strip()
    if len(needle) < MIN_PREFIX:
        raise ConfigurationError(
            f"session id prefix {session_id!r} is too short; give at least {MIN_PREFIX} characters"
        )
    specs = select_providers(providers)
    wanted = [s.id for s in specs] if providers else None
    if not catalog_exists(catalog):
        plan = make_plan({}, workspace=workspace, home=home, env=env, providers=specs)
        return _not_found(workspace, needle, False, specs, plan, _mentions(plan, needle), {}, {})
    with open_for_read(catalog) as con:
        rows = con.execute(
            sql.query("doctor_session_match"),
            {
                "workspace": workspace,
                "prefix": needle,
                "providers": wanted,
                "limit": MAX_MATCHES + 1,
            },
        ).fetchall()
        exact = [r for r in rows if r[1] == needle]
        chosen = exact if exact else rows
        if len(chosen) == 1:
            provider, sid, in_sessions = chosen[0]
            plan = make_plan(
                load_checkpoints(con, workspace),
                workspace=workspace, home=home, env=env, providers=[by_id(str(provider))],
                bindings=CatalogBindings(con, workspace),
            )  # fmt: skip
            return _found(
                con, workspace, needle, str(provider), str(sid), bool(in_sessions), plan
            )  # fmt: skip
        if chosen:
            ids = tuple(
                f"{p}:{s}" if len({r[0] for r in chosen}) > 1 else str(s)
                for p, s, _ in chosen[:MAX_MATCHES]
            )
            more = " (and more)" if len(chosen) > MAX_MATCHES else ""
            return SessionDiagnosis(
                workspace,
                needle,
                "ambiguous",
                f"{needle!r} matches several sessions in workspace {workspace!r}{more}; "
                "give more characters of the id",
                True,
                matches=ids,
            )
        checkpoints = load_checkpoints(con, workspace)
        plan = make_plan(
            checkpoints, workspace=workspace, home=home, env=env, providers=specs,
            bindings=CatalogBindings(con, workspace),
        )  # fmt: skip
        mentioned = _mentions(plan, needle)
        rejects = _source_rejects(
            con, workspace, [s.source_id for s, _ in mentioned if s.source_id in checkpoints]
        )
        diagnosis = _not_found(
            workspace, needle, True, specs, plan, mentioned, checkpoints, rejects
        )
        return _purged(con, diagnosis) or diagnosis


def _purged(con: duckdb.DuckDBPyConnection, diagnosis: SessionDiagnosis) -> SessionDiagnosis | None:
    """``diagnosis`` of a session not in the catalog said in words of its purge, when a
    purge deleted it (agentlake.manage.purge); ``None`` when none did."""
    from dataclasses import replace

    from agentlake.manage.purge import receipt_of

    done = receipt_of(con, diagnosis.workspace, session_id=diagnosis.query)
    if done is None:
        return None
    revoked = con.execute(
        "SELECT count(*) FROM purge_revocations WHERE workspace = ? AND operation_id = ?",
        [diagnosis.workspace, done.operation_id],
    ).fetchone()
    named = next((s for s in done.session_ids if s.startswith(diagnosis.query)), done.session_id)
    scope = (
        "" if named == done.session_id else f" with the sub-agent tree of session {done.session_id}"
    )
    message = (
        f"session {named} ({done.provider}) was purged{scope} on "
        f"{done.purged_at:%Y-%m-%d %H:%M:%S} UTC by {done.actor}, operation "
        f"{done.operation_id}: {done.counts.get('events', 0):,} events and "
        f"{done.counts.get('usage', 0):,} model calls of "
        f"{plural(len(done.session_ids), 'session')} deleted"
    )
    if revoked and int(revoked[0]):
        message += (
            "; later imports withhold its rows (its transcript's old bytes and later "
            "appends alike) unless run with 'agentlake import --allow-purged'"
        )
    return replace(diagnosis, status="purged", message=message)


def _source_rejects(
    con: duckdb.DuckDBPyConnection, workspace: str, source_ids: list[str]
) -> dict[str, dict[str, int]]:
    """Rejected spans per source and reason."""
    out: dict[str, dict[str, int]] = {}
    for sid, reason, n in con.execute(
        sql.query("doctor_source_rejects"), {"workspace": workspace, "source_ids": source_ids}
    ).fetchall():
        out.setdefault(str(sid), {})[str(reason)] = int(n)
    return out


def _found(
    con: duckdb.DuckDBPyConnection,
    workspace: str,
    needle: str,
    provider: str,
    session_id: str,
    in_sessions: bool,
    plan: Plan,
) -> SessionDiagnosis:
    now = {p.source_id: p for p in plan.sources}
    params = {"workspace": workspace, "provider": provider, "session_id": session_id}
    detail = con.execute(sql.query("doctor_session_detail"), params).fetchone()
    assert detail is not None
    rows = {"sessions": int(detail[0]), "events": int(detail[1]), "usage": int(detail[2])}
    parent, project, title, started, updated, lifecycle = detail[3:]
    record = SessionRecord(
        provider,
        session_id,
        in_sessions,
        parent,
        project,
        title,
        as_utc(started),
        as_utc(updated),
        lifecycle,
    )
    found = con.execute(sql.query("doctor_session_sources"), params).fetchall()
    rejects = _source_rejects(con, workspace, [str(r[0]) for r in found])
    sources = tuple(
        SessionSource(
            str(r[0]),
            r[1],
            r[2],
            r[3],
            r[4],
            r[5],
            int(r[6] or 0),
            int(r[7] or 0),
            int(r[8] or 0),
            int(r[9] or 0),
            rejects.get(str(r[0]), {}),
            now.get(str(r[0])),
        )
        for r in found
    )
    message = (
        f"session {session_id} ({provider}) is in workspace {workspace!r}: "
        f"{rows['events']:,} events and {rows['usage']:,} model calls from "
        f"{plural(len(sources), 'source')}"
    )
    refused = sum(1 for s in sources if s.refused)
    if refused:
        message += (
            f"; {refused} of them refused, so their newer lines are not imported "
            "(see its sources for reason and remedy)"
        )
    pending = sum(1 for s in sources if s.now is not None and s.now.action == "read")
    if pending:
        message += f"; {plural(pending, 'source')} with new data not imported yet ({IMPORT_REMEDY})"
    if not in_sessions:
        message += "; but it has no row in sessions (orphan rows)"
    message += _lifecycle_words(con, workspace, provider, session_id, lifecycle)
    return SessionDiagnosis(workspace, needle, "found", message, True, record, rows, sources)


def _lifecycle_words(
    con: duckdb.DuckDBPyConnection, workspace: str, provider: str, session_id: str,
    lifecycle: str | None,
) -> str:  # fmt: skip
    """What the message adds about a hidden session (``sessions hide``) and its tags."""
    from agentlake.read.lifecycle_filters import tags_of

    words = ""
    if lifecycle is not None and lifecycle != "active":
        words += (
            "; it is hidden ('agentlake sessions hide'): sessions list and show, search, "
            "reports and agentlake sql leave it out unless --include-hidden; "
            f"'agentlake sessions restore {session_id}' brings it back"
        )
    tags = tags_of(con, workspace, provider, session_id)
    if tags:
        words += f"; tagged {', '.join(tags)}"
    return words


def _mentions(plan: Plan, needle: str) -> list[tuple[PlannedSource, Literal["path", "content"]]]:
    """Planned sources whose path, or (for admitted files only) first 64 KiB, mention
    ``needle``. Refused paths (symlinks out of a root, unreadable files) are matched by
    path only: they are never opened."""
    raw = needle.encode()
    out: list[tuple[PlannedSource, Literal["path", "content"]]] = []
    for planned in plan.sources:
        if needle in str(planned.path):
            out.append((planned, "path"))
        elif planned.source is not None and head_mentions(planned.path, raw, HEAD_BYTES):
            out.append((planned, "content"))
    return out


def _not_found(
    workspace: str,
    needle: str,
    catalog_exists: bool,
    specs: Sequence[ProviderSpec],
    plan: Plan,
    mentioned: list[tuple[PlannedSource, Literal["path", "content"]]],
    checkpoints: Mapping[str, Checkpoint],
    rejects: Mapping[str, Mapping[str, int]],
) -> SessionDiagnosis:
    candidates = [
        _candidate(
            p, how, checkpoints.get(p.source_id), rejects.get(p.source_id, {}), catalog_exists
        )
        for p, how in mentioned
    ]
    by_id = {s.id: s for s in specs}
    for root in plan.roots:
        spec = by_id[root.provider]
        for path in walk_unowned(root, spec.formats):
            if needle in str(path.relative_to(root.path)):
                candidates.append(
                    FileCandidate(
                        root.provider,
                        path,
                        "path",
                        "look-alike",
                        None,
                        f"a look-alike: no {root.provider} file predicate owns it, so "
                        "agentlake never reads it",
                        None,
                    )
                )
    candidates.sort(key=lambda c: (c.matched_by != "path", c.provider, str(c.path)))
    where = f"workspace {workspace!r}" if catalog_exists else "the catalog (there is none yet)"
    message = f"session {needle} not found in {where}"
    if candidates:
        message += (
            f"; {plural(len(candidates), 'file')} under the provider roots "
            f"mention{'s' if len(candidates) == 1 else ''} it (see why each is not imported)"
        )
    else:
        message += "; no provider-owned file under the searched roots mentions it"
    return SessionDiagnosis(
        workspace,
        needle,
        "not-found",
        message,
        catalog_exists,
        candidates=tuple(candidates),
        roots_searched=tuple(dict.fromkeys(r.path for r in plan.roots)),
        files_searched=sum(1 for p in plan.sources if p.source is not None),
    )


def _candidate(
    planned: PlannedSource,
    how: Literal["path", "content"],
    checkpoint: Checkpoint | None,
    rejects: Mapping[str, int],
    catalog_exists: bool,
) -> FileCandidate:
    status = checkpoint.status if checkpoint else None
    state: CandidateState
    remedy: str | None
    code = planned.code
    if planned.continuity == "outside-root":
        state, reason = "outside-root", planned.message or "symlink points outside the root"
        remedy = REMEDIES["SOURCE_OUTSIDE_ROOT"]
    elif planned.continuity in ("unreadable", "not-a-file"):
        state, reason = "unreadable", planned.message or "cannot be read"
        remedy = REMEDIES.get(code or "SOURCE_UNREADABLE")
    elif planned.action == "refuse":
        state, reason = "refused", f"refused ({code}): {planned.message}"
        remedy = REMEDIES.get(code or "", _RESTART)
    elif planned.continuity == "superseded":
        state = "superseded"
        reason = planned.message or "another copy of the same transcript is preferred"
        remedy = None
    elif planned.continuity == "new":
        state = "not-imported"
        reason = "not imported yet" + ("" if catalog_exists else " (no catalog yet)")
        remedy = IMPORT_REMEDY
    elif planned.action == "read":
        state = "pending"
        reason = f"{planned.pending_bytes:,} bytes ({planned.continuity}) not imported yet"
        remedy = IMPORT_REMEDY
    else:
        state, remedy = "imported", None
        reason = "imported up to its checkpoint, yet no row of this session came from it" + (
            " (it only mentions the id in its content)" if how == "content" else ""
        )
        if rejects:
            reason += f"; {sum(rejects.values()):,} of its spans were rejected (see rejects)"
        if checkpoint and planned.source and planned.source.size > checkpoint.committed_offset:
            pending = planned.source.size - checkpoint.committed_offset
            reason += (
                f"; {pending:,} bytes after its committed offset wait for a final newline "
                "(a line still being written)"
            )
    return FileCandidate(
        planned.provider,
        planned.path,
        how,
        state,
        planned.continuity,
        reason,
        remedy,
        status,
        dict(rejects),
    )
