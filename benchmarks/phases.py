"""The benchmark's phases, in the order they run (:data:`PHASES`), and the figure each
budget is measured on (:func:`measurements`).

``generate``           write the seeded corpus (``benchmarks.corpus``) and profile it
``import_full``        ``agentlake import --json`` on the fresh home (CLI subprocess)
``import_usage_ready`` ``agentlake import --no-index --json`` of the same home into a
                       catalog of its own: events, usage and sessions, no search index
``index_alone``        ``agentlake index --json`` on that catalog: the publish step alone
``import_by_provider`` each provider's sources alone, usage-ready, into catalogs of their
                       own: records/s per provider
``rerun_unchanged``    the same command as ``import_full`` again, nothing changed
                       (median of ``rerun_samples``)
``rerun_cold``         the same after dropping the page cache before each run (root only;
                       skipped otherwise)
``append_1pct``        append 1 % new records to existing transcripts, import again
``search``             drawn queries through the library on one read-only connection,
                       lexical (BM25 alone) then hybrid (the first hybrid call, which
                       loads the vectors and the model, timed apart), warm-up then
                       timed; plus a few CLI samples of each that include process start
``sessions_listing``   ``list_sessions`` calls through the library on an open connection
``reports``            every report through the library
``report_daily_cli``   ``agentlake report daily --json`` (CLI, process start included)
``dashboard``          ``agentlake report html --json`` (CLI, process start included): the
                       page's size and the time to write it
``cli_latency``        the read commands and ``--help`` through the CLI
                       (``benchmarks.cli_latency``)
``recall``             the evaluation set (``tests/read/semantic_eval_set.py``) written
                       and imported into a catalog of its own: recall@5 of its
                       paraphrases and exact-word queries, lexical, semantic and hybrid
                       (``benchmarks.recall``)
``ducklake``           the usage-ready import into a DuckLake on a PostgreSQL server of
                       its own, and the daily report on it, beside the DuckDB file's
                       figures (``benchmarks.lake``; skipped without PostgreSQL)
``ccusage_daily``      ``ccusage daily --json --offline`` on the same home, when ccusage
                       20.0.24 is installed; skipped otherwise
``import_floor``       ``python -m benchmarks.floors`` on the home and its catalog: the
                       least CPU parsing, redacting, tokenizing, embedding and writing
                       its records take alone, and the import's, the publish step's and
                       its semantic part's CPU over it
                       (last, so that its reading and writing cannot disturb the timed
                       phases)

Every ``ok`` phase has ``seconds`` and a non-empty ``samples_s``: the samples its budget
is measured on. The import phases also carry the process tree's sampled peak RSS
(``peak_rss_bytes``, with its timeline ``rss_samples_bytes``) and the kernel's
``ru_maxrss_bytes``; the full import also the publish step's semantic part
(``vectors_seconds``, ``vectors_embedded``) and its share of the import's wall time.
The search phase carries the peak RSS of its library calls (this process, sampled) and
of its CLI searches.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import duckdb

from . import corpus
from .cli_latency import measure_cli_latency
from .context import Context
from .errors import PhaseError, PhaseSkipped
from .lake import phase_ducklake
from .measure import (
    ChildRun,
    RssSampler,
    can_drop_page_cache,
    drop_page_cache,
    percentile,
    remove_catalog,
    run_child,
    summarize,
    tree_rss_bytes,
    usable_cores,
)
from .recall import K as RECALL_K
from .recall import import_eval_home, measure_recall
from .reports import (
    CCUSAGE_VERSION,
    ccusage_version,
    find_ccusage,
    time_ccusage,
    time_cli_daily,
    time_cli_dashboard,
    time_reports,
)
from .search_latency import draw_queries, sample_texts, time_hybrid, time_search
from .sessions_listing import time_listing

__all__ = ["PHASES", "PHASE_FUNCTIONS", "floor_ratios", "measurements", "run_import"]

IMPORT_TIMEOUT_S: Final = 3_600.0
_CLI_SEARCH_SAMPLES: Final = 3
_PROVIDER_KEYS: Final = ("seconds", "records", "records_per_s", "sources_seen", "bytes",
                         "cpu_user_seconds", "cpu_system_seconds", "cores_busy",
                         "peak_rss_bytes")  # fmt: skip


def _cli(*args: str | Path) -> list[str]:
    return [sys.executable, "-m", "agentlake", *map(str, args)]


def run_import(
    ctx: Context, *options: str | Path, catalog: Path | str | None = None
) -> dict[str, Any]:
    """``agentlake import --json`` over the home; the receipt's figures and memory."""
    run = run_child(
        _cli("import", "--home", ctx.home, "--catalog", catalog or ctx.catalog, "--json", *options),
        env=ctx.env, sample_rss=True, timeout=IMPORT_TIMEOUT_S,
    )  # fmt: skip
    if run.returncode not in (0, 1):
        raise PhaseError(f"agentlake import exited {run.returncode}: {run.stderr.strip()[-800:]}")
    receipt = json.loads(run.stdout)
    totals = receipt["totals"]
    return {
        "seconds": run.seconds, "samples_s": [run.seconds], "exit_code": run.returncode,
        "import_status": receipt["status"], "records": totals["records"],
        "records_per_s": totals["records"] / run.seconds, "events": totals["events"],
        "usage_rows": totals["usage_rows"], "rejected": totals["rejected"],
        "bytes": totals["bytes"], "sources_seen": totals["sources_seen"],
        "sources_imported": totals["sources_imported"],
        "sources_unchanged": totals["sources_unchanged"],
        "sources_opened": totals["sources_opened"], "sources_failed": totals["sources_failed"],
        "receipt_seconds": receipt["seconds"], "index_seconds": receipt["index_seconds"],
        **_vectors(run, receipt.get("index")),
        **_cpu(run, totals["records"]),
        **_memory(run, receipt),
    }  # fmt: skip


