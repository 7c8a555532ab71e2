"""The benchmark run: the phases of :mod:`benchmarks.phases` in order, an artifact
rewritten after each, budgets, and a terminal artifact whatever happens.

Each phase has a ``status`` of ``pending``, ``running``, ``ok``, ``skipped``, ``error``
or ``interrupted``.

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
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from types import FrameType
from typing import Any, Final, Literal

from . import corpus
from .budgets import BUDGETS, check_all, missed
from .context import Context, Settings
from .errors import PhaseSkipped, Stopped
from .measure import interrupt, stop_current_child, usable_cores
from .phases import PHASE_FUNCTIONS, PHASES, measurements

__all__ = ["ARTIFACT_VERSION", "OUTCOMES", "PHASES", "PHASE_STATUSES", "Settings", "run"]

ARTIFACT_VERSION: Final = 1
PhaseStatus = Literal["pending", "running", "ok", "skipped", "error", "interrupted"]
PHASE_STATUSES: Final = ("pending", "running", "ok", "skipped", "error", "interrupted")
Outcome = Literal["running", "pass", "miss", "fail"]
OUTCOMES: Final = ("running", "pass", "miss", "fail")
DEPENDENCIES: Final = ("agentlake", "duckdb", "polars", "pyarrow", "orjson", "genai-prices")
EXIT_FAIL: Final = 1
EXIT_MISS_STRICT: Final = 3
EXIT_MAX_WALL: Final = 124
_PROVIDER_ENV: Final = ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "AGENTLAKE_CATALOG",
                        "AGENTLAKE_WORKSPACE")  # fmt: skip


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

    def __init__(self, ctx: Context, artifact: Artifact) -> None:
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
            figures = PHASE_FUNCTIONS[name](self.ctx)
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
    ctx = Context(settings, work, plan, _cli_env(work))
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
    if unit == "cores":
        return f"{value:.2f} cores"
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
            f"import floor (parsing, redacting, tokenizing, embedding and writing alone): "
            f"{floor['cpu_seconds']:,.1f} s CPU of the {floor['allowed_cpu_seconds']:,.1f} s "
            f"the import goal allows on {floor['cores']} cores"
        )
    if floor.get("floor_ratio") is not None:
        lines.append(f"full import CPU {floor['import_cpu_seconds']:,.1f} s: "
                     f"{floor['floor_ratio']:.2f} x its floor")  # fmt: skip
    if floor.get("index_floor_ratio") is not None:
        lines.append(f"publish step alone CPU {floor['index_step_cpu_seconds']:,.1f} s: "
                     f"{floor['index_floor_ratio']:.2f} x its floor")  # fmt: skip
    if floor.get("vectors_floor_ratio") is not None:
        lines.append(f"publish step's semantic part CPU {floor['vectors_step_cpu_seconds']:,.1f} s: "
                     f"{floor['vectors_floor_ratio']:.2f} x its floor")  # fmt: skip
    if full.get("vectors_seconds") is not None:
        rate = full.get("vectors_embedded_per_s")
        lines.append(
            f"semantic step of the full import: {full['vectors_seconds']:,.2f} s, "
            f"{full['vectors_embedded']:,} events embedded"
            + (f" ({rate:,.0f}/s)" if rate else "")
            + f", {full['vectors_share'] * 100:.1f} % of the import's wall time"
        )
    hybrid = phases["search"].get("hybrid")
    if hybrid:
        lines.append(
            f"hybrid search: first call {hybrid['first_call_s'] * 1e3:,.0f} ms (loads "
            f"{hybrid['vectors']:,} vectors and the model), p50 {hybrid['p50_s'] * 1e3:,.1f} ms; "
            f"CLI p50 {hybrid['cli']['p50_s'] * 1e3:,.0f} ms (process start included)"
        )
    recall = phases.get("recall", {})
    if recall.get("recall"):
        lines.append("recall@{}: ".format(recall["k"]) + "; ".join(
            f"{name} " + ", ".join(f"{mode} {r['recall']:.2f}" for mode, r in modes.items())
            for name, modes in recall["recall"].items()))  # fmt: skip
    by = phases.get("import_by_provider", {})
    if by.get("providers"):
        lines.append("usage-ready records/s by provider: " + ", ".join(
            f"{name} {p['records_per_s']:,.0f}" for name, p in by["providers"].items()))  # fmt: skip
    lake = phases.get("ducklake", {}).get("lake_vs_file")
    if lake:
        lines.append("DuckLake on PostgreSQL vs DuckDB file: " + "; ".join(
            f"{name} {v['lake']:,.3g} vs {v['file']:,.3g}"
            + (f" ({v['ratio']:.2f} x)" if v["ratio"] is not None else "")
            for name, v in lake.items() if v["lake"] is not None and v["file"] is not None))  # fmt: skip
    enforced = "" if doc["budgets_enforced"] else " (budgets recorded, not enforced)"
    lines.append(
        f"outcome: {doc['outcome']}{enforced}" + (f": {doc['reason']}" if doc["reason"] else "")
    )
    return lines


def print_summary(doc: dict[str, Any]) -> None:
    """Print :func:`summary_lines` to stdout."""
    print("\n".join(summary_lines(doc)), flush=True)
