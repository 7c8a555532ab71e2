"""The benchmark run: phases in order, an artifact rewritten after each, budgets, and a
terminal artifact whatever happens.

Phases (``PHASES``), each with a ``status`` of ``pending``, ``running``, ``ok``,
``skipped``, ``error`` or ``interrupted``:

``generate``          write the seeded corpus (``benchmarks.corpus``) and profile it
``import_full``       ``agentlake import --json`` on the fresh home (CLI subprocess)
``import_usage_ready`` ``agentlake import --no-index --json`` of the same home into a
                      catalog of its own: events, usage and sessions, no search index
``index_alone``       ``agentlake index --json`` on that catalog: the publish step alone
``rerun_unchanged``   the same command as ``import_full`` again, nothing changed
``append_1pct``       append 1 % new records to existing transcripts, import again
``search``            drawn queries through the library (warm-up, then timed), plus a few
                      CLI samples that include process start
``sessions_listing``  ``list_sessions`` calls through the library on an open connection
``reports``           every report through the library
``report_daily_cli``  ``agentlake report daily --json`` (CLI, process start included)
``ccusage_daily``     ``ccusage daily --json --offline`` on the same home, when ccusage
                      20.0.24 is installed; skipped otherwise
``import_floor``      ``python -m benchmarks.floors`` on the home and its catalog: the
                      least CPU parsing, redacting, tokenizing and writing its records
                      take alone, against the CPU the import goal allows for them (no
                      budget of its own; last, so that its reading and writing cannot
                      disturb the timed phases)

Every ``ok`` phase has ``seconds`` and a non-empty ``samples_s``: the samples its budget
is measured on (a single sample for the generate and import phases; the daily report's
samples for ``reports``). The import phases also carry the process tree's sampled peak
RSS (``peak_rss_bytes``, with its timeline ``rss_samples_bytes``) and the kernel's
``ru_maxrss_bytes``.

The artifact is written atomically (a temporary file renamed over it) when the run
starts, when each phase starts and when it ends. ``outcome`` is ``running`` until the
end, then ``pass``, ``miss`` (a budget was missed) or ``fail`` (a phase failed, or the
run was stopped by SIGINT, SIGTERM or ``--max-wall``; ``reason`` says which, and the
running child process is killed first).
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from types import FrameType
from typing import Any, Final, Literal

from fixtures.synth import HomeStats

from . import corpus
from .budgets import BUDGETS, check_all, missed
from .errors import PhaseError, PhaseSkipped, Stopped
from .measure import (
    ChildRun,
    interrupt,
    percentile,
    remove_catalog,
    run_child,
    stop_current_child,
    summarize,
    usable_cores,
)
from .reports import (
    CCUSAGE_VERSION,
    ccusage_version,
    find_ccusage,
    time_ccusage,
    time_cli_daily,
    time_reports,
)
from .search_latency import draw_queries, sample_texts, time_search
from .sessions_listing import time_listing

__all__ = ["ARTIFACT_VERSION", "OUTCOMES", "PHASES", "PHASE_STATUSES", "Settings", "run"]

ARTIFACT_VERSION: Final = 1
PHASES: Final = (
    "generate", "import_full", "import_usage_ready", "index_alone", "rerun_unchanged",
    "append_1pct", "search",
    "sessions_listing", "reports", "report_daily_cli", "ccusage_daily", "import_floor",
)  # fmt: skip
PhaseStatus = Literal["pending", "running", "ok", "skipped", "error", "interrupted"]
PHASE_STATUSES: Final = ("pending", "running", "ok", "skipped", "error", "interrupted")
Outcome = Literal["running", "pass", "miss", "fail"]
OUTCOMES: Final = ("running", "pass", "miss", "fail")
DEPENDENCIES: Final = ("agentlake", "duckdb", "polars", "pyarrow", "orjson", "genai-prices")
EXIT_FAIL: Final = 1
EXIT_MISS_STRICT: Final = 3
EXIT_MAX_WALL: Final = 124
IMPORT_TIMEOUT_S: Final = 3_600.0
_CLI_SEARCH_SAMPLES: Final = 3
_PROVIDER_ENV: Final = ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "AGENTLAKE_CATALOG",
                        "AGENTLAKE_WORKSPACE")  # fmt: skip


@dataclass(frozen=True)
class Settings:
    """One run's parameters."""

    events: int
    seed: int
    providers: tuple[str, ...]
    out: Path
    work: Path | None = None  # None: a temporary directory, removed at the end
    ccusage_dir: Path | None = None
    enforce_budgets: bool = True
    strict: bool = False
    max_wall_s: float | None = None
    search_queries: int = 60
    search_rounds: int = 2
    listing_rounds: int = 3
    report_samples: int = 9
    argv: tuple[str, ...] = ()


