"""Rendering of ``agentlake import`` and ``sources`` for the CLI: the plan (one row per
source and its continuity decision), the run's summary line, and the provider registry.

Column policy (:mod:`agentlake.cli.render.tables`): source paths and provider roots wrap only at
``/``, ``-``, ``.`` and spaces; the registry's test list goes first at 80 columns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from agentlake.extract.providers import ProviderSpec
from agentlake.ingest.plan import Plan
from agentlake.ingest.run import ImportResult

from .tables import Column, Grid, count, is_wide

if TYPE_CHECKING:
    from agentlake.ingest.committer import SourceOutcome


def render_plan(console: Console, plan: Plan, *, errors: Console) -> None:
    """The plan as a table (or one line when discovery found nothing), each refusal
    on ``errors``, then the count of sources and bytes to read."""
    if not plan.sources:
        console.print(
            f"no sources under the provider roots for workspace {plan.workspace!r}; "
            "`agentlake doctor` shows the roots searched and why each is empty",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
        return
    grid = Grid(
        Column("provider", "label"),
        Column("continuity", "label"),
        Column("action", "label"),
        Column("bytes", "number"),
        Column("path", "name", wrap=True),
        title=f"plan for workspace {plan.workspace!r}",
    )
    for s in plan.sources:
        grid.add_row(s.provider, s.continuity, s.action, count(s.pending_bytes), str(s.path))
    grid.show(console)
    for s in plan.sources:
        if s.action == "refuse":
            errors.print(f"refused: {s.code}: {s.path}: {s.message}", highlight=False)
    console.print(f"{len(plan.sources)} sources, {plan.bytes_to_read:,} bytes to read")


def render_summary(console: Console, result: ImportResult) -> None:
    """The run's summary line (wrapped between words at the console's width), what is
    still pending, and that the search index waits when the publish step was skipped."""
    totals = result.totals()
    console.print(
        f"import #{result.import_id}: {totals['sources_seen']} sources "
        f"({totals['sources_imported']} imported, {totals['sources_unchanged']} unchanged, "
        f"{totals['sources_failed']} refused), {totals['records']:,} records, "
        f"{totals['events']:,} new events, {totals['usage_rows']:,} new calls, "
        f"{totals['rejected']:,} rejected in {result.seconds:.2f}s",
        highlight=False,
        soft_wrap=False,
    )
    if totals["pending_bytes"]:
        why = "the time budget was spent; " if result.budget_spent else ""
        console.print(
            f"{totals['pending_bytes']:,} bytes pending ({why}the next run reads them)",
            highlight=False,
            soft_wrap=False,
        )
    if totals["withheld"]:
        console.print(
            f"{totals['withheld']:,} rows of purged sessions withheld (they stay out; "
            "'agentlake import --allow-purged' imports them again)",
            highlight=False,
            soft_wrap=False,
        )
    if result.index is None:
        console.print(
            "the search index was not updated (--no-index); run 'agentlake index'",
            highlight=False,
            soft_wrap=False,
        )


def render_problems(errors: Console, result: ImportResult) -> None:
    """Warnings about the options, each rejected span and each source refused for the
    first time, one line each, and how many are still refused as reported before
    (whatever the output format: these go to stderr)."""
    for warning in result.warnings:
        errors.print(f"warning: {warning}", highlight=False)
    for s in result.sources:
        for line in s.reject_lines():
            errors.print(f"rejected: {line}", highlight=False, soft_wrap=True)
        if s.rejected > len(s.reject_samples):
            errors.print(
                f"rejected: {s.planned.path}: {s.rejected - len(s.reject_samples)} more; "
                "see the rejects table",
                highlight=False,
                soft_wrap=True,
            )
    for s in result.newly_refused:
        errors.print(f"refused: {s.code}: {s.planned.path}: {s.message}", highlight=False)
        if (receipt := receipt_line(s)) is not None:
            errors.print(f"  {receipt}", highlight=False, soft_wrap=True)
    if still := len(result.still_refused):
        errors.print(
            f"{still} source{'s' if still > 1 else ''} still refused as reported before "
            "— see `agentlake doctor`",
            highlight=False,
        )


def receipt_line(outcome: SourceOutcome) -> str | None:
    """A refused source's receipt in words, printed under its refusal."""
    resume = outcome.resume
    if outcome.status != "refused" or resume is None:
        return None
    batches = outcome.batches
    return (
        f"generation {resume.generation}: this run committed {batches:,} "
        f"batch{'' if batches == 1 else 'es'}, {outcome.records:,} records, "
        f"{outcome.events:,} events, {outcome.committed_bytes:,} bytes; the next read "
        f"starts at byte {resume.offset:,} with {resume.records:,} records kept"
    )


def render_providers(
    console: Console, registry: Sequence[ProviderSpec], *, home: Path, env: Mapping[str, str]
) -> None:
    """The provider registry as a conformance matrix; roots as they resolve for
    ``home`` and ``env``. Below 120 columns the aliases go under the id (indented), and the
    capabilities and the tests that prove each provider go first."""
    wide = is_wide(console)
    grid = Grid(
        Column("id", "label"),
        *((Column("aliases", "label"),) if wide else ()),
        Column("support", "label"),
        Column("formats", "label"),
        Column("capabilities", "label", drop=2),
        Column("adapter", "label"),
        Column("roots", "name", wrap=True),
        Column("proved by", "name", wrap=True, drop=1),
        title="providers",
    )
    sep = " " if wide else "\n  "  # below 120 columns each format's kind goes under it
    for p in registry:
        aliases = "\n".join(p.aliases) or "—"
        grid.add_row(
            *((p.id, aliases) if wide else ("\n".join([p.id, *(f"  {a}" for a in p.aliases)]),)),
            p.support,
            "\n".join(f"{f.name}{sep}({f.position_kind})" for f in p.formats),
            "\n".join(sorted(p.capabilities)),
            p.adapter_version,
            "\n".join(str(r.path) for r in p.roots(home, env)),
            "\n".join(p.fixtures + p.tests + p.docs),
        )
    grid.show(console)
    for p in registry:
        for exception in p.exceptions:
            console.print(f"{p.id}: {exception}", highlight=False)
