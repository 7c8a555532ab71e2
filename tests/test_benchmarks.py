"""The benchmark harness (``python -m benchmarks``): a smoke run's artifact checked
against its schema, the stop paths (SIGTERM, ``--max-wall``, a failing phase), and the
pieces — the seeded corpus, the 1 % append, percentiles and budget checks.

Nothing here asserts a speed: the smoke run records its budgets without enforcing them.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from benchmarks.budgets import BUDGETS, check, check_all, missed
from benchmarks.corpus import (
    GENERATOR_VERSION,
    PROVIDER_IDS,
    PROVIDERS,
    SHARES,
    append_new_records,
    generate_corpus,
    parse_providers,
    plan_corpus,
    profile_corpus,
)
from benchmarks.extract import extract_home
from benchmarks.measure import percentile
from tests.conftest import REPO, cli_env

PHASES = (
    "generate", "import_full", "import_usage_ready", "index_alone", "import_by_provider",
    "rerun_unchanged", "rerun_cold", "append_1pct", "search", "sessions_listing", "reports",
    "report_daily_cli", "dashboard", "cli_latency", "recall", "ducklake", "ccusage_daily",
    "import_floor",
)  # fmt: skip
PHASE_STATUSES = {"pending", "running", "ok", "skipped", "error", "interrupted"}
BUDGET_NAMES = {
    "usage_ready_records_per_s", "import_floor_ratio", "import_cores_busy", "index_floor_ratio",
    "import_peak_rss_bytes", "provider_rate_spread", "rerun_unchanged_s", "rerun_cold_s",
    "cli_read_p50_s", "cli_help_p50_s", "daily_vs_ccusage_ratio", "append_1pct_ratio",
    "search_p95_s", "sessions_list_p95_s", "report_daily_s", "hybrid_search_p95_s",
    "search_peak_rss_bytes", "semantic_step_share", "paraphrase_hybrid_recall",
    "paraphrase_hybrid_gain", "lexical_hybrid_recall_gap", "dashboard_bytes", "dashboard_write_s",
}  # fmt: skip
# Skipped in the smoke run: ccusage is not installed there, and dropping the page cache
# would slow every other test running beside it.
SMOKE_SKIPPED = {"ccusage_daily": "daily_vs_ccusage_ratio", "rerun_cold": "rerun_cold_s"}
DEPENDENCIES = {"agentlake", "duckdb", "polars", "pyarrow", "orjson", "genai-prices"}
IMPORT_PHASES = (
    "import_full",
    "import_usage_ready",
    "index_alone",
    "rerun_unchanged",
    "append_1pct",
)
# Four providers: an import of each alone is a phase of its own (a JSONL transcript, a
# rollout, per-session totals and a SQLite store between them); make bench runs all.
SMOKE_PROVIDERS = ("claude", "codex", "copilot", "opencode")
SMOKE_ARGS = ("--events", "3000", "--seed", "3", "--providers", ",".join(SMOKE_PROVIDERS),
              "--record-only", "--search-queries", "30",
              "--search-rounds", "1", "--report-samples", "3", "--rerun-samples", "2",
              "--cli-rounds", "1", "--no-cold-rerun")  # fmt: skip
Json = dict[str, Any]


def bench(*args: str | Path) -> list[str]:
    """The benchmark's command line."""
    return [sys.executable, "-m", "benchmarks", *map(str, args)]