@dataclass
class _Context:
    """What the phases share: paths, the plan and the figures later phases use."""

    settings: Settings
    work: Path
    plan: corpus.CorpusPlan
    env: dict[str, str]
    written: dict[str, HomeStats] = field(default_factory=dict)
    figures: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def home(self) -> Path:
        return self.work / "home"

    @property
    def catalog(self) -> Path:
        return self.work / "catalog.duckdb"

    @property
    def usage_ready(self) -> Path:
        """The catalog of the import without the publish step (then indexed alone)."""
        return self.work / "usage-ready.duckdb"


# --------------------------------------------------------------------------- profile


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _proc_field(path: str, key: str) -> str | None:
    try:
        lines = Path(path).read_text().splitlines()
    except OSError:
        return None
    return next((ln.split(":", 1)[1].strip() for ln in lines if ln.startswith(key)), None)


def machine_profile() -> dict[str, Any]:
    """CPU model, cores, memory, OS and Python of this machine."""
    memory = _proc_field("/proc/meminfo", "MemTotal")
    return {
        "cpu": _proc_field("/proc/cpuinfo", "model name") or platform.processor() or None,
        "cores": os.cpu_count(),
        "cores_available": usable_cores(),
        "memory_bytes": int(memory.split()[0]) * 1024 if memory else None,
        "os": platform.platform(),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
    }  # fmt: skip


def dependency_versions() -> dict[str, str | None]:
    """Installed versions of agentlake and the libraries that bound its speed."""
    out: dict[str, str | None] = {}
    for name in DEPENDENCIES:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = None
    return out


# --------------------------------------------------------------------------- artifact


class Artifact:
    """The benchmark document and its atomic writes."""

    def __init__(self, settings: Settings, plan: corpus.CorpusPlan, work: Path) -> None:
        self.path = settings.out
        self.doc: dict[str, Any] = {
            "version": ARTIFACT_VERSION,
            "started_at": _now(), "updated_at": _now(), "finished_at": None,
            "command": list(settings.argv),
            "settings": _settings_json(settings, work),
            "machine": machine_profile(),
            "versions": dependency_versions(),
            "generator": _generator_json(plan),
            "budgets_enforced": settings.enforce_budgets,
            "budgets": check_all({}, final=False),
            "phases": {name: {"status": "pending"} for name in PHASES},
            "outcome": "running", "reason": None, "exit_code": None,
        }  # fmt: skip

    @property
    def phases(self) -> dict[str, dict[str, Any]]:
        """The phases' entries, by name."""
        phases: dict[str, dict[str, Any]] = self.doc["phases"]
        return phases

    def write(self) -> None:
        """Replace the artifact file with the current document."""
        self.doc["updated_at"] = _now()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(self.doc, indent=2) + "\n")
        tmp.replace(self.path)


def _settings_json(settings: Settings, work: Path) -> dict[str, Any]:
    return {
        "events": settings.events, "seed": settings.seed, "providers": list(settings.providers),
        "work_dir": str(work), "work_dir_kept": settings.work is not None,
        "ccusage_dir": str(settings.ccusage_dir) if settings.ccusage_dir else None,
        "enforce_budgets": settings.enforce_budgets, "strict": settings.strict,
        "max_wall_s": settings.max_wall_s, "search_queries": settings.search_queries,
        "search_rounds": settings.search_rounds, "listing_rounds": settings.listing_rounds,
        "report_samples": settings.report_samples,
    }  # fmt: skip