def _vectors(run: ChildRun, published: dict[str, Any] | None) -> dict[str, Any]:
    """The publish step's semantic part from its receipt (``index.vectors``): its
    seconds, the events it embedded and their rate, and its share of the run's wall
    time (None without a publish step)."""
    vectors = (published or {}).get("vectors") or {}
    seconds, embedded = vectors.get("seconds"), vectors.get("embedded")
    return {
        "vectors_seconds": seconds, "vectors_embedded": embedded,
        "vectors_skipped": vectors.get("skipped"),
        "vectors_embedded_per_s": embedded / seconds if embedded is not None and seconds
        else None,
        "vectors_share": seconds / run.seconds if seconds is not None and run.seconds > 0
        else None,
    }  # fmt: skip


def _cpu(run: ChildRun, records: int) -> dict[str, Any]:
    """The run's CPU seconds, the cores they kept busy on average, and the records per
    second the cores it may use could give at best for that much CPU (every one busy for
    the whole run): a rate goal above that figure needs less CPU, not more overlap."""
    cpu = run.cpu_user_seconds + run.cpu_system_seconds
    cores = usable_cores()
    return {
        "cpu_user_seconds": run.cpu_user_seconds, "cpu_system_seconds": run.cpu_system_seconds,
        "cores_busy": cpu / run.seconds if run.seconds > 0 else None,
        "records_per_s_at_full_cores": records * cores / cpu if cpu > 0 else None,
    }  # fmt: skip


def _memory(run: ChildRun, receipt: dict[str, Any]) -> dict[str, Any]:
    return {
        "peak_rss_bytes": run.peak_rss_bytes, "ru_maxrss_bytes": run.ru_maxrss_bytes,
        "self_reported_peak_rss_bytes": receipt.get("peak_rss_bytes"),
        "rss_interval_s": run.rss_interval_s, "rss_sample_count": len(run.rss_samples_bytes),
        "rss_samples_bytes": run.rss_samples_bytes,
    }  # fmt: skip


def phase_generate(ctx: Context) -> dict[str, Any]:
    """Write the corpus, then profile it (the profile is not part of ``seconds``)."""
    shutil.rmtree(ctx.home, ignore_errors=True)
    remove_catalog(ctx.catalog)
    started = time.perf_counter()
    ctx.written = corpus.generate_corpus(ctx.home, ctx.plan)
    seconds = time.perf_counter() - started
    started = time.perf_counter()
    profile = corpus.profile_corpus(ctx.home)
    lines = sum(s.lines for s in ctx.written.values())
    return {
        "seconds": seconds, "samples_s": [seconds],
        "profile_seconds": time.perf_counter() - started, "events": lines,
        "providers": {p: {"target": ctx.plan.targets[p], "lines": s.lines, "files": s.files,
                          "bytes": s.bytes, "sessions": s.sessions,
                          "share": s.lines / lines if lines else 0.0}
                      for p, s in ctx.written.items()},
        "profile": profile.as_json(),
    }  # fmt: skip


