"""Rich rendering of ``agentlake doctor`` results for the CLI.

The library (:mod:`agentlake.read.doctor`) returns values; this module only lays them out as
sections of tables on the console the CLI hands in, ending with a one-line verdict.
Column policy (:mod:`agentlake.cli.render.tables`): paths and environment settings wrap at
boundaries, never inside a word; below 120 columns a root's existence and permission
merge into one ``state``, a refusal's reason and remedy share a column, and the import
receipts keep the counts that say what went wrong (imported, refused, rejected).
"""

from __future__ import annotations

from collections.abc import Mapping

from rich.console import Console

from agentlake.read.doctor import DoctorReport, RootCheck, SessionDiagnosis

from .tables import Column, Grid, count, is_wide, when

_VERDICT_STYLE = {"healthy": "green", "needs-attention": "yellow", "no-catalog": "red"}


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _counts(counts: Mapping[str, int]) -> str:
    """One ``name count`` per line (a label column keeps each line whole)."""
    return "\n".join(f"{k} {v:,}" for k, v in counts.items() if v) or "—"


def _state(root: RootCheck) -> str:
    if not root.exists:
        return "missing"
    return "readable" if root.readable else "unreadable"


def _reason(reason: str | None, remedy: str | None) -> str:
    """A reason and its remedy in one cell (narrow tables)."""
    return "\n".join(x for x in (reason or "—", f"remedy: {remedy}" if remedy else None) if x)


def render_report(console: Console, report: DoctorReport) -> None:
    """Every section of a :class:`DoctorReport`, then its verdict line."""
    wide = is_wide(console)
    _roots(console, report, wide=wide)
    _providers(console, report)
    if report.refused:
        _refused(console, report, wide=wide)
    if report.rejects:
        rejects = Grid(
            Column("provider", "label"),
            Column("reason", "label"),
            Column("count", "number"),
            Column("bytes", "number"),
            title="rejected spans by reason",
        )
        for j in report.rejects:
            rejects.add_row(j.provider, j.reason, count(j.count), count(j.bytes))
        rejects.show(console)
    cat = report.catalog
    if not cat.exists:
        console.print(f"catalog: none at {cat.path}", highlight=False)
    else:
        _render_catalog(console, report, wide=wide)
    style = _VERDICT_STYLE[report.verdict]
    console.print(f"[{style}]{report.summary}[/{style}]", highlight=False)


def _roots(console: Console, report: DoctorReport, *, wide: bool) -> None:
    state = (Column("exists", "label"), Column("readable", "label")) if wide else (
        Column("state", "label"),
    )  # fmt: skip
    roots = Grid(
        Column("provider", "label"),
        Column("root", "name", wrap=True),
        *state,
        Column("origin", "label"),
        Column("warnings", "text", wrap=True),
        title=f"provider roots (home {report.home})",
    )
    for p in report.providers:
        for r in p.roots:
            states = (_yes(r.exists), _yes(r.readable)) if wide else (_state(r),)
            roots.add_row(p.provider, str(r.path), *states, r.origin, "\n".join(r.warnings) or "—")
    roots.show(console)


def _providers(console: Console, report: DoctorReport) -> None:
    providers = Grid(
        Column("provider", "label"),
        Column("environment", "name", wrap=True),
        Column("sources", "number"),
        Column("outcomes", "label"),
        Column("refused", "number", drop=1),  # the outcomes list the refusals too
        Column("rejects", "label"),
        Column("notes", "text", wrap=True),
        title=f"sources the planner sees now (workspace {report.workspace!r})",
    )
    for p in report.providers:
        env = "\n".join(
            f"{e.name}={e.value!r}" + (" (in force)" if e.in_force else " (ignored)")
            if e.value is not None
            else f"{e.name} unset (default roots)"
            for e in p.env
        )
        providers.add_row(
            p.provider,
            env or "—",
            count(p.sources),
            _counts(p.continuity),
            count(p.refused),
            _counts(p.rejects),
            "\n".join(p.notes) or "—",
        )
    providers.show(console)


def _refused(console: Console, report: DoctorReport, *, wide: bool) -> None:
    why = (
        (Column("reason", "text", wrap=True), Column("remedy", "text", wrap=True))
        if wide
        else (Column("reason and remedy", "text", wrap=True),)
    )
    refused = Grid(
        Column("provider", "label"),
        Column("code", "label"),
        Column("path", "name", wrap=True),
        *why,
        Column("seen in", "label"),
        title="refused sources",
    )
    for src in report.refused:
        reasons = (src.reason or "—", src.remedy or "—") if wide else (
            _reason(src.reason, src.remedy),
        )  # fmt: skip
        refused.add_row(
            src.provider,
            src.code or "—",
            str(src.path),
            *reasons,
            src.seen_in if src.file_exists else f"{src.seen_in} (file gone)",
        )
    refused.show(console)