def start_bench(*args: str | Path) -> subprocess.Popen[str]:
    """Start the benchmark from the repository root, as ``make bench-smoke`` does."""
    return subprocess.Popen(
        bench(*args), cwd=REPO, env=cli_env(), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def read_artifact(path: Path) -> Json | None:
    """The artifact, or None while it does not exist yet."""
    try:
        doc: Json = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    return doc


def wait_for(path: Path, ready: Callable[[Json], bool], timeout: float = 60) -> Json:
    """Poll the artifact until ``ready`` holds for it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        doc = read_artifact(path)
        if doc is not None and ready(doc):
            return doc
        time.sleep(0.02)
    raise AssertionError(f"the artifact never became ready: {read_artifact(path)}")


def is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


# --------------------------------------------------------------------------- schema


def assert_schema(doc: Json, *, final: bool = True) -> None:
    """The artifact's shape: every required key with its type, every phase and budget."""
    top = {"version", "started_at", "updated_at", "finished_at", "command", "settings",
           "machine", "versions", "generator", "budgets_enforced", "budgets", "phases",
           "outcome", "reason", "exit_code"}  # fmt: skip
    assert top <= set(doc), top - set(doc)
    assert doc["version"] == 1
    assert isinstance(doc["started_at"], str) and isinstance(doc["updated_at"], str)
    assert all(isinstance(a, str) for a in doc["command"])
    assert isinstance(doc["budgets_enforced"], bool)
    assert_settings(doc["settings"])
    assert_machine(doc["machine"])
    assert set(doc["versions"]) == DEPENDENCIES
    assert all(isinstance(v, str) and v for v in doc["versions"].values())
    assert_generator(doc["generator"], final=final)
    assert set(doc["budgets"]) == BUDGET_NAMES
    for verdict in doc["budgets"].values():
        assert_budget(verdict, final=final)
    assert list(doc["phases"]) == list(PHASES)
    for phase in doc["phases"].values():
        assert_phase(phase)
    if final:
        assert doc["outcome"] in {"pass", "miss", "fail"}
        assert isinstance(doc["finished_at"], str)
        assert isinstance(doc["exit_code"], int)
        assert doc["reason"] is None or isinstance(doc["reason"], str)
        assert "running" not in {p["status"] for p in doc["phases"].values()}
        assert "pending" not in {p["status"] for p in doc["phases"].values()}
    else:
        assert doc["outcome"] == "running"


def assert_settings(settings: Json) -> None:
    for key, kind in (("events", int), ("seed", int), ("providers", list), ("work_dir", str),
                      ("enforce_budgets", bool), ("strict", bool), ("search_queries", int),
                      ("search_rounds", int), ("listing_rounds", int), ("report_samples", int)):  # fmt: skip
        assert isinstance(settings[key], kind), key
    assert settings["max_wall_s"] is None or is_number(settings["max_wall_s"])


def assert_machine(machine: Json) -> None:
    assert isinstance(machine["cores"], int) and machine["cores"] >= 1
    assert isinstance(machine["memory_bytes"], int) and machine["memory_bytes"] > 0
    for key in ("os", "python", "kernel"):
        assert isinstance(machine[key], str) and machine[key], key
    assert machine["cpu"] is None or isinstance(machine["cpu"], str)


def assert_generator(gen: Json, *, final: bool) -> None:
    assert gen["name"] == "benchmarks.corpus"
    assert gen["version"] == GENERATOR_VERSION
    assert isinstance(gen["seed"], int) and isinstance(gen["events"], int)
    assert set(gen["providers"]) <= set(SHARES)
    assert set(gen["shares"]) == set(gen["providers"]) == set(gen["targets"])
    assert sum(gen["targets"].values()) == gen["events"]
    assert isinstance(gen["giants"], int)
    if final and gen["digest"] is not None:
        assert re.fullmatch(r"[0-9a-f]{64}", gen["digest"])
        assert is_number(gen["median_line_bytes"]) and gen["median_line_bytes"] > 0


def assert_budget(verdict: Json, *, final: bool) -> None:
    assert set(verdict) >= {"budget", "measured", "status", "comparison", "unit", "phase"}
    assert is_number(verdict["budget"])
    assert verdict["measured"] is None or is_number(verdict["measured"])
    allowed = {"pass", "miss", "skipped"} | (set() if final else {"pending"})
    assert verdict["status"] in allowed
    assert (verdict["measured"] is None) == (verdict["status"] in ("skipped", "pending"))
    assert verdict["comparison"] in ("<=", ">=")
    assert verdict["phase"] in PHASES


def assert_phase(phase: Json) -> None:
    assert phase["status"] in PHASE_STATUSES
    if phase["status"] == "ok":
        assert isinstance(phase["started_at"], str) and isinstance(phase["finished_at"], str)
        assert is_number(phase["seconds"]) and phase["seconds"] >= 0
        samples = phase["samples_s"]
        assert isinstance(samples, list) and samples, "an ok phase has samples"
        assert all(is_number(s) and s >= 0 for s in samples)
    if phase["status"] in ("skipped", "interrupted"):
        assert isinstance(phase["reason"], str) and phase["reason"]
    if phase["status"] == "error":
        assert isinstance(phase["error"], str) and phase["error"]


# --------------------------------------------------------------------------- smoke run


@pytest.fixture(scope="module")
def smoke(tmp_path_factory: pytest.TempPathFactory) -> tuple[Json, str]:
    """One smoke run (every provider, budgets recorded): its artifact and stdout."""
    tmp = tmp_path_factory.mktemp("bench-smoke")
    out = tmp / "benchmark.json"
    proc = subprocess.run(
        bench(*SMOKE_ARGS, "--out", out, "--dir", tmp / "work", "--ccusage-dir", tmp / "none"),
        cwd=REPO, env=cli_env(AGENTLAKE_CONFIG=str(tmp / "no-config.toml")),
        capture_output=True, text=True, timeout=240, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = read_artifact(out)
    assert doc is not None
    return doc, proc.stdout


def test_smoke_artifact_matches_the_schema(smoke: tuple[Json, str]) -> None:
    doc, _ = smoke
    assert_schema(doc)
    assert doc["outcome"] == "pass" and doc["exit_code"] == 0 and doc["reason"] is None
    assert doc["budgets_enforced"] is False
    for name, phase in doc["phases"].items():
        expected = {"ok", "skipped"} if name in SMOKE_SKIPPED else {"ok"}
        assert phase["status"] in expected, (name, phase)
    skipped = {n for n, v in doc["budgets"].items() if v["status"] == "skipped"}
    assert skipped <= set(SMOKE_SKIPPED.values())
    # Every ratio the goals are set in is recorded beside its goal.
    for name in ("import_floor_ratio", "index_floor_ratio", "import_cores_busy",
                 "provider_rate_spread", "cli_read_p50_s", "cli_help_p50_s",
                 "hybrid_search_p95_s", "search_peak_rss_bytes", "semantic_step_share",
                 "paraphrase_hybrid_recall", "paraphrase_hybrid_gain",
                 "lexical_hybrid_recall_gap"):  # fmt: skip
        assert is_number(doc["budgets"][name]["measured"]), name
        assert doc["budgets"][name]["status"] in ("pass", "miss"), name


def test_smoke_records_the_generator_and_the_corpus(smoke: tuple[Json, str]) -> None:
    doc, _ = smoke
    gen, generate = doc["generator"], doc["phases"]["generate"]
    assert (gen["seed"], gen["events"]) == (3, 3000)
    assert gen["providers"] == list(SMOKE_PROVIDERS)
    assert gen["digest"] == generate["profile"]["digest"]
    assert generate["events"] >= 3000
    profile = generate["profile"]
    assert set(profile["providers"]) == set(SMOKE_PROVIDERS)
    assert profile["median_line_bytes"] == gen["median_line_bytes"]
    assert profile["file_bytes"]["p50"] <= profile["file_bytes"]["p100"]


def test_smoke_import_phases_measure_memory_and_changes(smoke: tuple[Json, str]) -> None:
    phases = smoke[0]["phases"]
    cores = smoke[0]["machine"]["cores_available"]
    for name in IMPORT_PHASES:
        phase = phases[name]
        assert phase["peak_rss_bytes"] > 0 and phase["ru_maxrss_bytes"] > 0, name
        assert phase["rss_samples_bytes"]
        assert max(phase["rss_samples_bytes"]) <= phase["peak_rss_bytes"]
        assert phase["cpu_user_seconds"] > 0 and phase["cpu_system_seconds"] >= 0, name
        cpu = phase["cpu_user_seconds"] + phase["cpu_system_seconds"]
        assert phase["cores_busy"] == pytest.approx(cpu / phase["seconds"])
        assert 0 < phase["cores_busy"] <= cores + 0.05, name
    full = phases["import_full"]
    assert full["records"] > 0
    # At best every core busy for the whole run: never below the rate measured.
    assert full["records_per_s_at_full_cores"] == pytest.approx(
        full["records"] * cores / (full["cpu_user_seconds"] + full["cpu_system_seconds"])
    )
    assert full["records_per_s_at_full_cores"] >= full["records_per_s"] * 0.95
    # The usage-ready import reads the same records; the publish step alone then indexes
    # the events the full import indexed.
    ready, alone = phases["import_usage_ready"], phases["index_alone"]
    assert ready["records"] == full["records"] and ready["events"] == full["events"]
    assert ready["records_per_s"] == pytest.approx(ready["records"] / ready["seconds"])
    assert 0 < alone["indexed"] <= full["events"]
    assert alone["events_per_s"] == pytest.approx(alone["indexed"] / alone["seconds"])
    rerun = phases["rerun_unchanged"]
    assert rerun["records"] == 0 and rerun["sources_opened"] == 0
    assert len(rerun["samples_s"]) == 2 and rerun["seconds"] == max(rerun["samples_s"])
    append = phases["append_1pct"]
    # at least a file of each provider but OpenCode (its database is not appended to)
    assert append["lines_appended"] > 0 and append["files_appended"] >= len(SMOKE_PROVIDERS) - 1
    assert append["records"] == append["lines_appended"]
    assert append["events"] > 0 and append["usage_rows"] > 0
    assert append["ratio"] == pytest.approx(append["seconds"] / phases["import_full"]["seconds"])


def test_smoke_records_the_semantic_step(smoke: tuple[Json, str]) -> None:
    """The full import's receipt: the publish step's semantic part, its events embedded
    and their rate, and its share of the import's wall time (budgeted)."""
    doc, stdout = smoke
    full, alone = doc["phases"]["import_full"], doc["phases"]["index_alone"]
    for phase in (full, alone):
        assert phase["vectors_skipped"] is None
        assert 0 < phase["vectors_embedded"] <= phase["events" if phase is full else "indexed"]
        assert (
            0 < phase["vectors_seconds"] <= phase["index_seconds" if phase is full else "seconds"]
        )
        assert phase["vectors_embedded_per_s"] == pytest.approx(
            phase["vectors_embedded"] / phase["vectors_seconds"]
        )
        assert phase["vectors_share"] == pytest.approx(phase["vectors_seconds"] / phase["seconds"])
    assert alone["vectors_embedded"] == full["vectors_embedded"]
    assert doc["budgets"]["semantic_step_share"]["measured"] == full["vectors_share"]
    assert "semantic step of the full import: " in stdout


def test_smoke_ducklake_phase_sets_the_lake_beside_the_file(smoke: tuple[Json, str]) -> None:
    """The usage-ready import into a DuckLake on PostgreSQL imports what the file's did,
    and its rate and report latency are written beside the file's."""
    doc, stdout = smoke
    lake = doc["phases"]["ducklake"]
    if lake["status"] == "skipped":  # no PostgreSQL here (CI requires it)
        assert os.environ.get("AGENTLAKE_REQUIRE_POSTGRES") != "1"
        return
    assert lake["status"] == "ok" and lake["metadata"] == "postgres"
    # The home as it is after the 1 % append: at least what the file's import read.
    assert lake["import"]["records"] >= doc["phases"]["import_usage_ready"]["records"]
    assert lake["import"]["exit_code"] == 0
    side = lake["lake_vs_file"]
    for name in ("import_records_per_s", "report_daily_p50_s", "report_daily_cli_p50_s"):
        assert side[name]["lake"] > 0 and side[name]["file"] > 0
        assert side[name]["ratio"] == pytest.approx(side[name]["lake"] / side[name]["file"])
    assert "DuckLake on PostgreSQL vs DuckDB file: " in stdout


def test_smoke_imports_each_provider_alone(smoke: tuple[Json, str]) -> None:
    """Records/s per provider, usage-ready, and the fastest over the slowest."""
    doc = smoke[0]
    by = doc["phases"]["import_by_provider"]
    providers = by["providers"]
    assert list(providers) == doc["generator"]["providers"]
    full = doc["phases"]["import_full"]
    assert sum(p["records"] for p in providers.values()) == full["records"]
    assert sum(p["sources_seen"] for p in providers.values()) == full["sources_seen"]
    rates = {name: p["records_per_s"] for name, p in providers.items()}
    assert rates[by["fastest"]] == max(rates.values())
    assert rates[by["slowest"]] == min(rates.values())
    assert by["spread"] == pytest.approx(max(rates.values()) / min(rates.values()))
    assert doc["budgets"]["provider_rate_spread"]["measured"] == by["spread"]


def test_smoke_import_floor_sums_its_pieces_against_the_goal(smoke: tuple[Json, str]) -> None:
    doc, stdout = smoke
    phases = doc["phases"]
    floor, full = phases["import_floor"], phases["import_full"]
    counted = [p for p in floor["pieces"] if p["counted"]]
    assert len(counted) >= 7 and all(p["cpu_s"] >= 0 and p["rows"] >= 0 for p in counted)
    assert floor["cpu_seconds"] == pytest.approx(sum(p["cpu_s"] for p in counted))
    # measured last, on the home and catalog of all three imports
    assert floor["records"] == full["records"] + phases["append_1pct"]["records"]
    goal = next(b.goal for b in BUDGETS if b.name == "usage_ready_records_per_s")
    cores = doc["machine"]["cores_available"]
    assert floor["allowed_cpu_seconds"] == pytest.approx(floor["records"] / goal * cores)
    assert floor["share_of_allowed"] == pytest.approx(
        floor["cpu_seconds"] / floor["allowed_cpu_seconds"]
    )
    import_cpu = full["cpu_user_seconds"] + full["cpu_system_seconds"]
    assert floor["import_cpu_seconds"] == pytest.approx(import_cpu)
    # Each piece is of the usage part, the index part or the vectors part (the publish
    # step's floor is the last two); each ratio is per record.
    assert {p["part"] for p in counted} == {"usage", "index", "vectors"}
    assert floor["usage_cpu_seconds"] + floor["index_cpu_seconds"] == pytest.approx(
        floor["cpu_seconds"]
    )
    assert floor["vectors_cpu_seconds"] == pytest.approx(
        sum(p["cpu_s"] for p in counted if p["part"] == "vectors")
    )
    # The semantic part itself, measured aside on the same catalog, over its floor.
    (step,) = [p for p in floor["pieces"] if p["part"] == "vectors" and not p["counted"]]
    assert floor["vectors_step_cpu_seconds"] == step["cpu_s"] > 0
    assert floor["vectors_floor_ratio"] == pytest.approx(
        step["cpu_s"] / floor["vectors_cpu_seconds"]
    )
    scale = full["records"] / floor["records"]
    assert floor["floor_ratio"] == pytest.approx(import_cpu / (floor["cpu_seconds"] * scale))
    alone = phases["index_alone"]
    alone_cpu = alone["cpu_user_seconds"] + alone["cpu_system_seconds"]
    assert floor["index_floor_ratio"] == pytest.approx(
        alone_cpu / (floor["index_cpu_seconds"] * scale)
    )
    assert doc["budgets"]["import_floor_ratio"]["measured"] == floor["floor_ratio"]
    assert "import floor (parsing, redacting, tokenizing, embedding and writing alone): " in stdout
    assert "publish step's semantic part CPU " in stdout


def test_smoke_query_phases(smoke: tuple[Json, str]) -> None:
    phases = smoke[0]["phases"]
    search = phases["search"]
    assert search["distinct_queries"] >= 30 and len(search["samples_s"]) >= 30
    assert search["queries_with_hits"] > 0
    assert len(search["cli"]["samples_s"]) == 3 and "process start" in search["cli"]["note"]
    assert search["p50_s"] <= search["p95_s"]
    # BM25 alone, then the same queries hybrid on the same connection: the first call
    # (loading the vectors and the model) apart from the timed passes.
    hybrid = search["hybrid"]
    assert (search["mode"], hybrid["mode"]) == ("lexical", "hybrid")
    assert search["cli"]["mode"] == "lexical" and hybrid["cli"]["mode"] == "hybrid"
    assert hybrid["first_query"] == search["queries"][0]
    assert len(hybrid["samples_s"]) == len(search["samples_s"])
    assert hybrid["first_call_s"] > 0 and hybrid["vectors"] > 0
    assert hybrid["queries_with_hits"] >= search["queries_with_hits"]
    assert len(hybrid["cli"]["samples_s"]) == 3 and "process start" in hybrid["cli"]["note"]
    assert smoke[0]["budgets"]["hybrid_search_p95_s"]["measured"] == hybrid["p95_s"]
    # Memory: the library calls' (this process) and the CLI searches'.
    assert 0 < search["library_rss_before_bytes"] <= search["library_peak_rss_bytes"]
    assert search["peak_rss_bytes"] == max(search["library_peak_rss_bytes"],
                                           search["cli"]["peak_rss_bytes"],
                                           hybrid["cli"]["peak_rss_bytes"])  # fmt: skip
    assert len(phases["sessions_listing"]["samples_s"]) >= 10
    kinds = phases["reports"]["kinds"]
    assert {"daily", "weekly", "monthly", "session", "model", "project", "blocks"} <= set(kinds)
    assert all(len(k["samples_s"]) == 3 for k in kinds.values())
    assert len(phases["report_daily_cli"]["samples_s"]) == 3
    dashboard = phases["dashboard"]
    assert len(dashboard["samples_s"]) == 3 and dashboard["calls"] > 0
    assert smoke[0]["budgets"]["dashboard_bytes"]["measured"] == dashboard["bytes"] > 1_000_000
    assert smoke[0]["budgets"]["dashboard_write_s"]["measured"] == dashboard["p50_s"]


def test_smoke_recall_phase(smoke: tuple[Json, str]) -> None:
    """Recall@5 of the evaluation set in each mode, recorded whatever it is."""
    doc, stdout = smoke
    recall = doc["phases"]["recall"]
    assert recall["k"] == 5 and recall["events"] > 0 and recall["embedded"] > 0
    runs = {name: set(modes) for name, modes in recall["recall"].items()}
    assert runs == {
        "paraphrase": {"lexical", "semantic", "hybrid"},
        "lexical": {"lexical", "hybrid"},
    }
    for modes in recall["recall"].values():
        for r in modes.values():
            assert 0 <= r["found"] <= r["total"] and r["recall"] == r["found"] / r["total"]
            assert len(r["missed"]) == r["total"] - r["found"]
    para, exact = recall["recall"]["paraphrase"], recall["recall"]["lexical"]
    assert recall["paraphrase_hybrid"] == para["hybrid"]["recall"]
    assert recall["paraphrase_hybrid_gain"] == pytest.approx(
        para["hybrid"]["recall"] - para["lexical"]["recall"]
    )
    assert recall["lexical_hybrid_gap"] == abs(
        exact["hybrid"]["recall"] - exact["lexical"]["recall"]
    )
    budgets = doc["budgets"]
    assert budgets["paraphrase_hybrid_recall"]["measured"] == recall["paraphrase_hybrid"]
    assert budgets["lexical_hybrid_recall_gap"]["measured"] == recall["lexical_hybrid_gap"]
    assert "recall@5: paraphrase lexical " in stdout


def test_smoke_prints_a_summary_table(smoke: tuple[Json, str]) -> None:
    _, stdout = smoke
    for budget in BUDGETS:
        assert budget.label in stdout
    assert "outcome: pass (budgets recorded, not enforced)" in stdout
    assert "cores busy; every core busy: " in stdout


# --------------------------------------------------------------------------- stop paths


def _processes_mentioning(text: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if text.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def test_sigterm_writes_a_fail_artifact_and_kills_the_child(tmp_path: Path) -> None:
    out, work = tmp_path / "benchmark.json", tmp_path / "work"
    proc = start_bench("--events", "20000", "--record-only", "--out", out, "--dir", work)
    try:
        running = wait_for(out, lambda d: d["phases"]["import_full"]["status"] == "running")
        assert_schema(running, final=False)
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 128 + signal.SIGTERM, stderr[-2000:]
    doc = read_artifact(out)
    assert doc is not None
    assert_schema(doc)
    assert doc["outcome"] == "fail" and doc["exit_code"] == 143
    assert "SIGTERM" in doc["reason"]
    phases = doc["phases"]
    assert phases["generate"]["status"] == "ok"
    assert phases["import_full"]["status"] == "interrupted"
    assert all(phases[name]["status"] == "skipped" for name in PHASES[2:])
    assert _processes_mentioning(str(work)) == [], "the import subprocess outlived the run"


def _failed_run(
    out: Path, work: Path, exit_code: int, *args: str
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    """Run the benchmark expecting ``exit_code``; its process and schema-checked artifact."""
    proc = subprocess.run(
        bench(*args, "--out", out, "--dir", work),
        cwd=REPO, env=cli_env(), capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert proc.returncode == exit_code, proc.stderr[-2000:]
    doc = read_artifact(out)
    assert doc is not None
    assert_schema(doc)
    return proc, doc


def test_max_wall_writes_a_fail_artifact(tmp_path: Path) -> None:
    out = tmp_path / "benchmark.json"
    proc, doc = _failed_run(out, tmp_path / "w", 124, "--events", "20000", "--max-wall", "1.5")
    assert doc["outcome"] == "fail" and "--max-wall" in doc["reason"]
    assert "interrupted" in {p["status"] for p in doc["phases"].values()}
    assert "outcome: fail" in proc.stdout


def test_a_failing_phase_yields_fail_with_its_error(tmp_path: Path) -> None:
    out, work = tmp_path / "benchmark.json", tmp_path / "work"
    (work / "catalog.duckdb").mkdir(parents=True)  # the stale-catalog cleanup cannot unlink it
    _, doc = _failed_run(out, work, 1, "--events", "200")
    assert doc["outcome"] == "fail" and doc["reason"].startswith("phase generate failed")
    assert doc["phases"]["generate"]["status"] == "error"
    assert "catalog.duckdb" in doc["phases"]["generate"]["error"]
    assert all(doc["phases"][name]["status"] == "skipped" for name in PHASES[1:])
    assert all(v["status"] == "skipped" for v in doc["budgets"].values())


def test_lines_is_a_deprecated_alias_of_events() -> None:
    from benchmarks.__main__ import parser, settings_from

    args = parser().parse_args(["--lines", "1234", "--providers", "codex,claude-code"])
    settings = settings_from(args, [])
    assert settings.events == 1234
    assert settings.providers == ("claude", "codex")


# --------------------------------------------------------------------------- corpus


def test_the_corpus_is_deterministic_for_a_seed(tmp_path: Path) -> None:
    plan = plan_corpus(3000, seed=11)
    digests = []
    for name in ("a", "b"):
        generate_corpus(tmp_path / name, plan)
        digests.append(profile_corpus(tmp_path / name).digest)
    assert digests[0] == digests[1]
    generate_corpus(tmp_path / "c", plan_corpus(3000, seed=12))
    assert profile_corpus(tmp_path / "c").digest != digests[0]


def test_the_corpus_has_the_planned_provider_mix(tmp_path: Path) -> None:
    plan = plan_corpus(6000, seed=5)
    written = generate_corpus(tmp_path, plan)
    profile = profile_corpus(tmp_path)
    # OpenCode's records are database rows (and legacy JSON files), not JSONL lines
    total = profile.lines + written["opencode"].lines
    assert 6000 <= total <= 6000 * 1.10
    for provider, share in SHARES.items():
        if provider != "opencode":
            assert profile.providers[provider].lines == written[provider].lines
        assert written[provider].lines / total == pytest.approx(share, abs=0.02)
    assert profile.files_over_100mib == 0 and plan.giants == 0


def test_extracting_alone_reads_the_records_an_import_reads(tmp_path: Path) -> None:
    from agentlake.extract.extract import ExtractLimits
    from agentlake.ingest.run import ImportOptions, run_import

    home = tmp_path / "home"
    generate_corpus(home, plan_corpus(3000, seed=3))
    figures = extract_home(home, ExtractLimits(batch_lines=500), build=True)
    assert set(figures) == set(PROVIDER_IDS.values())
    result = run_import(
        ImportOptions(catalog=tmp_path / "c.duckdb", workspace="w", home=home, env={})
    )
    by_provider: dict[str, int] = {}
    for outcome in result.sources:
        provider = outcome.planned.provider
        by_provider[provider] = by_provider.get(provider, 0) + outcome.records
    assert {p: c["records"] for p, c in figures.items()} == by_provider
    assert sum(c["sources"] for c in figures.values()) == len(result.sources)


def test_commits_kept_and_written_apart_make_the_catalog_an_import_makes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """benchmarks.commits times the two sides of an import apart: the commits it keeps
    and then writes give the rows, index and checkpoints an import gives."""
    from agentlake.ingest.run import ImportOptions, run_import
    from benchmarks.commits import produce, write
    from tests.pipeline.helpers import snapshot

    home = tmp_path / "home"
    generate_corpus(home, plan_corpus(3000, seed=3))
    produced = produce(home, tmp_path / "scratch.duckdb", "1GiB")
    assert produced.commits and any(c.data for c in produced.commits)
    write(produced.commits, tmp_path / "apart.duckdb", "1GiB", top=3)
    assert "loader:" in capsys.readouterr().out
    run_import(ImportOptions(catalog=tmp_path / "import.duckdb", workspace="default",
                             home=home, env={}))  # fmt: skip
    tables = ("events", "usage", "sessions", "sources", "search_postings", "search_terms")
    assert snapshot(tmp_path / "apart.duckdb", tables) == snapshot(
        tmp_path / "import.duckdb", tables
    )


def test_the_floor_does_the_work_of_the_import_it_is_measured_against(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """benchmarks.floors parses every line, tokenizes every event into the import's
    postings, embeds every event the import embeds, and writes every event, posting and
    vector: its CPU is a floor under the import's because it does at least those parts
    of the same work."""
    import duckdb

    from agentlake.ingest.run import ImportOptions, run_import
    from benchmarks.floors import measure

    home = tmp_path / "home"
    generate_corpus(home, plan_corpus(3000, seed=3))
    catalog = tmp_path / "c.duckdb"
    result = run_import(ImportOptions(catalog=catalog, workspace="default", home=home, env={}))
    floors = measure(home, catalog, tmp_path)
    rows = {piece.name.split(",")[0].split(" (")[0]: piece.rows for piece in floors.pieces}
    with duckdb.connect(str(catalog), read_only=True) as con:
        counts = [
            con.execute(f"SELECT count(*) FROM {table}").fetchone()
            for table in ("events", "search_postings", "search_vectors")
        ]
    events, postings, vectors = (int(row[0]) for row in counts if row)
    lines = sum(
        len([line for line in path.read_bytes().splitlines() if line])
        for path in home.rglob("*.jsonl")
    )
    assert rows["parse: Claude Code lines"] + rows["parse: other JSONL lines"] == lines
    assert rows["tokenize: the import's tokenizer"] == postings > 0
    assert rows["redact: the text and tool inputs"] == rows["write: events"] == events
    assert rows["write: search_postings"] == postings
    assert rows["embed: the model's tokenize and pool"] == rows["write: search_vectors"]
    assert rows["write: search_vectors"] == vectors > 0
    assert rows["semantic step: publish_vectors on the catalog"] == vectors
    assert floors.records == result.totals()["records"]
    assert 0 < floors.cpu < sum(piece.cpu for piece in floors.pieces)  # the aside not counted
    assert [piece.name for piece in floors.pieces if not piece.counted] == [
        "tokenize: the words found, nothing more",
        "semantic step: publish_vectors on the catalog",
    ]
    assert "write: search_postings indexed, checkpointed" in capsys.readouterr().out
    assert list(tmp_path.glob("floors-*")) == []  # the fresh catalog removed


def test_recall_counts_a_query_only_when_its_target_is_among_the_hits(tmp_path: Path) -> None:
    """benchmarks.recall (the recall phase's scoring): a hit is the target's prompt or
    reply event in the target's session, nothing else. Searched by words, every
    exact-word query finds its target and no paraphrase does (a paraphrase shares no
    content word with its target's prompt or reply)."""
    import duckdb

    from agentlake.ingest.run import ImportOptions, run_import
    from agentlake.read.search import search
    from benchmarks.recall import finds_target, recall_at_k
    from tests.read.semantic_eval_set import LEXICAL, PARAPHRASES, EvalEvent, write_eval_home

    placed = write_eval_home(tmp_path / "home")
    catalog = tmp_path / "eval.duckdb"
    result = run_import(ImportOptions(catalog=catalog, workspace="default",
                                      home=tmp_path / "home", env={}))  # fmt: skip
    assert result.exit_code == 0
    with duckdb.connect(str(catalog), read_only=True) as con:
        query = LEXICAL[0]
        target = placed[query.target]
        hits = search(con, "default", query.text, limit=5, mode="lexical")
        assert finds_target(con, hits, target)
        assert not finds_target(con, hits, target._replace(session_id="another-session"))
        assert not finds_target(con, hits, EvalEvent(target.session_id, "not it", "nor this"))
        assert not finds_target(con, [], target)
        exact = recall_at_k(con, LEXICAL, placed, "lexical")
        assert (exact.found, exact.total, exact.missed) == (len(LEXICAL), len(LEXICAL), ())
        assert exact.recall == 1.0
        para = recall_at_k(con, PARAPHRASES, placed, "lexical")
        assert (para.found, para.recall, len(para.missed)) == (0, 0.0, len(PARAPHRASES))


def test_the_plan_splits_the_events() -> None:
    plan = plan_corpus(1_000_000, seed=1)
    assert plan.targets == {
        "claude": 470_000,
        "codex": 210_000,
        "gemini": 100_000,
        "cursor": 70_000,
        "copilot": 60_000,
        "opencode": 50_000,
        "factory": 40_000,
    }
    assert plan.giants == 3
    assert plan_corpus(499_999, seed=1).giants == 0
    assert plan_corpus(500_000, seed=1).giants >= 2
    assert plan_corpus(1_000_000, seed=1, providers=("codex",)).giants == 0
    pair = plan_corpus(1001, seed=1, providers=("gemini", "codex"))
    assert pair.providers == ("codex", "gemini") and sum(pair.targets.values()) == 1001
    assert pair.targets["codex"] == pytest.approx(1001 * 0.21 / 0.31, abs=1)
    assert plan_corpus(100, seed=1).seeds == plan_corpus(100, seed=1).seeds
    assert parse_providers("claude-code,gemini-cli") == ("claude", "gemini")
    with pytest.raises(ValueError, match="unknown provider"):
        parse_providers("claude,windsurf")


def test_append_adds_new_records_to_existing_transcripts(tmp_path: Path) -> None:
    home = tmp_path / "home"
    plan = plan_corpus(4000, seed=2)
    written = generate_corpus(home, plan)
    before = {p: p.read_bytes() for p in home.rglob("*.jsonl")}
    stats = append_new_records(
        home, tmp_path / "donors", plan, {p: s.lines for p, s in written.items()}
    )
    # every provider with transcripts; OpenCode's database is not appended to
    assert set(stats.providers) == set(PROVIDERS) - {"opencode"}
    assert all(v["lines"] >= v["target"] for v in stats.providers.values())
    old_lines = {line for data in before.values() for line in data.splitlines()}
    grown = 0
    for path, data in before.items():
        now = path.read_bytes()
        assert now.startswith(data), f"{path} was rewritten, not appended to"
        if len(now) == len(data):
            continue
        grown += 1
        added = set(now[len(data) :].splitlines())
        if ".claude" in path.parts:  # metadata lines (last-prompt, titles) may coincide
            added = {line for line in added if b'"uuid":' in line}
        if ".cursor" not in path.parts:  # Cursor lines carry no ids: identity is the position
            assert added and not added & old_lines, f"{path}: appended lines repeat old ones"
        if ".claude" in path.parts:
            sessions = set(re.findall(rb'"sessionId":"([^"]+)"', now[len(data) :]))
            assert sessions == {path.stem.encode()}
    assert grown == stats.files
    assert not (tmp_path / "donors").exists()


# --------------------------------------------------------------------------- helpers


def test_percentile_interpolates_between_ranks() -> None:
    samples = [float(n) for n in range(100, 0, -1)]  # unsorted on purpose
    assert percentile(samples, 50) == pytest.approx(50.5)
    assert percentile(samples, 95) == pytest.approx(95.05)
    assert percentile(samples, 0) == 1.0 and percentile(samples, 100) == 100.0
    assert percentile([7.0], 95) == 7.0
    assert percentile([1.0, 2.0], 50) == 1.5
    with pytest.raises(ValueError):
        percentile([], 50)
    with pytest.raises(ValueError):
        percentile([1.0], 101)


def test_budget_checks() -> None:
    by_name = {b.name: b for b in BUDGETS}
    assert {b.name for b in BUDGETS} == BUDGET_NAMES
    search, rate = by_name["search_p95_s"], by_name["usage_ready_records_per_s"]
    assert check(search, 0.025)["status"] == "pass"
    assert check(search, 0.026)["status"] == "miss"
    assert check(search, None)["status"] == "skipped"
    assert check(rate, 100_000)["status"] == "pass"
    assert check(rate, 99_999)["status"] == "miss"
    verdict = check(rate, 123_456.0, note="why")
    assert verdict["budget"] == 100_000 and verdict["measured"] == 123_456.0
    assert verdict["comparison"] == ">=" and verdict["note"] == "why"
    running = check_all({"search_p95_s": 0.5}, final=False)
    assert running["search_p95_s"]["status"] == "miss"
    assert running["report_daily_s"]["status"] == "pending"
    final = check_all({"search_p95_s": 0.5, "report_daily_s": 0.01}, final=True)
    assert final["report_daily_s"]["status"] == "pass"
    assert final["daily_vs_ccusage_ratio"]["status"] == "skipped"
    assert missed(final) == ["search_p95_s"]


def test_statement_timing_counts_every_statement_of_an_import(tmp_path: Path) -> None:
    from agentlake.ingest.run import ImportOptions, run_import
    from agentlake.load import load
    from agentlake.load.terms import BatchTokenizer
    from benchmarks.statements import timed_statements
    from fixtures.synth import generate_claude_home

    home = tmp_path / "home"
    generate_claude_home(home, sessions=2, turns_per_session=3)
    original = load.CatalogWriter.__init__
    committing, tokenizing = load.CatalogWriter.commit, BatchTokenizer.terms
    with timed_statements() as times:
        result = run_import(
            ImportOptions(catalog=tmp_path / "c.duckdb", workspace="default", home=home, env={})
        )
    assert result.exit_code == 0
    assert times.calls["COMMIT"] >= 2  # the receipt and at least one batch
    assert any(key.startswith("INSERT INTO search_postings") for key in times.calls)
    assert 0 < times.total == sum(times.seconds.values())
    # the loader's commits, and the CPU of its thread and of the publish step's
    assert times.committing > 0
    assert set(times.cpu) == {"loader", "publish"} and all(t > 0 for t in times.cpu.values())
    assert load.CatalogWriter.__init__ is original  # restored
    assert load.CatalogWriter.commit is committing and BatchTokenizer.terms is tokenizing


def test_a_stop_while_the_child_starts_still_kills_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """A signal can land inside ``subprocess.Popen``, after the fork: the stop is held
    back until the child is registered, then raised, and the child is killed."""
    from benchmarks import measure

    marker = f"agentlake-start-race-{os.getpid()}"
    real_popen = subprocess.Popen

    def popen_then_signal(*args: Any, **kwargs: Any) -> Any:
        child = real_popen(*args, **kwargs)
        measure.interrupt(KeyboardInterrupt())  # what the signal handler does
        return child

    monkeypatch.setattr(subprocess, "Popen", popen_then_signal)
    with pytest.raises(KeyboardInterrupt):
        measure.run_child([sys.executable, "-c", "import time; time.sleep(60)", marker])
    assert _processes_mentioning(marker) == []


def test_a_child_leaves_no_process_of_its_group_behind() -> None:
    """What the child started in its process group is ended with it."""
    from benchmarks import measure

    marker = f"agentlake-group-{os.getpid()}"
    spawn = (
        "import subprocess, sys; "
        f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)', {marker!r}])"
    )
    run = measure.run_child([sys.executable, "-c", spawn])
    assert run.returncode == 0
    assert _processes_mentioning(marker) == []