def _generator_json(plan: corpus.CorpusPlan) -> dict[str, Any]:
    return {
        "name": "benchmarks.corpus", "version": corpus.GENERATOR_VERSION, "seed": plan.seed,
        "events": plan.events, "providers": list(plan.providers), "shares": plan.shares(),
        "targets": plan.targets, "giants": plan.giants, "digest": None,
        "median_line_bytes": None,
    }  # fmt: skip


# --------------------------------------------------------------------------- phases


def _cli(*args: str | Path) -> list[str]:
    return [sys.executable, "-m", "agentlake", *map(str, args)]


def _run_import(ctx: _Context, *options: str, catalog: Path | None = None) -> dict[str, Any]:
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
        **_cpu(run, totals["records"]),
        **_memory(run, receipt),
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


def phase_generate(ctx: _Context) -> dict[str, Any]:
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


def phase_import_full(ctx: _Context) -> dict[str, Any]:
    """The first import of the whole home."""
    return _run_import(ctx)


def phase_import_usage_ready(ctx: _Context) -> dict[str, Any]:
    """The first import of the whole home without the publish step (``--no-index``)."""
    remove_catalog(ctx.usage_ready)
    return _run_import(ctx, "--no-index", catalog=ctx.usage_ready)


def phase_index_alone(ctx: _Context) -> dict[str, Any]:
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
        "events_per_s": published["indexed"] / run.seconds, **_cpu(run, published["indexed"]),
        **_memory(run, published),
    }  # fmt: skip


def phase_rerun_unchanged(ctx: _Context) -> dict[str, Any]:
    """The same import again, with nothing changed."""
    return _run_import(ctx)


def phase_append_1pct(ctx: _Context) -> dict[str, Any]:
    """Append 1 % new records (not timed), then import (timed)."""
    started = time.perf_counter()
    lines = {p: s.lines for p, s in ctx.written.items()}
    appended = corpus.append_new_records(ctx.home, ctx.work / "append-donors", ctx.plan, lines)
    prepare = time.perf_counter() - started
    figures = _run_import(ctx)
    full = ctx.figures["import_full"]["seconds"]
    events = sum(lines.values())
    return {
        **figures, "ratio": figures["seconds"] / full, "prepare_seconds": prepare,
        "lines_appended": appended.lines, "bytes_appended": appended.bytes,
        "files_appended": appended.files, "fraction": appended.lines / events if events else 0.0,
        "providers_appended": appended.providers,
    }  # fmt: skip


def phase_search(ctx: _Context) -> dict[str, Any]:
    """Drawn queries through the library, then a few through the CLI."""
    seed = corpus.derive_seed(ctx.plan.seed, "search")
    queries = draw_queries(sample_texts(ctx.catalog, seed), seed, ctx.settings.search_queries)
    if not queries:
        raise PhaseError("the catalog has no searchable text to draw queries from")
    figures = time_search(ctx.catalog, queries, rounds=ctx.settings.search_rounds)
    cli: list[float] = []
    for query in queries[:_CLI_SEARCH_SAMPLES]:
        run = run_child(_cli("search", query, "--catalog", ctx.catalog, "--json"), env=ctx.env,
                        timeout=300)  # fmt: skip
        if run.returncode != 0:
            raise PhaseError(f"agentlake search exited {run.returncode}: {run.stderr.strip()}")
        cli.append(run.seconds)
    figures["cli"] = {"queries": queries[:_CLI_SEARCH_SAMPLES], "samples_s": cli,
                      "p50_s": percentile(cli, 50), "note": "includes process start"}  # fmt: skip
    figures["seconds"] = figures["warmup_s"] + sum(figures["samples_s"])
    return figures


