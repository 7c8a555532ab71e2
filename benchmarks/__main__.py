"""Benchmark an import of a seeded synthetic corpus and the queries over it.

    python -m benchmarks --lines 1000000 --seed 1

Phases: generate, full import (records/s, peak RSS of the import process), no-change
re-run, 1 % append re-run, every report (library calls; ``report daily`` also through
the CLI, and ccusage's daily report on the same transcripts when it is installed), search.
The import phases run the real CLI in a subprocess. Writes ``test-results/benchmark.json`` (atomically, after every phase).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path
from typing import Any

from agentlake.demo import generate_claude_corpus

from .reports import find_ccusage, time_ccusage, time_cli_daily, time_reports

BUDGETS = {
    "import_records_per_s": 100_000,
    "import_peak_rss_bytes": 1 << 30,
    "rerun_unchanged_s": 1.0,
    "append_1pct_ratio": 0.05,
    "report_s": 0.1,
}


def _run(*args: str | Path) -> tuple[float, int, str]:
    """Run the CLI; returns (seconds, peak RSS of that child in bytes, stdout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "agentlake", *map(str, args)],
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - started
    if proc.returncode not in (0, 1):
        raise SystemExit(
            f"benchmark step failed ({proc.returncode}): {' '.join(map(str, args))}: {proc.stderr.strip()}"
        )
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return seconds, max(peak, before) * 1024, proc.stdout


def _write(doc: dict[str, Any], out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=2) + "\n")
    tmp.replace(out)


def _machine() -> dict[str, Any]:
    mem = next((int(line.split()[1]) * 1024 for line in Path("/proc/meminfo").read_text().splitlines()
                if line.startswith("MemTotal")), None) if Path("/proc/meminfo").exists() else None  # fmt: skip
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").exists() else platform.processor()  # fmt: skip
    return {"cpu": cpu, "cores": os.cpu_count(), "memory_bytes": mem, "os": platform.platform(),
            "python": platform.python_version()}  # fmt: skip


def _append_one_percent(home: Path, fraction: float = 0.01) -> int:
    """Append copies of existing lines (with fresh ids) to the largest files until about
    ``fraction`` of the corpus's lines were added; returns the lines added."""
    files = sorted(home.rglob("*.jsonl"), key=lambda p: p.stat().st_size, reverse=True)
    total = sum(sum(1 for _ in p.open("rb")) for p in files)
    want, added = int(total * fraction), 0
    for path in files:
        lines = path.read_bytes().splitlines(keepends=True)[-200:]
        extra = [line.replace(b'"uuid":"', b'"uuid":"bench-' + str(added + i).encode() + b"-")
                 .replace(b'"id":"msg_', b'"id":"msg_bench' + str(added + i).encode())
                 for i, line in enumerate(lines)]  # fmt: skip
        with path.open("ab") as fh:
            fh.writelines(extra)
        added += len(extra)
        if added >= want:
            break
    return added


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--dir", type=Path, default=None, help="work directory (default: a temp dir)"
    )
    parser.add_argument("--out", type=Path, default=Path("test-results/benchmark.json"))
    parser.add_argument(
        "--ccusage-dir", type=Path, default=None, help="directory whose node_modules/ holds ccusage"
    )
    args = parser.parse_args()

    work = args.dir or Path(tempfile.mkdtemp(prefix="agentlake-bench-"))
    home, catalog = work / "home", work / "catalog.duckdb"
    shutil.rmtree(home, ignore_errors=True)
    for stale in work.glob("catalog.duckdb*"):
        stale.unlink()
    doc: dict[str, Any] = {
        "machine": _machine(),
        "versions": {p: version(p) for p in ("agentlake", "duckdb", "polars", "pyarrow", "orjson")},
        "generator": {"name": "generate_claude_corpus", "seed": args.seed, "lines": args.lines},
        "budgets": BUDGETS, "phases": {}, "outcome": "running",
    }  # fmt: skip
    phases: dict[str, Any] = doc["phases"]

    started = time.perf_counter()
    stats = generate_claude_corpus(home, seed=args.seed, target_lines=args.lines)
    phases["generate"] = {"seconds": time.perf_counter() - started, "files": stats.files,
                          "lines": stats.lines, "bytes": stats.bytes}  # fmt: skip
    _write(doc, args.out)

    seconds, rss, out = _run("import", "--home", home, "--catalog", catalog, "--json")
    receipt = json.loads(out)
    phases["import"] = {"seconds": seconds, "records": receipt["totals"]["records"],
                        "records_per_s": receipt["totals"]["records"] / seconds,
                        "index_seconds": receipt["index_seconds"], "peak_rss_bytes": rss}  # fmt: skip
    _write(doc, args.out)

    seconds, _, _ = _run("import", "--home", home, "--catalog", catalog, "--json")
    phases["rerun_unchanged"] = {"seconds": seconds}
    added = _append_one_percent(home)
    seconds, _, _ = _run("import", "--home", home, "--catalog", catalog, "--json")
    phases["append_1pct"] = {
        "seconds": seconds,
        "lines": added,
        "ratio": seconds / phases["import"]["seconds"],
    }
    _write(doc, args.out)

    phases["reports"] = time_reports(catalog, samples=7)
    phases["report_daily_cli"] = time_cli_daily(catalog)
    ccusage = find_ccusage(args.ccusage_dir)
    phases["ccusage_daily"] = (
        time_ccusage(ccusage, home) if ccusage else {"skipped": "ccusage is not installed"}
    )
    _write(doc, args.out)
    samples = [
        _run("search", q, "--catalog", catalog, "--json")[0]
        for q in ("cache bug", "session loader", "retry", "parser", "health endpoint")
    ]
    phases["search"] = {
        "samples_s": samples,
        "median_s": sorted(samples)[2],
        "note": "includes process start",
    }

    checks = {
        "import_records_per_s": phases["import"]["records_per_s"]
        >= BUDGETS["import_records_per_s"],
        "import_peak_rss_bytes": phases["import"]["peak_rss_bytes"]
        <= BUDGETS["import_peak_rss_bytes"],
        "rerun_unchanged_s": phases["rerun_unchanged"]["seconds"] <= BUDGETS["rerun_unchanged_s"],
        "append_1pct_ratio": phases["append_1pct"]["ratio"] <= BUDGETS["append_1pct_ratio"],
        "report_s": max(r["p95_s"] for r in phases["reports"].values()) <= BUDGETS["report_s"],
    }
    doc["checks"] = checks
    doc["outcome"] = "pass" if all(checks.values()) else "fail"
    _write(doc, args.out)
    json.dump(
        {k: v for k, v in doc.items() if k in ("phases", "checks", "outcome")}, sys.stdout, indent=2
    )
    sys.stdout.write("\n")
    if args.dir is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
