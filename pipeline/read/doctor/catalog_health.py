"""`agentlake doctor`: roots, environment, the plan's refusals, rejects, imports and the
catalog's integrity, as a :class:`DoctorReport`."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, get_args

import duckdb

from agentlake import sql
from agentlake.errors import REMEDIES
from agentlake.errors import RESTART_REMEDY as _RESTART
from agentlake.extract.providers import ProviderSpec
from agentlake.extract.sources import Root
from agentlake.ingest.plan import Plan, make_plan, refusal_code, select_providers
from agentlake.load.bindings import CatalogBindings
from agentlake.load.catalog import catalog_exists, open_for_read
from agentlake.load.checkpoint import Checkpoint, Continuity, load_checkpoints
from agentlake.load.lake import Catalog, LakeCatalog

from .lake_health import lake_check
from .values import (
    RECENT_IMPORTS,
    CatalogCheck,
    DoctorReport,
    EnvSetting,
    ImportReceipt,
    IndexKind,
    IndexState,
    ProviderCheck,
    RefusedSource,
    RejectCount,
    RootCheck,
    SearchIndexCheck,
    VectorCheck,
    VectorState,
    as_utc,
)


# -- diagnose --------------------------------------------------------------------------
def diagnose(
    catalog: Catalog,
    workspace: str,
    *,
    home: Path,
    env: Mapping[str, str],
    providers: Sequence[str] = (),
    recent_imports: int = RECENT_IMPORTS,
    deep: bool = False,
) -> DoctorReport:
    """Check discovery, the plan and the catalog of ``workspace``. A missing catalog is
    part of the report (verdict ``no-catalog``); a locked or unusable one raises
    :class:`~agentlake.errors.CatalogLocked` / :class:`~agentlake.errors.CatalogUnusable`.

    The catalog's checks read counters and metadata, not its rows, so they take the same
    time on any catalog; ``deep`` also checks every event against the search index and
    every row for a missing session or source (scans of the whole workspace)."""
    specs = select_providers(providers)
    wanted = [s.id for s in specs] if providers else None
    if not catalog_exists(catalog):
        plan = make_plan({}, workspace=workspace, home=home, env=env, providers=specs)
        return _report(workspace, home, env, specs, plan, (), (), CatalogCheck(catalog, False))
    with open_for_read(catalog) as con:
        checkpoints = CheckpointsWhenAsked(con, workspace)
        plan = make_plan(
            checkpoints, workspace=workspace, home=home, env=env, providers=specs,
            bindings=CatalogBindings(con, workspace),
        )  # fmt: skip
        params = {"workspace": workspace, "providers": wanted}
        catalog_refused = con.execute(sql.query("doctor_refused_sources"), params).fetchall()
        rejects = tuple(
            RejectCount(str(p), str(r), int(n), int(b or 0))
            for p, r, n, b in con.execute(sql.query("doctor_rejects"), params).fetchall()
        )
        check = _catalog_check(con, catalog, workspace, recent_imports, deep=deep)
    return _report(workspace, home, env, specs, plan, catalog_refused, rejects, check)


class CheckpointsWhenAsked(Mapping[str, Checkpoint]):
    """The checkpoints of ``workspace`` in the catalog on ``con``, read at the first
    lookup: the planner looks one up per source it discovers, so where no provider root
    holds a file (doctor on another machine than the imports') none is read."""

    def __init__(self, con: duckdb.DuckDBPyConnection, workspace: str) -> None:
        self._con = con
        self._workspace = workspace
        self._loaded: dict[str, Checkpoint] | None = None

    def _all(self) -> dict[str, Checkpoint]:
        if self._loaded is None:
            self._loaded = load_checkpoints(self._con, self._workspace)
        return self._loaded

    def __getitem__(self, source_id: str) -> Checkpoint:
        return self._all()[source_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


def _report(
    workspace: str,
    home: Path,
    env: Mapping[str, str],
    specs: Sequence[ProviderSpec],
    plan: Plan,
    catalog_refused: Iterable[tuple[Any, ...]],
    rejects: tuple[RejectCount, ...],
    catalog: CatalogCheck,
) -> DoctorReport:
    refused = [
        RefusedSource(
            s.provider,
            s.path,
            s.source_id,
            s.continuity,
            s.code,
            s.message,
            REMEDIES.get(s.code or ""),
            "plan",
        )
        for s in plan.sources
        if s.action == "refuse"
    ]
    seen = {r.source_id for r in refused}
    for source_id, provider, path, continuity, refusal in catalog_refused:
        if source_id in seen:
            continue
        code = refusal_code(continuity)
        exists = Path(path).exists()
        remedy = (
            REMEDIES.get(code or "", _RESTART)
            if exists
            else "the file no longer exists; its imported data is kept"
        )
        refused.append(
            RefusedSource(
                provider,
                Path(path),
                source_id,
                continuity,
                code,
                refusal,
                remedy,
                "catalog",
                exists,
            )
        )
    refused.sort(key=lambda r: (r.provider, str(r.path)))
    checks = []
    for spec in specs:
        mine = [s for s in plan.sources if s.provider == spec.id]
        counts = Counter(s.continuity for s in mine)
        checks.append(
            ProviderCheck(
                provider=spec.id,
                env=_env_settings(spec, plan.roots, env),
                roots=tuple(_root_check(spec, r, env) for r in plan.roots if r.provider == spec.id),
                notes=_notes(spec, plan.roots, home, env),
                sources=len(mine),
                continuity={c: counts.get(c, 0) for c in get_args(Continuity)},
                refused=sum(1 for r in refused if r.provider == spec.id and r.file_exists),
                rejects={r.reason: r.count for r in rejects if r.provider == spec.id},
            )
        )
    return DoctorReport(workspace, home, tuple(checks), tuple(refused), rejects, catalog)


def _env_settings(
    spec: ProviderSpec, roots: Sequence[Root], env: Mapping[str, str]
) -> tuple[EnvSetting, ...]:
    return tuple(
        EnvSetting(
            name,
            env.get(name) or None,
            any(r.provider == spec.id and r.origin == name for r in roots),
        )
        for name in spec.env_overrides
    )


def _root_check(spec: ProviderSpec, root: Root, env: Mapping[str, str]) -> RootCheck:
    path = root.path
    exists = path.is_dir()
    readable = exists and os.access(path, os.R_OK | os.X_OK)
    warnings = [root.warning] if root.warning else []
    if root.origin in spec.env_overrides:
        name = root.origin
        if not path.is_absolute():
            warnings.append(
                f"{name}={env.get(name, '')!r} is relative, so {path} resolves against the "
                f"current directory ({Path.cwd()}); set an absolute path"
            )
        if path.parent.name == path.name:
            warnings.append(
                f"{name} seems to name the {path.name}/ directory itself ({path}); it should "
                f"name the directory that contains {path.name}/"
            )
        elif not exists:
            warnings.append(f"{name} is set but {path} does not exist; nothing is discovered there")
    if exists and not readable:
        warnings.append(f"{path} is not readable by this user; fix its permissions")
    return RootCheck(root.provider, path, root.origin, exists, readable, tuple(warnings))


def _notes(
    spec: ProviderSpec, roots: Sequence[Root], home: Path, env: Mapping[str, str]
) -> tuple[str, ...]:
    mine = [r for r in roots if r.provider == spec.id]
    notes = []
    if not any(r.path.is_dir() for r in mine):
        notes.append("none of its roots exists (not installed here, or never used)")
    in_force = [r.origin for r in mine if r.origin in spec.env_overrides]
    if in_force:
        defaults = spec.roots(home, {k: v for k, v in env.items() if k not in spec.env_overrides})
        used = {r.path for r in mine}
        for d in defaults:
            if d.path not in used and d.path.is_dir():
                notes.append(f"{d.path} exists but is not searched because {in_force[0]} is set")
    return tuple(dict.fromkeys(notes))


def _catalog_check(
    con: duckdb.DuckDBPyConnection, path: Catalog, workspace: str, recent: int, *, deep: bool
) -> CatalogCheck:
    params = {"workspace": workspace}
    row = con.execute(sql.query("doctor_schema_version")).fetchone()
    version = int(row[0]) if row and row[0] is not None else None
    tables = {
        str(n): int(c) for n, c in con.execute(sql.query("doctor_table_counts"), params).fetchall()
    }
    orphans = _orphans(con, workspace) if deep else None
    imports = tuple(
        ImportReceipt(
            int(r[0]), as_utc(r[1]), as_utc(r[2]), str(r[3]), *(int(v or 0) for v in r[4:])
        )
        for r in con.execute(
            sql.query("doctor_imports"), {"workspace": workspace, "limit": recent}
        ).fetchall()
    )
    by_status = {
        str(s): int(n) for s, n in con.execute(sql.query("doctor_import_status"), params).fetchall()
    }
    index = _index_check(con, workspace) if deep else _index_counters(con, workspace)
    vectors = _vector_check(con, workspace)
    lake = lake_check(con, path, workspace) if isinstance(path, LakeCatalog) else None
    return CatalogCheck(
        path, True, version, tables, index, orphans, imports, by_status, vectors, lake
    )


def _vector_check(con: duckdb.DuckDBPyConnection, workspace: str) -> VectorCheck:
    """The semantic vectors' state: counted from the vectors and the events above their
    watermark (an index on nothing: the embeddable events' kinds and import ids)."""
    from agentlake.load.embedder import ModelUnavailable, model_dir
    from agentlake.load.vectors import vector_lag

    behind = vector_lag(con, workspace)
    row = con.execute(
        "SELECT count(*) FROM search_vectors WHERE workspace = $ws", {"ws": workspace}
    ).fetchone()
    embedded = int(row[0]) if row else 0
    try:
        model_dir()
        unavailable = None
    except ModelUnavailable as missing:
        unavailable = str(missing)
    state: VectorState
    if unavailable is not None:
        state = "unavailable"
    elif behind.stale:
        state = "stale"
    elif behind.unembedded or behind.pending:
        state = "lagging"
    else:
        state = "ok" if embedded else "empty"
    return VectorCheck(state, embedded, behind.unembedded, behind.pending, behind.model,
                       unavailable)  # fmt: skip


def _orphans(con: duckdb.DuckDBPyConnection, workspace: str) -> dict[str, int]:
    cursor = con.execute(sql.query("doctor_orphans"), {"workspace": workspace})
    names = [d[0] for d in cursor.description or ()]
    row = cursor.fetchone() or ()
    return {n: int(v or 0) for n, v in zip(names, row, strict=True)}


def _index_present(con: duckdb.DuckDBPyConnection) -> bool:
    present = {
        f"{s}.{t}" for s, t in con.execute(sql.query("doctor_search_index_tables")).fetchall()
    }
    return {"main.search_postings", "main.search_state"} <= present


def _index_counters(con: duckdb.DuckDBPyConnection, workspace: str) -> SearchIndexCheck:
    """The index's state from its counters and its lag, without reading the events'
    text unless the index is empty or lags: counters that disagree with the index's
    tables make it stale; whether each event is indexed is left to :func:`_index_check`."""
    from agentlake.load.publish import above, lag, watermark

    if not _index_present(con):
        return _no_index(con, workspace)
    params = {"workspace": workspace}
    row = con.execute(sql.query("doctor_search_index_counts"), params).fetchone()
    assert row is not None
    docs, counted_docs, postings, counted_postings = (int(v) for v in row)
    behind = 0
    if lag(con, workspace).events:  # then count those with text (it reads their text)
        mark = above(watermark(con, workspace))
        statement = sql.query("doctor_search_lag").replace("/* above */", mark)
        found = con.execute(sql.inline(statement, params)).fetchone()
        behind = int(found[0]) if found else 0
    state: IndexState
    with_text: int | None = None
    if not docs or not postings:
        found = con.execute(sql.query("doctor_events_with_text"), params).fetchone()
        with_text = int(found[0]) if found else 0
        state = "missing" if with_text > behind else "lagging" if behind else "empty"
        return SearchIndexCheck("agentlake", state, with_text, 0, None, None, behind)
    if docs != counted_docs or postings != counted_postings:
        state = "stale"
    else:
        state = "lagging" if behind else "ok"
    return SearchIndexCheck("agentlake", state, with_text, docs, None, None, behind)


def _no_index(con: duckdb.DuckDBPyConnection, workspace: str) -> SearchIndexCheck:
    row = con.execute(sql.query("doctor_events_with_text"), {"workspace": workspace}).fetchone()
    with_text = int(row[0]) if row else 0
    state: IndexState = "missing" if with_text else "empty"
    return SearchIndexCheck("none", state, with_text, 0, with_text, 0)


def _index_check(con: duckdb.DuckDBPyConnection, workspace: str) -> SearchIndexCheck:
    """Every event of the workspace against the index (scans its events' text)."""
    if not _index_present(con):
        return _no_index(con, workspace)
    params = {"workspace": workspace}
    kind: IndexKind = "agentlake"
    state: IndexState
    row = con.execute(sql.query("doctor_search_index_own"), params).fetchone()
    assert row is not None
    with_text, indexed, missing, dangling = (int(v or 0) for v in row[:4])
    counters_agree = row[4] is None or row[4] == row[5]
    behind = int(row[6] or 0) if len(row) > 6 else 0
    if missing and not indexed:
        state = "missing"
    elif missing or dangling or not counters_agree:
        state = "stale"
    elif behind:
        state = "lagging"
    else:
        state = "ok" if with_text else "empty"
    return SearchIndexCheck(kind, state, with_text, indexed, missing, dangling, behind)
