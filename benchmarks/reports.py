"""Latency of every report on an imported catalog, next to ccusage's daily report on the
same transcripts.

    python -m benchmarks.reports CATALOG [--home HOME] [--ccusage-dir DIR] [--samples 7]

Each report is called through the library (``agentlake.reports.report``, which opens
the catalog read-only, as the CLI does) once to warm the file cache and then
``--samples`` times; p50 and p95 are printed in milliseconds. ``report daily --json``
is also timed through the CLI (process start included). When ccusage is installed
(``DIR/node_modules/.bin/ccusage``, default: the repository root, then ``$PATH``) and
``--home`` holds the imported ``.claude`` tree, ``ccusage claude daily --json --offline
--mode calculate --timezone UTC`` is timed on it, three times.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from agentlake.reports import REPORT_KINDS, ReportFilter, report

REPO = Path(__file__).resolve().parent.parent


def quantile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def time_reports(catalog: Path, samples: int) -> dict[str, Any]:
    """p50/p95 seconds and raw samples of each report kind, library call."""
    out: dict[str, Any] = {}
    for kind in REPORT_KINDS:
        report(catalog, "default", kind, ReportFilter())
        times = []
        for _ in range(samples):
            started = time.perf_counter()
            result = report(catalog, "default", kind, ReportFilter())
            times.append(time.perf_counter() - started)
        out[kind] = {"rows": result.rows.num_rows, "p50_s": quantile(times, 0.5),
                     "p95_s": quantile(times, 0.95), "samples_s": times}  # fmt: skip
    return out


def time_cli_daily(catalog: Path, samples: int = 3) -> dict[str, Any]:
    """``agentlake report daily --json`` as a subprocess (includes interpreter start)."""
    times = []
    for _ in range(samples):
        started = time.perf_counter()
        subprocess.run(
            [
                sys.executable,
                "-m",
                "agentlake",
                "report",
                "daily",
                "--json",
                "--catalog",
                str(catalog),
            ],
            check=True,
            capture_output=True,
        )
        times.append(time.perf_counter() - started)
    return {"p50_s": quantile(times, 0.5), "samples_s": times}


def find_ccusage(ccusage_dir: Path | None) -> str | None:
    """The ccusage executable: under ``ccusage_dir`` or the repository, else on PATH."""
    for base in (ccusage_dir, REPO):
        if base is not None and (base / "node_modules" / ".bin" / "ccusage").exists():
            return str(base / "node_modules" / ".bin" / "ccusage")
    return shutil.which("ccusage")


def time_ccusage(executable: str, home: Path, samples: int = 3) -> dict[str, Any]:
    """ccusage's daily report over ``home/.claude`` (offline, prices calculated, UTC)."""
    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(home / ".claude"), "CCUSAGE_OFFLINE": "1",
           "LOG_LEVEL": "0"}  # fmt: skip
    times, days = [], 0
    for _ in range(samples):
        started = time.perf_counter()
        proc = subprocess.run(
            [executable, "claude", "daily", "--json", "--offline", "--mode", "calculate",
             "--timezone", "UTC"],
            check=True, capture_output=True, text=True, env=env,
        )  # fmt: skip
        times.append(time.perf_counter() - started)
        days = len(json.loads(proc.stdout)["daily"])
    return {"p50_s": quantile(times, 0.5), "samples_s": times, "days": days}


def run(catalog: Path, home: Path | None, ccusage_dir: Path | None, samples: int) -> dict[str, Any]:
    """Every measurement of this module as one JSON-able document."""
    doc: dict[str, Any] = {"library": time_reports(catalog, samples)}
    doc["cli_daily"] = time_cli_daily(catalog)
    executable = find_ccusage(ccusage_dir)
    if executable and home is not None and (home / ".claude").is_dir():
        doc["ccusage_daily"] = time_ccusage(executable, home)
    else:
        doc["ccusage_daily"] = {"skipped": "ccusage not installed or no --home with .claude"}
    return doc


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.reports", description=__doc__)
    parser.add_argument("catalog", type=Path)
    parser.add_argument("--home", type=Path, default=None)
    parser.add_argument("--ccusage-dir", type=Path, default=None)
    parser.add_argument("--samples", type=int, default=7)
    args = parser.parse_args()
    doc = run(args.catalog, args.home, args.ccusage_dir, args.samples)
    for kind, stats in doc["library"].items():
        print(f"report {kind:8} {stats['rows']:>7,} rows  p50 {stats['p50_s'] * 1e3:7.1f} ms  "
              f"p95 {stats['p95_s'] * 1e3:7.1f} ms")  # fmt: skip
    print(f"agentlake report daily --json (CLI, process start included): "
          f"{doc['cli_daily']['p50_s']:.2f} s")  # fmt: skip
    cc = doc["ccusage_daily"]
    print("ccusage claude daily: " + (f"{cc['p50_s']:.2f} s" if "p50_s" in cc else cc["skipped"]))


if __name__ == "__main__":
    main()
