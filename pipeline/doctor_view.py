"""Rich rendering of ``agentlake doctor`` results for the CLI.

The library (:mod:`agentlake.doctor`) returns values; this module only lays them out as
sections of tables on the console the CLI hands in, ending with a one-line verdict.
"""

from __future__ import annotations

from collections.abc import Mapping

from rich.console import Console
from rich.table import Table

from .doctor import DoctorReport, SessionDiagnosis

_VERDICT_STYLE = {"healthy": "green", "needs-attention": "yellow", "no-catalog": "red"}


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _counts(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{k} {v:,}" for k, v in counts.items() if v) or "—"


def render_report(console: Console, report: DoctorReport) -> None:
    """Every section of a :class:`DoctorReport`, then its verdict line."""
    roots = Table(title=f"provider roots (home {report.home})")
    for col in ("provider", "root", "exists", "readable", "origin", "warnings"):
        roots.add_column(col, overflow="fold" if col == "root" else "ellipsis")
    for p in report.providers:
        for r in p.roots:
            roots.add_row(
                p.provider,
                str(r.path),
                _yes(r.exists),
                _yes(r.readable),
                r.origin,
                "\n".join(r.warnings) or "—",
            )
    console.print(roots)

    providers = Table(title=f"sources the planner sees now (workspace {report.workspace!r})")
    for col in ("provider", "environment", "sources", "outcomes", "refused", "rejects", "notes"):
        providers.add_column(col, justify="right" if col in ("sources", "refused") else "left")
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
            f"{p.sources:,}",
            _counts(p.continuity),
            f"{p.refused:,}",
            _counts(p.rejects),
            "\n".join(p.notes) or "—",
        )
    console.print(providers)

    if report.refused:
        refused = Table(title="refused sources")
        for col in ("provider", "code", "path", "reason", "remedy", "seen in"):
            refused.add_column(col, overflow="fold")
        for src in report.refused:
            refused.add_row(
                src.provider,
                src.code or "—",
                str(src.path),
                src.reason or "—",
                src.remedy or "—",
                src.seen_in if src.file_exists else f"{src.seen_in} (file gone)",
            )
        console.print(refused)

    if report.rejects:
        rejects = Table(title="rejected spans by reason")
        for col in ("provider", "reason", "count", "bytes"):
            rejects.add_column(col, justify="right" if col in ("count", "bytes") else "left")
        for j in report.rejects:
            rejects.add_row(j.provider, j.reason, f"{j.count:,}", f"{j.bytes:,}")
        console.print(rejects)

    cat = report.catalog
    if not cat.exists:
        console.print(f"catalog: none at {cat.path}", highlight=False)
    else:
        _render_catalog(console, report)
    style = _VERDICT_STYLE[report.verdict]
    console.print(f"[{style}]{report.summary}[/{style}]", highlight=False)


def _render_catalog(console: Console, report: DoctorReport) -> None:
    cat = report.catalog
    if cat.imports:
        imports = Table(title="recent imports")
        cols = (
            "import",
            "started (UTC)",
            "status",
            "seen",
            "imported",
            "unchanged",
            "refused",
            "records",
            "events",
            "calls",
            "rejected",
        )
        for col in cols:
            imports.add_column(col, justify="left" if col in cols[1:3] else "right")
        for r in cat.imports:
            status = r.status if r.finished else f"{r.status} (did not finish)"
            imports.add_row(
                f"#{r.import_id}",
                r.started_at.strftime("%Y-%m-%d %H:%M:%S") if r.started_at else "—",
                status,
                *(
                    f"{n:,}"
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
        console.print(imports)
    table = Table(title=f"catalog {cat.path}")
    table.add_column("check")
    table.add_column("value")
    table.add_row("schema version", str(cat.schema_version))
    for name, rows in cat.tables.items():
        table.add_row(f"rows in {name}", f"{rows:,}")
    index = cat.search_index
    if index is not None:
        table.add_row(f"search index ({index.kind})", f"{index.state}: {index.message}")
    for name, rows in cat.orphans.items():
        table.add_row(f"orphans: {name.replace('_', ' ')}", f"{rows:,}")
    table.add_row("abandoned imports", f"{cat.abandoned_imports:,}")
    console.print(table)


def render_session(console: Console, diagnosis: SessionDiagnosis) -> None:
    """A :class:`SessionDiagnosis`: the session's rows and sources, or the files that
    mention it and why they are not imported; its message is the last line."""
    d = diagnosis
    s = d.session
    if d.status == "found" and s is not None:
        info = Table(title=f"session {s.session_id}", show_header=False)
        info.add_column("field")
        info.add_column("value")
        info.add_row("provider", s.provider)
        for label, value in (
            ("title", s.title),
            ("project", s.project_path),
            ("parent", s.parent_session_id),
            ("started (UTC)", s.started_at),
            ("updated (UTC)", s.updated_at),
            ("lifecycle", s.lifecycle),
        ):
            info.add_row(label, "—" if value is None else str(value))
        for name, rows in d.rows.items():
            info.add_row(f"rows in {name}", f"{rows:,}")
        console.print(info)
        sources = Table(title="its sources")
        for col in ("path", "status", "events", "calls", "rejects", "planner now / remedy"):
            sources.add_column(
                col, justify="right" if col in ("events", "calls") else "left", overflow="fold"
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
                f"{src.events:,}",
                f"{src.usage:,}",
                _counts(src.rejects),
                why,
            )
        console.print(sources)
    elif d.status == "ambiguous":
        for match in d.matches:
            console.print(f"  {match}", highlight=False)
    elif d.candidates:
        files = Table(title="files under the provider roots that mention it")
        for col in ("provider", "file", "matched by", "state", "why", "remedy"):
            files.add_column(col, overflow="fold")
        for c in d.candidates:
            why = c.reason + (f" (rejects: {_counts(c.rejects)})" if c.rejects else "")
            files.add_row(c.provider, str(c.path), c.matched_by, c.state, why, c.remedy or "—")
        console.print(files)
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