def phase_sessions_listing(ctx: _Context) -> dict[str, Any]:
    """``list_sessions`` rounds (see ``benchmarks.sessions_listing``)."""
    figures = time_listing(ctx.catalog, ctx.settings.listing_rounds)
    figures["seconds"] = sum(figures["samples_s"])
    return {**figures, **summarize(figures["samples_s"])}


def phase_reports(ctx: _Context) -> dict[str, Any]:
    """Every report kind through the library; the daily report's samples lead."""
    kinds = time_reports(ctx.catalog, ctx.settings.report_samples)
    daily = kinds["daily"]["samples_s"]
    return {"seconds": sum(sum(k["samples_s"]) for k in kinds.values()), "samples_s": daily,
            "p50_s": percentile(daily, 50), "p95_s": percentile(daily, 95), "kinds": kinds}  # fmt: skip


def phase_report_daily_cli(ctx: _Context) -> dict[str, Any]:
    """``agentlake report daily --json`` through the CLI."""
    figures = time_cli_daily(ctx.catalog, samples=3, env=ctx.env)
    return {**figures, "seconds": sum(figures["samples_s"])}


def phase_ccusage_daily(ctx: _Context) -> dict[str, Any]:
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


def phase_import_floor(ctx: _Context) -> dict[str, Any]:
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
    full = ctx.figures["import_full"]
    import_cpu = full["cpu_user_seconds"] + full["cpu_system_seconds"]
    return {
        "seconds": run.seconds, "samples_s": [run.seconds], **floor,
        "import_cpu_seconds": import_cpu,
        "share_of_allowed": floor["cpu_seconds"] / floor["allowed_cpu_seconds"]
        if floor["allowed_cpu_seconds"] else None,
    }  # fmt: skip


_PHASE_FUNCTIONS: Final[dict[str, Callable[[_Context], dict[str, Any]]]] = {
    "generate": phase_generate,
    "import_full": phase_import_full,
    "import_usage_ready": phase_import_usage_ready,
    "index_alone": phase_index_alone,
    "rerun_unchanged": phase_rerun_unchanged,
    "append_1pct": phase_append_1pct,
    "search": phase_search,
    "sessions_listing": phase_sessions_listing,
    "reports": phase_reports,
    "report_daily_cli": phase_report_daily_cli,
    "ccusage_daily": phase_ccusage_daily,
    "import_floor": phase_import_floor,
}


# --------------------------------------------------------------------------- budgets


def measurements(figures: dict[str, dict[str, Any]]) -> dict[str, float | None]:
    """Each budget's measured figure from the finished phases' figures (None: not
    measured)."""

    def get(phase: str, key: str) -> float | None:
        value = figures.get(phase, {}).get(key)
        return float(value) if isinstance(value, int | float) else None

    rss = [max(figures[p]["peak_rss_bytes"], figures[p]["ru_maxrss_bytes"])
           for p in ("import_full", "import_usage_ready", "index_alone", "rerun_unchanged",
                     "append_1pct") if p in figures]  # fmt: skip
    return {
        "import_records_per_s": get("import_full", "records_per_s"),
        "usage_ready_records_per_s": get("import_usage_ready", "records_per_s"),
        "import_peak_rss_bytes": float(max(rss)) if rss else None,
        "rerun_unchanged_s": get("rerun_unchanged", "seconds"),
        "append_1pct_ratio": get("append_1pct", "ratio"),
        "search_p95_s": get("search", "p95_s"),
        "sessions_list_p95_s": get("sessions_listing", "p95_s"),
        "report_daily_s": get("reports", "p95_s"),
        "daily_vs_ccusage_ratio": get("ccusage_daily", "ratio"),
    }


# --------------------------------------------------------------------------- the run


def _cli_env(work: Path) -> dict[str, str]:
    """The environment of the agentlake subprocesses: no provider or catalog override
    leaks in, and no user price overrides (an absent config file)."""
    env = {k: v for k, v in os.environ.items() if k not in _PROVIDER_ENV}
    env["AGENTLAKE_CONFIG"] = str(work / "no-config.toml")
    return env


