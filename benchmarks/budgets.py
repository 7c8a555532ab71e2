"""The performance goals of DESIGN §8 as data, and the check of a measured figure
against each.

A budget whose figure was not measured (its phase did not run, or ccusage is not
installed) is ``skipped``; otherwise it is ``pass`` or ``miss``. While a run is in
progress the artifact shows ``pending`` for the budgets not yet decided.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

__all__ = ["BUDGETS", "Budget", "BudgetStatus", "check", "check_all", "missed"]

BudgetStatus = Literal["pass", "miss", "skipped", "pending"]


@dataclass(frozen=True)
class Budget:
    """A goal: ``measured <= goal`` (``at_most``) or ``measured >= goal``."""

    name: str
    goal: float
    at_most: bool
    unit: Literal["records/s", "bytes", "s", "ratio", "cores"]
    phase: str
    label: str


BUDGETS: Final[tuple[Budget, ...]] = (
    Budget("usage_ready_records_per_s", 100_000, False, "records/s", "import_usage_ready",
           "usage-ready import (--no-index; CLI, process start included)"),
    Budget("import_floor_ratio", 1.5, True, "ratio", "import_floor",
           "full import CPU / floor CPU (same run, per record)"),
    Budget("import_cores_busy", 1.8, False, "cores", "import_full",
           "full import cores busy (CPU / wall)"),
    Budget("index_floor_ratio", 1.3, True, "ratio", "import_floor",
           "index step alone CPU / its floor CPU (per record)"),
    Budget("import_peak_rss_bytes", 1 << 30, True, "bytes", "import_full",
           "peak RSS of any import phase (process tree)"),
    Budget("provider_rate_spread", 2.0, True, "ratio", "import_by_provider",
           "fastest / slowest provider records/s (usage-ready)"),
    Budget("rerun_unchanged_s", 1.0, True, "s", "rerun_unchanged",
           "no-change re-run, warm page cache (CLI, median)"),
    Budget("rerun_cold_s", 1.5, True, "s", "rerun_cold",
           "no-change re-run, cold page cache (CLI, median)"),
    Budget("cli_read_p50_s", 0.25, True, "s", "cli_latency",
           "slowest read command through the CLI (median)"),
    Budget("cli_help_p50_s", 0.15, True, "s", "cli_latency", "slowest --help (median)"),
    Budget("daily_vs_ccusage_ratio", 0.08, True, "ratio", "ccusage_daily",
           "agentlake report daily / ccusage daily (both CLI)"),
    Budget("append_1pct_ratio", 0.05, True, "ratio", "append_1pct",
           "1 % append re-run / full import time"),
    Budget("search_p95_s", 0.025, True, "s", "search", "search p95 (library)"),
    Budget("hybrid_search_p95_s", 0.05, True, "s", "search",
           "hybrid search p95 (library, open connection)"),
    Budget("search_peak_rss_bytes", 1 << 30, True, "bytes", "search",
           "peak RSS of the search phase (library or CLI)"),
    Budget("semantic_step_share", 0.5, True, "ratio", "import_full",
           "semantic step / full import wall time"),
    Budget("paraphrase_hybrid_recall", 0.8, False, "ratio", "recall",
           "paraphrase recall@5, hybrid (evaluation set)"),
    Budget("paraphrase_hybrid_gain", 0.3, False, "ratio", "recall",
           "paraphrase recall@5, hybrid - lexical"),
    Budget("lexical_hybrid_recall_gap", 0.0, True, "ratio", "recall",
           "exact-word recall@5, |hybrid - lexical|"),
    Budget("sessions_list_p95_s", 0.002, True, "s", "sessions_listing",
           "session listing p95 (library, open connection)"),
    Budget("report_daily_s", 0.1, True, "s", "reports", "daily report p95 (library)"),
    Budget("dashboard_bytes", 2_000_000, True, "bytes", "dashboard",
           "report html: the page's size"),
    Budget("dashboard_write_s", 1.0, True, "s", "dashboard",
           "report html p50 (CLI, process start included)"),
)  # fmt: skip


def check(budget: Budget, measured: float | None, *, note: str | None = None) -> dict[str, Any]:
    """The verdict on one budget: ``{"budget", "measured", "status", ...}``."""
    if measured is None:
        status: BudgetStatus = "skipped"
    else:
        met = measured <= budget.goal if budget.at_most else measured >= budget.goal
        status = "pass" if met else "miss"
    verdict: dict[str, Any] = {
        "budget": budget.goal,
        "measured": measured,
        "status": status,
        "comparison": "<=" if budget.at_most else ">=",
        "unit": budget.unit,
        "phase": budget.phase,
        "label": budget.label,
    }
    if note:
        verdict["note"] = note
    return verdict


def check_all(
    measured: Mapping[str, float | None], *, final: bool, notes: Mapping[str, str] | None = None
) -> dict[str, dict[str, Any]]:
    """Every budget checked against ``measured`` (by budget name). Before the run is
    ``final`` an unmeasured budget is ``pending`` rather than ``skipped``."""
    out: dict[str, dict[str, Any]] = {}
    for budget in BUDGETS:
        verdict = check(budget, measured.get(budget.name), note=(notes or {}).get(budget.name))
        if not final and verdict["measured"] is None:
            verdict["status"] = "pending"
        out[budget.name] = verdict
    return out


def missed(verdicts: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The names of the budgets that were missed."""
    return [name for name, v in verdicts.items() if v["status"] == "miss"]