def _render_catalog(console: Console, report: DoctorReport, *, wide: bool) -> None:
    cat = report.catalog
    if cat.imports:
        # Below 120 columns the counts that say least about a problem go first.
        imports = Grid(
            Column("import", "number"),
            Column("started (UTC)", "when"),
            Column("status", "label"),
            Column("seen", "number", drop=3),
            Column("imported", "number"),
            Column("unchanged", "number", drop=4),
            Column("refused", "number"),
            Column("records", "number"),
            Column("events", "number", drop=1),
            Column("calls", "number", drop=2),
            Column("rejected", "number"),
            title="recent imports",
        )
        for r in cat.imports:
            status = r.status if r.finished else f"{r.status} (did not finish)"
            imports.add_row(
                f"#{r.import_id}",
                when(r.started_at, seconds=wide),
                status,
                *(
                    count(n)
                    for n in (
                        r.sources_seen,
                        r.sources_imported,
                        r.sources_unchanged,
                        r.sources_failed,
                        r.records,
                        r.events,
                        r.usage_rows,
                        r.rejected,
                    )
                ),
            )
        imports.show(console)
    table = Grid(
        Column("check", "label"), Column("value", "text", wrap=True), title=f"catalog {cat.path}"
    )
    table.add_row("schema version", str(cat.schema_version))
    for name, rows in cat.tables.items():
        table.add_row(f"rows in {name}", count(rows))
    index = cat.search_index
    if index is not None:
        table.add_row(f"search index ({index.kind})", f"{index.state}: {index.message}")
    if cat.vectors is not None:
        table.add_row("semantic vectors", f"{cat.vectors.state}: {cat.vectors.message}")
    if cat.lake is not None:
        table.add_row("lake", f"{cat.lake.state}: {cat.lake.message}")
        for holder in cat.lake.leases:
            table.add_row(f"writing {holder.workspace}", f"process {holder.pid} on {holder.host}")
    for name, rows in (cat.orphans or {}).items():
        table.add_row(f"orphans: {name.replace('_', ' ')}", count(rows))
    table.add_row("abandoned imports", count(cat.abandoned_imports))
    table.show(console)


def render_session(console: Console, diagnosis: SessionDiagnosis) -> None:
    """A :class:`SessionDiagnosis`: the session's rows and sources, or the files that
    mention it and why they are not imported; its message is the last line."""
    d = diagnosis
    s = d.session
    wide = is_wide(console)
    if d.status == "found" and s is not None:
        info = Grid(
            Column("field", "label"),
            Column("value", "name", wrap=True),
            title=f"session {s.session_id}",
            show_header=False,
        )
        info.add_row("provider", s.provider)
        for label, value in (
            ("title", s.title),
            ("project", s.project_path),
            ("parent", s.parent_session_id),
            ("started (UTC)", when(s.started_at, seconds=True) if s.started_at else None),
            ("updated (UTC)", when(s.updated_at, seconds=True) if s.updated_at else None),
            ("lifecycle", s.lifecycle),
        ):
            info.add_row(label, "—" if value is None else str(value))
        for name, rows in d.rows.items():
            info.add_row(f"rows in {name}", count(rows))
        info.show(console)
        sources = Grid(
            Column("path", "name", wrap=True),
            Column("status", "label"),
            Column("events", "number"),
            Column("calls", "number"),
            Column("rejects", "label"),
            Column("planner now / remedy", "text", wrap=True),
            title="its sources",
        )
        for src in d.sources:
            now = src.now
            why = "\n".join(
                x
                for x in (
                    f"now: {now.continuity}" if now is not None else "now: not discovered",
                    now.message if now is not None else None,
                    src.refusal if src.status == "refused" else None,
                    src.remedy,
                )
                if x
            )
            sources.add_row(
                src.path or src.source_id,
                src.status or "not in sources",
                count(src.events),
                count(src.usage),
                _counts(src.rejects),
                why,
            )
        sources.show(console)
    elif d.status == "ambiguous":
        for match in d.matches:
            console.print(f"  {match}", highlight=False)
    elif d.candidates:
        because = (
            (Column("why", "text", wrap=True), Column("remedy", "text", wrap=True))
            if wide
            else (Column("why and remedy", "text", wrap=True),)
        )
        files = Grid(
            Column("provider", "label"),
            Column("file", "name", wrap=True),
            Column("matched by", "label"),
            Column("state", "label"),
            *because,
            title="files under the provider roots that mention it",
        )
        for c in d.candidates:
            rejects = ", ".join(f"{k} {v:,}" for k, v in c.rejects.items() if v)
            reason = c.reason + (f" (rejects: {rejects})" if rejects else "")
            reasons = (reason, c.remedy or "—") if wide else (_reason(reason, c.remedy),)
            files.add_row(c.provider, str(c.path), c.matched_by, c.state, *reasons)
        files.show(console)
    else:
        console.print(
            f"searched {d.files_searched:,} provider-owned file"
            + ("" if d.files_searched == 1 else "s")
            + " under: "
            + ", ".join(str(p) for p in d.roots_searched if p.is_dir()),
            highlight=False,
        )
    style = {"found": "green" if d.exit_code == 0 else "yellow"}.get(d.status, "red")
    console.print(f"[{style}]{d.message}[/{style}]", highlight=False)