@contextmanager
def _stop_signals(max_wall_s: float | None) -> Iterator[None]:
    """SIGINT and SIGTERM (and SIGALRM after ``max_wall_s``) raise :class:`Stopped`
    (through :func:`interrupt`: held back while a child is being started)."""

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        interrupt(Stopped(f"stopped by {signal.Signals(signum).name}", 128 + signum))

    def on_alarm(_signum: int, _frame: FrameType | None) -> None:
        interrupt(Stopped(f"--max-wall of {max_wall_s:g} s exceeded", EXIT_MAX_WALL))

    previous = {
        sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGALRM)
    }
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGALRM, on_alarm)
    if max_wall_s:
        signal.setitimer(signal.ITIMER_REAL, max_wall_s)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _ignore_stop_signals() -> None:
    """While the terminal artifact is written, a second signal must not cut it short."""
    signal.setitimer(signal.ITIMER_REAL, 0)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGALRM):
        signal.signal(sig, signal.SIG_IGN)


class _Runner:
    """Runs the phases in order, keeping the artifact current."""

    def __init__(self, ctx: _Context, artifact: Artifact) -> None:
        self.ctx = ctx
        self.artifact = artifact
        self.current: str | None = None

    def phase(self, name: str) -> bool:
        """Run one phase; False when it failed (the run stops)."""
        entry: dict[str, Any] = {"status": "running", "started_at": _now()}
        self.artifact.phases[name] = entry
        self.current = name
        self.artifact.write()
        _progress(f"{name}: running")
        try:
            figures = _PHASE_FUNCTIONS[name](self.ctx)
        except PhaseSkipped as skip:
            entry.update(status="skipped", reason=str(skip), finished_at=_now())
            _progress(f"{name}: skipped ({skip})")
        except Exception as exc:  # noqa: BLE001 - the harness's one error boundary: any failure becomes the phase's recorded error
            entry.update(status="error", error=f"{type(exc).__name__}: {exc}", finished_at=_now())
            self.current = None
            self.fail(f"phase {name} failed: {type(exc).__name__}: {exc}", EXIT_FAIL)
            return False
        else:
            self.ctx.figures[name] = figures
            entry.update(status="ok", finished_at=_now(), **figures)
            if name == "generate":
                self.artifact.doc["generator"].update(
                    digest=figures["profile"]["digest"],
                    median_line_bytes=figures["profile"]["median_line_bytes"],
                )
            _progress(f"{name}: ok in {figures['seconds']:.2f} s")
        self.current = None
        self.artifact.doc["budgets"] = self.verdicts(final=False)
        self.artifact.write()
        return True

    def verdicts(self, *, final: bool) -> dict[str, dict[str, Any]]:
        """The budgets against what was measured so far."""
        notes = {} if self.artifact.doc["budgets_enforced"] else {
            b.name: "recorded, not enforced" for b in BUDGETS}  # fmt: skip
        return check_all(measurements(self.ctx.figures), final=final, notes=notes)

    def fail(self, reason: str, exit_code: int) -> None:
        """Close the run as failed: the running phase is interrupted, the rest skipped."""
        for name, entry in self.artifact.phases.items():
            if name == self.current:
                entry.update(status="interrupted", reason=reason, finished_at=_now())
            elif entry["status"] in ("pending", "running"):
                entry.update(status="skipped", reason="not run: the run ended before it")
        self.finish("fail", reason, exit_code)

    def finish(self, outcome: Outcome, reason: str | None, exit_code: int) -> None:
        """Write the terminal artifact."""
        doc = self.artifact.doc
        doc["budgets"] = self.verdicts(final=True)
        doc.update(outcome=outcome, reason=reason, exit_code=exit_code, finished_at=_now())
        self.artifact.write()

    def conclude(self) -> None:
        """After the last phase: pass, or miss when an enforced budget was missed."""
        verdicts = self.verdicts(final=True)
        misses = missed(verdicts) if self.artifact.doc["budgets_enforced"] else []
        if misses:
            code = EXIT_MISS_STRICT if self.ctx.settings.strict else 0
            self.finish("miss", f"budgets missed: {', '.join(misses)}", code)
        else:
            self.finish("pass", None, 0)


