"""The DuckLake phase: the usage-ready import of the whole home into a DuckLake whose
metadata lives in a PostgreSQL server of its own (started here, stopped at the end), and
the daily report on it, written beside the same figures on the DuckDB file."""

from __future__ import annotations

import shutil
from datetime import timedelta
from typing import Any

from fixtures.postgres import PostgresMissing, start_postgres, stop_postgres

from .context import Context
from .errors import PhaseSkipped


def phase_ducklake(ctx: Context) -> dict[str, Any]:
    """The lake's import rate and report latency beside the file's (``import_usage_ready``
    and ``reports`` / ``report_daily_cli``, measured earlier in the run)."""
    from agentlake.load.lake import LakeCatalog, parse_catalog
    from agentlake.load.lake_ops import compact

    from .phases import run_import
    from .reports import time_cli_daily, time_reports

    root = ctx.work / "ducklake"
    shutil.rmtree(root, ignore_errors=True)
    try:
        server = start_postgres()
    except PostgresMissing as missing:
        raise PhaseSkipped(str(missing)) from None
    try:
        url = f"ducklake:postgres:{server.dsn(server.new_database())}"
        data = root / "data"
        imported = run_import(
            ctx, "--no-index", "--data-path", data, "--workspace", "default", catalog=url
        )
        lake = parse_catalog(url, data_path=str(data))
        reports = time_reports(lake, ctx.settings.report_samples, ("daily",))
        cli = time_cli_daily(url, samples=3, env=ctx.env)
        # Then compacted (every snapshot but the last expired), and the reports again.
        assert isinstance(lake, LakeCatalog)
        compacted = compact(lake, keep=timedelta(0)).to_json()
        after = time_reports(lake, ctx.settings.report_samples, ("daily",))["daily"]
    finally:
        stop_postgres(server)
    file_import = ctx.figures.get("import_usage_ready") or {}
    file_reports = (ctx.figures.get("reports") or {}).get("kinds", {}).get("daily", {})
    file_cli = ctx.figures.get("report_daily_cli") or {}
    lake_daily = reports["daily"]
    side_by_side = {
        "import_records_per_s": (imported["records_per_s"], file_import.get("records_per_s")),
        "import_seconds": (imported["seconds"], file_import.get("seconds")),
        "import_peak_rss_bytes": (imported["peak_rss_bytes"], file_import.get("peak_rss_bytes")),
        "report_daily_p50_s": (lake_daily["p50_s"], file_reports.get("p50_s")),
        "report_daily_p95_s": (lake_daily["p95_s"], file_reports.get("p95_s")),
        "report_daily_cli_p50_s": (cli["p50_s"], file_cli.get("p50_s")),
        "report_daily_p50_s_compacted": (after["p50_s"], file_reports.get("p50_s")),
    }
    return {
        "seconds": imported["seconds"],
        "samples_s": [imported["seconds"]],
        "metadata": "postgres",
        "import": imported,
        "reports": reports,
        "report_daily_cli": cli,
        "compact": compacted,
        "report_daily_compacted": after,
        "lake_vs_file": {
            name: {
                "lake": lake_value,
                "file": file_value,
                "ratio": lake_value / file_value if file_value else None,
            }
            for name, (lake_value, file_value) in side_by_side.items()
        },
    }