def phase_import_full(ctx: Context) -> dict[str, Any]:
    """The first import of the whole home."""
    return run_import(ctx)


def phase_import_usage_ready(ctx: Context) -> dict[str, Any]:
    """The first import of the whole home without the publish step (``--no-index``)."""
    remove_catalog(ctx.usage_ready)
    return run_import(ctx, "--no-index", catalog=ctx.usage_ready)


def phase_index_alone(ctx: Context) -> dict[str, Any]:
    """The publish step alone (``agentlake index``) on the usage-ready catalog."""
    run = run_child(
        _cli("index", "--catalog", ctx.usage_ready, "--json"),
        env=ctx.env, sample_rss=True, timeout=IMPORT_TIMEOUT_S,
    )  # fmt: skip
    if run.returncode != 0:
        raise PhaseError(f"agentlake index exited {run.returncode}: {run.stderr.strip()[-800:]}")
    published = json.loads(run.stdout)
    return {
        "seconds": run.seconds, "samples_s": [run.seconds], "indexed": published["indexed"],
        "events_per_s": published["indexed"] / run.seconds, **_vectors(run, published),
        **_cpu(run, published["indexed"]), **_memory(run, published),
    }  # fmt: skip


def _rerun(ctx: Context, *, cold: bool) -> dict[str, Any]:
    """The same import as ``import_full`` again, nothing changed, ``rerun_samples``
    times (the page cache dropped before each when ``cold``): the figures of the median
    run (the upper one of an even count), with every run's seconds as the samples."""
    runs = []
    for _ in range(ctx.settings.rerun_samples):
        if cold:
            drop_page_cache()
        runs.append(run_import(ctx))
    median = sorted(runs, key=lambda run: run["seconds"])[len(runs) // 2]
    return {**median, "samples_s": [run["seconds"] for run in runs], "cold": cold}


def phase_rerun_unchanged(ctx: Context) -> dict[str, Any]:
    """The same import again, with nothing changed (the page cache warm)."""
    return _rerun(ctx, cold=False)


def phase_rerun_cold(ctx: Context) -> dict[str, Any]:
    """The same import again, nothing changed, after dropping the page cache: the
    first nightly run after a reboot."""
    if not ctx.settings.cold_rerun:
        raise PhaseSkipped("not asked for (--no-cold-rerun)")
    if not can_drop_page_cache():
        raise PhaseSkipped("dropping the page cache needs root (/proc/sys/vm/drop_caches)")
    return _rerun(ctx, cold=True)


def phase_import_by_provider(ctx: Context) -> dict[str, Any]:
    """Each provider's sources alone (``--provider P --no-index``) into a catalog of
    their own: records/s per provider, and the fastest rate over the slowest."""
    providers: dict[str, dict[str, Any]] = {}
    for name in ctx.plan.providers:
        catalog = ctx.work / f"provider-{name}.duckdb"
        remove_catalog(catalog)
        run = run_import(ctx, "--no-index", "--provider", corpus.PROVIDER_IDS[name],
                          catalog=catalog)  # fmt: skip
        remove_catalog(catalog)
        providers[name] = {key: run[key] for key in _PROVIDER_KEYS}
    rates = {name: p["records_per_s"] for name, p in providers.items() if p["records"]}
    fastest = max(rates, key=rates.__getitem__, default=None)
    slowest = min(rates, key=rates.__getitem__, default=None)
    return {
        "seconds": sum(p["seconds"] for p in providers.values()),
        "samples_s": [p["seconds"] for p in providers.values()], "providers": providers,
        "fastest": fastest, "slowest": slowest,
        "spread": rates[fastest] / rates[slowest] if fastest and slowest else None,
    }  # fmt: skip


def phase_cli_latency(ctx: Context) -> dict[str, Any]:
    """The commands run all day, through the CLI on the catalog (process start
    included): each read command's median, and ``--help``'s."""
    figures = measure_cli_latency(ctx.catalog, env=ctx.env, rounds=ctx.settings.cli_rounds)
    medians = [command["p50_s"] for command in figures["commands"].values()]
    seconds = sum(sum(command["samples_s"]) for command in figures["commands"].values())
    return {**figures, "seconds": seconds, "samples_s": medians}


def phase_append_1pct(ctx: Context) -> dict[str, Any]:
    """Append 1 % new records (not timed), then import (timed)."""
    started = time.perf_counter()
    lines = {p: s.lines for p, s in ctx.written.items()}
    appended = corpus.append_new_records(ctx.home, ctx.work / "append-donors", ctx.plan, lines)
    prepare = time.perf_counter() - started
    figures = run_import(ctx)
    full = ctx.figures["import_full"]["seconds"]
    events = sum(lines.values())
    return {
        **figures, "ratio": figures["seconds"] / full, "prepare_seconds": prepare,
        "lines_appended": appended.lines, "bytes_appended": appended.bytes,
        "files_appended": appended.files, "fraction": appended.lines / events if events else 0.0,
        "providers_appended": appended.providers,
    }  # fmt: skip


def _cli_search(ctx: Context, queries: list[str], mode: str) -> dict[str, Any]:
    """``agentlake search QUERY --mode MODE --json`` for each query: seconds and peak
    RSS (process start included)."""
    runs: list[ChildRun] = []
    for query in queries:
        run = run_child(_cli("search", query, "--mode", mode, "--catalog", ctx.catalog, "--json"),
                        env=ctx.env, sample_rss=True, timeout=300)  # fmt: skip
        if run.returncode != 0:
            raise PhaseError(f"agentlake search exited {run.returncode}: {run.stderr.strip()}")
        runs.append(run)
    samples = [run.seconds for run in runs]
    return {"queries": queries, "mode": mode, "samples_s": samples,
            "p50_s": percentile(samples, 50), "note": "includes process start",
            "peak_rss_bytes": max(max(r.peak_rss_bytes, r.ru_maxrss_bytes) for r in runs)}  # fmt: skip


def phase_search(ctx: Context) -> dict[str, Any]:
    """Drawn queries through the library on one read-only connection, lexical then
    hybrid, then a few of each through the CLI. The library calls' memory is this
    process's, sampled while they run (``rss_before_bytes``: before the connection
    opened); ``peak_rss_bytes`` is the larger of theirs and the CLI searches'."""
    seed = corpus.derive_seed(ctx.plan.seed, "search")
    queries = draw_queries(sample_texts(ctx.catalog, seed), seed, ctx.settings.search_queries)
    if not queries:
        raise PhaseError("the catalog has no searchable text to draw queries from")
    rounds = ctx.settings.search_rounds
    rss_before = tree_rss_bytes(os.getpid())
    sampler = RssSampler(os.getpid())
    sampler.start()
    try:
        with duckdb.connect(str(ctx.catalog), read_only=True) as con:
            figures = time_search(ctx.catalog, queries, rounds=rounds, con=con)
            hybrid = time_hybrid(con, queries, rounds=rounds)
    finally:
        sampler.stop()
    figures["cli"] = _cli_search(ctx, queries[:_CLI_SEARCH_SAMPLES], "lexical")
    hybrid["cli"] = _cli_search(ctx, queries[:_CLI_SEARCH_SAMPLES], "hybrid")
    figures["hybrid"] = hybrid
    figures["library_rss_before_bytes"] = rss_before
    figures["library_peak_rss_bytes"] = sampler.peak
    figures["peak_rss_bytes"] = max(sampler.peak, figures["cli"]["peak_rss_bytes"],
                                    hybrid["cli"]["peak_rss_bytes"])  # fmt: skip
    figures["seconds"] = (figures["warmup_s"] + sum(figures["samples_s"]) + hybrid["first_call_s"]
                          + hybrid["warmup_s"] + sum(hybrid["samples_s"]))  # fmt: skip
    return figures


def phase_sessions_listing(ctx: Context) -> dict[str, Any]:
    """``list_sessions`` rounds (see ``benchmarks.sessions_listing``)."""
    figures = time_listing(ctx.catalog, ctx.settings.listing_rounds)
    figures["seconds"] = sum(figures["samples_s"])
    return {**figures, **summarize(figures["samples_s"])}


def phase_recall(ctx: Context) -> dict[str, Any]:
    """The evaluation set written into the work directory and imported (CLI) into a
    catalog of its own, then recall@5 of its queries through the library
    (``benchmarks.recall``)."""
    folder = ctx.work / "recall"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    started = time.perf_counter()
    catalog, placed, receipt = import_eval_home(folder, env=ctx.env)
    imported = time.perf_counter() - started
    started = time.perf_counter()
    found = measure_recall(catalog, placed, RECALL_K)
    scored = time.perf_counter() - started
    recall = {
        name: {mode: r.as_json() for mode, r in modes.items()} for name, modes in found.items()
    }
    para, exact = found["paraphrase"], found["lexical"]
    return {
        "seconds": imported + scored, "samples_s": [imported, scored], "k": RECALL_K,
        "import_seconds": imported, "score_seconds": scored,
        "events": receipt["totals"]["events"],
        "embedded": ((receipt.get("index") or {}).get("vectors") or {}).get("embedded"),
        "recall": recall,
        "paraphrase_lexical": para["lexical"].recall,
        "paraphrase_semantic": para["semantic"].recall,
        "paraphrase_hybrid": para["hybrid"].recall,
        "paraphrase_hybrid_gain": para["hybrid"].recall - para["lexical"].recall,
        "lexical_lexical": exact["lexical"].recall, "lexical_hybrid": exact["hybrid"].recall,
        "lexical_hybrid_gap": abs(exact["hybrid"].recall - exact["lexical"].recall),
    }  # fmt: skip


def phase_reports(ctx: Context) -> dict[str, Any]:
    """Every report kind through the library; the daily report's samples lead."""
    kinds = time_reports(ctx.catalog, ctx.settings.report_samples)
    daily = kinds["daily"]["samples_s"]
    return {"seconds": sum(sum(k["samples_s"]) for k in kinds.values()), "samples_s": daily,
            "p50_s": percentile(daily, 50), "p95_s": percentile(daily, 95), "kinds": kinds}  # fmt: skip


def phase_report_daily_cli(ctx: Context) -> dict[str, Any]:
    """``agentlake report daily --json`` through the CLI."""
    figures = time_cli_daily(ctx.catalog, samples=3, env=ctx.env)
    return {**figures, "seconds": sum(figures["samples_s"])}


def phase_dashboard(ctx: Context) -> dict[str, Any]:
    """``agentlake report html`` through the CLI, the page written into the work folder."""
    figures = time_cli_dashboard(ctx.catalog, ctx.work / "dashboard.html", env=ctx.env)
    return {**figures, "seconds": sum(figures["samples_s"])}


def phase_ccusage_daily(ctx: Context) -> dict[str, Any]:
    """ccusage's daily report on the same home, and agentlake's CLI time over it."""
    executable = find_ccusage(ctx.settings.ccusage_dir)
    if executable is None:
        raise PhaseSkipped("ccusage is not installed (--ccusage-dir, ./node_modules, PATH)")
    found = ccusage_version(executable)
    if found != CCUSAGE_VERSION:
        raise PhaseSkipped(f"ccusage {found} found at {executable}; the comparison needs "
                           f"{CCUSAGE_VERSION}")  # fmt: skip
    figures = time_ccusage(executable, ctx.home)
    figures.update(seconds=sum(figures["samples_s"]), version=found, executable=executable)
    agentlake = ctx.figures.get("report_daily_cli")
    figures["ratio"] = agentlake["p50_s"] / figures["p50_s"] if agentlake else None
    return figures


def phase_import_floor(ctx: Context) -> dict[str, Any]:
    """The floor under importing the home as it is at the end (``benchmarks.floors``, a
    subprocess, on the catalog of the three imports), and the CPU of the full import
    for comparison."""
    run = run_child(
        [sys.executable, "-m", "benchmarks.floors", str(ctx.home), str(ctx.catalog),
         "--scratch", str(ctx.work), "--json"],
        env=ctx.env, timeout=IMPORT_TIMEOUT_S,
    )  # fmt: skip
    if run.returncode != 0:
        raise PhaseError(f"benchmarks.floors exited {run.returncode}: {run.stderr.strip()[-800:]}")
    floor = json.loads(run.stdout)
    return {
        "seconds": run.seconds, "samples_s": [run.seconds], **floor,
        "share_of_allowed": floor["cpu_seconds"] / floor["allowed_cpu_seconds"]
        if floor["allowed_cpu_seconds"] else None,
        **floor_ratios(ctx.figures, floor),
    }  # fmt: skip


def floor_ratios(figures: dict[str, dict[str, Any]], floor: dict[str, Any]) -> dict[str, Any]:
    """The full import's CPU over the floor's, and the publish step's alone over the
    index pieces' floor, each per record (the floor is measured on the catalog after
    the 1 % append, the imports before it)."""
    full, alone = figures.get("import_full"), figures.get("index_alone")
    out: dict[str, Any] = {"import_cpu_seconds": None, "floor_ratio": None,
                           "index_step_cpu_seconds": None, "index_floor_ratio": None}  # fmt: skip
    if not full or not floor["records"] or not full["records"]:
        return out
    scale = full["records"] / floor["records"]  # the floor's CPU for the import's records
    out["import_cpu_seconds"] = full["cpu_user_seconds"] + full["cpu_system_seconds"]
    out["floor_ratio"] = out["import_cpu_seconds"] / (floor["cpu_seconds"] * scale)
    if alone and floor["index_cpu_seconds"]:
        out["index_step_cpu_seconds"] = alone["cpu_user_seconds"] + alone["cpu_system_seconds"]
        out["index_floor_ratio"] = out["index_step_cpu_seconds"] / (
            floor["index_cpu_seconds"] * scale
        )
    return out


PHASE_FUNCTIONS: Final[dict[str, Callable[[Context], dict[str, Any]]]] = {
    "generate": phase_generate,
    "import_full": phase_import_full,
    "import_usage_ready": phase_import_usage_ready,
    "index_alone": phase_index_alone,
    "import_by_provider": phase_import_by_provider,
    "rerun_unchanged": phase_rerun_unchanged,
    "rerun_cold": phase_rerun_cold,
    "append_1pct": phase_append_1pct,
    "search": phase_search,
    "sessions_listing": phase_sessions_listing,
    "reports": phase_reports,
    "report_daily_cli": phase_report_daily_cli,
    "dashboard": phase_dashboard,
    "cli_latency": phase_cli_latency,
    "recall": phase_recall,
    "ducklake": phase_ducklake,
    "ccusage_daily": phase_ccusage_daily,
    "import_floor": phase_import_floor,
}
PHASES: Final = tuple(PHASE_FUNCTIONS)


def measurements(figures: dict[str, dict[str, Any]]) -> dict[str, float | None]:
    """Each budget's measured figure from the finished phases' figures (None: not
    measured)."""

    def get(phase: str, key: str) -> float | None:
        value = figures.get(phase, {}).get(key)
        return float(value) if isinstance(value, int | float) else None

    def get_in(phase: str, part: str, key: str) -> float | None:
        value = figures.get(phase, {}).get(part, {}).get(key)
        return float(value) if isinstance(value, int | float) else None

    rss = [max(figures[p]["peak_rss_bytes"], figures[p]["ru_maxrss_bytes"])
           for p in ("import_full", "import_usage_ready", "index_alone", "rerun_unchanged",
                     "append_1pct") if p in figures]  # fmt: skip
    rss += [
        p["peak_rss_bytes"]
        for p in figures.get("import_by_provider", {}).get("providers", {}).values()
    ]
    return {
        "usage_ready_records_per_s": get("import_usage_ready", "records_per_s"),
        "import_floor_ratio": get("import_floor", "floor_ratio"),
        "import_cores_busy": get("import_full", "cores_busy"),
        "index_floor_ratio": get("import_floor", "index_floor_ratio"),
        "import_peak_rss_bytes": float(max(rss)) if rss else None,
        "provider_rate_spread": get("import_by_provider", "spread"),
        "rerun_unchanged_s": get("rerun_unchanged", "seconds"),
        "rerun_cold_s": get("rerun_cold", "seconds"),
        "cli_read_p50_s": get("cli_latency", "read_max_p50_s"),
        "cli_help_p50_s": get("cli_latency", "help_max_p50_s"),
        "daily_vs_ccusage_ratio": get("ccusage_daily", "ratio"),
        "append_1pct_ratio": get("append_1pct", "ratio"),
        "search_p95_s": get("search", "p95_s"),
        "hybrid_search_p95_s": get_in("search", "hybrid", "p95_s"),
        "search_peak_rss_bytes": get("search", "peak_rss_bytes"),
        "semantic_step_share": get("import_full", "vectors_share"),
        "paraphrase_hybrid_recall": get("recall", "paraphrase_hybrid"),
        "paraphrase_hybrid_gain": get("recall", "paraphrase_hybrid_gain"),
        "lexical_hybrid_recall_gap": get("recall", "lexical_hybrid_gap"),
        "sessions_list_p95_s": get("sessions_listing", "p95_s"),
        "report_daily_s": get("reports", "p95_s"),
        "dashboard_bytes": get("dashboard", "bytes"),
        "dashboard_write_s": get("dashboard", "p50_s"),
    }