def _progress(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def run(settings: Settings) -> int:
    """Run the benchmark; returns the exit code (0 pass or miss, 1 a phase failed, 3 a
    miss with ``strict``, 124 ``max_wall_s`` exceeded, 128+N stopped by signal N)."""
    plan = corpus.plan_corpus(settings.events, settings.seed, settings.providers)
    work = settings.work or Path(tempfile.mkdtemp(prefix="agentlake-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    ctx = _Context(settings, work, plan, _cli_env(work))
    os.environ["AGENTLAKE_CONFIG"] = ctx.env["AGENTLAKE_CONFIG"]  # the in-process calls too
    artifact = Artifact(settings, plan, work)
    runner = _Runner(ctx, artifact)
    try:
        with _stop_signals(settings.max_wall_s):
            try:
                artifact.write()
                if all(runner.phase(name) for name in PHASES):
                    runner.conclude()
            except Stopped as stop:
                _ignore_stop_signals()
                stop_current_child()
                runner.fail(stop.reason, stop.exit_code)
    finally:
        if settings.work is None:
            shutil.rmtree(work, ignore_errors=True)
    print_summary(artifact.doc)
    code: int = artifact.doc["exit_code"]
    return code


# --------------------------------------------------------------------------- summary


def _format(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "records/s":
        return f"{value:,.0f} rec/s"
    if unit == "bytes":
        return f"{value / 2**20:,.0f} MiB"
    if unit == "s":
        return f"{value * 1e3:,.1f} ms" if value < 1 else f"{value:,.2f} s"
    return f"{value:.3f}"


def summary_lines(doc: dict[str, Any]) -> list[str]:
    """The human summary: each budget's figure against its goal, then the outcome."""
    gen = doc["generator"]
    lines = [
        f"agentlake benchmark: {gen['events']:,} events (seed {gen['seed']}, "
        f"{', '.join(gen['providers'])}; generator {gen['version']})",
        f"{'figure':<52} {'measured':>14}   {'goal':>16}  status",
    ]
    for name, v in doc["budgets"].items():
        label = next(b.label for b in BUDGETS if b.name == name)
        goal = f"{v['comparison']} {_format(v['budget'], v['unit'])}"
        lines.append(f"{label:<52} {_format(v['measured'], v['unit']):>14}   {goal:>16}  "
                     f"{v['status']}")  # fmt: skip
    extra = []
    if gen.get("median_line_bytes") is not None:
        extra.append(f"median line {gen['median_line_bytes']:,.0f} B")
    phases = doc["phases"]
    full = phases["import_full"]
    if full.get("records"):
        extra.append(f"records {full['records']:,}")
    if full.get("records_per_s_at_full_cores"):
        extra.append(
            f"import CPU {full['cpu_user_seconds'] + full['cpu_system_seconds']:,.1f} s "
            f"({full['cores_busy']:.2f} cores busy; every core busy: "
            f"{full['records_per_s_at_full_cores']:,.0f} rec/s)"
        )
    if phases["ccusage_daily"]["status"] == "skipped":
        extra.append(f"ccusage: {phases['ccusage_daily'].get('reason')}")
    lines += [", ".join(extra)] if extra else []
    floor = phases["import_floor"]
    if floor.get("cpu_seconds") is not None:
        lines.append(
            f"import floor (parsing, redacting, tokenizing and writing alone): "
            f"{floor['cpu_seconds']:,.1f} s CPU of the {floor['allowed_cpu_seconds']:,.1f} s "
            f"the import goal allows on {floor['cores']} cores"
        )
    enforced = "" if doc["budgets_enforced"] else " (budgets recorded, not enforced)"
    lines.append(
        f"outcome: {doc['outcome']}{enforced}" + (f": {doc['reason']}" if doc["reason"] else "")
    )
    return lines


def print_summary(doc: dict[str, Any]) -> None:
    """Print :func:`summary_lines` to stdout."""
    print("\n".join(summary_lines(doc)), flush=True)
