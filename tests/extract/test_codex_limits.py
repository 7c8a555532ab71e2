"""Codex rate-limit snapshots: every shape of ``rate_limits`` Codex wrote becomes one row
per window with an absolute UTC reset; the rows are idempotent across re-imports,
archived copies and resumed appends, and a re-read source drops its old ones first."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import orjson
import pytest

from agentlake.extract.extract import extract_source
from agentlake.extract.providers import by_id
from agentlake.extract.rows import RawTables
from agentlake.extract.sources import SourceFile, walk_root
from agentlake.ingest.run import ImportOptions, run_import
from agentlake.transform.limits import normalize_rate_limits
from tests.conftest import CONFORMANCE

SPEC = by_id("codex")
SID = "019e0000-0000-7000-8000-0000000000bb"
FORK = "019e0000-0000-7000-8000-0000000000cc"
T = "2026-05-01T09:00:{:02d}.000Z"
Json = dict[str, Any]


def _meta(sid: str = SID, **extra: Any) -> Json:
    payload = {"id": sid, "timestamp": T.format(0), "cwd": "/home/dev/demo",
               "cli_version": "0.130.0", **extra}  # fmt: skip
    return {"timestamp": T.format(0), "type": "session_meta", "payload": payload}


def _token_count(second: int, limits: Any, info: Any = None) -> Json:
    payload = {"type": "token_count", "info": info, "rate_limits": limits}
    return {"timestamp": T.format(second), "type": "event_msg", "payload": payload}


def _usage(total: int) -> Json:
    counts = {"input_tokens": total, "cached_input_tokens": 0, "output_tokens": 10,
              "reasoning_output_tokens": 0, "total_tokens": total + 10}  # fmt: skip
    return {"total_token_usage": counts, "last_token_usage": counts}


NESTED = {"limit_id": "codex", "plan_type": "pro",
          "primary": {"used_percent": 41.5, "window_minutes": 10080, "resets_at": 1778000000},
          "secondary": None, "credits": {"has_credits": False}}  # fmt: skip
OLDER = {"primary": {"used_percent": 12, "window_minutes": 300, "resets_in_seconds": 3600},
         "secondary": {"used_percent": 3.0, "window_minutes": 10080, "resets_in_seconds": 86400}}  # fmt: skip
FLAT = {"primary_used_percent": 20.0, "secondary_used_percent": 55.0,
        "primary_to_secondary_ratio_percent": 36.0, "primary_window_minutes": 300,
        "secondary_window_minutes": 10080, "primary_reset_after_seconds": 600}  # fmt: skip


def _rollout(home: Path, records: list[Json], sid: str = SID) -> Path:
    """Append ``records`` to the session's rollout under ``home`` (creating it)."""
    path = home / ".codex" / "sessions" / "2026" / "05" / "01"
    path = path / f"rollout-2026-05-01T09-00-00-{sid}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("ab") as fh:
        fh.write(b"".join(orjson.dumps(r) + b"\n" for r in records))
    return path


def _extract(tmp: Path, records: list[Json], sid: str = SID) -> tuple[list[str], RawTables]:
    """The outcomes and raw rows of ``records`` written as one rollout and extracted."""
    path = _rollout(tmp / "home", records, sid)
    source = next(s for s in _sources(tmp / "home") if s.path == path)
    outcomes: list[str] = []
    tables: list[RawTables] = []
    for batch in extract_source(SPEC, source, start=0, stop=source.size):
        outcomes += [o for o, n in sorted(batch.outcomes.items()) for _ in range(n)]
        tables.append(batch.tables)
    return outcomes, RawTables.concat(tables)


def _map(tmp: Path, records: list[Json], sid: str = SID) -> list[Json]:
    """The normalized rate-limit rows of ``records`` written as one rollout."""
    raw = _extract(tmp, records, sid)[1]
    rows: list[Json] = normalize_rate_limits(raw.rate_limits, "codex", "src").to_pylist()
    return rows


def _sources(home: Path) -> list[SourceFile]:
    out: list[SourceFile] = []
    for root in SPEC.roots(home, {}):
        out += [s for s in walk_root(root, SPEC.formats) if isinstance(s, SourceFile)]
    return out


def _utc(seconds: int) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


def test_every_shape_gives_one_row_per_window_with_an_absolute_reset(tmp_path: Path) -> None:
    reset_at = {"primary": {"used_percent": 85, "window_minutes": 300, "reset_at": 1777640000}}
    rows = _map(tmp_path, [
        _meta(),
        _token_count(1, NESTED, info=_usage(100)),  # newest: limit id, plan, weekly in primary
        _token_count(2, OLDER),  # countdowns, on a token count without a call
        _token_count(3, FLAT),  # the flat fields of the first builds
        {"timestamp": T.format(4), "type": "event_msg",
         "payload": {"type": "account/rateLimits/updated", "rate_limits": reset_at}},
    ])  # fmt: skip
    at = datetime(2026, 5, 1, 9, tzinfo=UTC).timestamp()
    got = [(r["ts"].timestamp() - at, r["window_kind"], r["used_percent"], r["window_minutes"],
            r["resets_at"], r["limit_id"], r["plan_type"]) for r in rows]  # fmt: skip
    assert got == [
        (1, "primary", 41.5, 10080, _utc(1778000000), "codex", "pro"),
        (2, "primary", 12.0, 300, _utc(int(at) + 2 + 3600), None, None),
        (2, "secondary", 3.0, 10080, _utc(int(at) + 2 + 86400), None, None),
        (3, "primary", 20.0, 300, _utc(int(at) + 3 + 600), None, None),
        (3, "secondary", 55.0, 10080, None, None, None),
        (4, "primary", 85.0, 300, _utc(1777640000), None, None),
    ]
    assert len({r["source_offset"] for r in rows}) == 4  # the lines that carried them


def test_what_is_no_snapshot_imports_nothing(tmp_path: Path) -> None:
    rows = _map(tmp_path, [
        _meta(),
        _token_count(1, None),  # rate_limits: null
        _token_count(2, "87%"),  # not an object
        _token_count(3, {"primary": {"window_minutes": 300}}),  # no used percentage
        _token_count(4, {"primary": {"used_percent": 5, "window_minutes": 0}}),  # length 0
        {"timestamp": "[trimmed]", "type": "event_msg",
         "payload": {"type": "token_count", "info": None, "rate_limits": OLDER}},  # no time
    ])  # fmt: skip
    assert [(r["used_percent"], r["window_minutes"], r["resets_at"]) for r in rows] == [
        (5.0, None, None)
    ]


def test_a_re_emitted_token_count_is_one_snapshot_and_its_call_counts_once(
    tmp_path: Path,
) -> None:
    line = _token_count(1, OLDER, info=_usage(100))
    outcomes, raw = _extract(tmp_path, [_meta(), line, line])
    assert outcomes == ["mapped", "mapped", "mapped"]  # the re-emit still carries limits
    assert raw.usage.num_rows == 1
    assert normalize_rate_limits(raw.rate_limits, "codex").num_rows == 2


def test_a_forks_replayed_parent_snapshots_are_not_its_own(tmp_path: Path) -> None:
    fork = _meta(FORK, forked_from_id=SID)
    replayed = _token_count(0, NESTED, info=_usage(100))  # stamped with the fork's second
    own = _token_count(5, OLDER, info=_usage(300))
    rows = _map(tmp_path, [fork, _meta(), replayed, own], FORK)
    assert [(r["session_id"], r["window_minutes"]) for r in rows] == [(FORK, 300), (FORK, 10080)]


# -- through the catalog -----------------------------------------------------------------


def _import(home: Path, catalog: Path, **options: Any) -> int:
    result = run_import(
        ImportOptions(catalog=catalog, workspace="default", home=home, env={},
                      providers=("codex",), build_index=False, **options)
    )  # fmt: skip
    return result.exit_code


def _limits(catalog: Path) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(catalog), read_only=True)
    try:
        return con.execute(
            "SELECT session_id, strftime(timezone('UTC', ts), '%H:%M:%S'), window_kind, "
            "used_percent, source_offset FROM rate_limits ORDER BY ALL"
        ).fetchall()
    finally:
        con.close()


def test_snapshots_are_idempotent_across_runs_copies_appends_and_re_reads(tmp_path: Path) -> None:
    home, catalog = tmp_path / "home", tmp_path / "c.duckdb"
    path = _rollout(home, [_meta(), _token_count(1, OLDER, info=_usage(100))])
    assert _import(home, catalog) == 0
    first = _limits(catalog)
    assert [r[2] for r in first] == ["primary", "secondary"]
    assert _import(home, catalog) == 0 and _limits(catalog) == first  # nothing new
    # an archived copy of the same rollout adds no snapshot
    (home / ".codex" / "archived_sessions").mkdir()
    shutil.copy(path, home / ".codex" / "archived_sessions" / path.name)
    assert _import(home, catalog) == 0 and _limits(catalog) == first
    # an append is read from the checkpoint: only its snapshot is new
    _rollout(home, [_token_count(9, NESTED, info=_usage(300))])
    assert _import(home, catalog) == 0
    assert len(_limits(catalog)) == 3 and _limits(catalog)[:2] == first
    # a source re-read from byte 0 (a drifted checkpoint restarted) replaces its rows
    con = duckdb.connect(str(catalog))
    con.execute("UPDATE sources SET adapter_version = '0.1'")
    con.close()
    assert _import(home, catalog) == 1  # refused as drift
    assert _import(home, catalog, restart_drifted=True) == 0
    assert len(_limits(catalog)) == 3


ROLLOUTS = CONFORMANCE / "jazzyalex__agent-sessions" / "Resources" / "Fixtures"


@pytest.mark.skipif(not ROLLOUTS.is_dir(), reason="conformance data not present")
def test_conformance_rollouts_with_rate_limits(tmp_path: Path) -> None:
    home, catalog = tmp_path / "home", tmp_path / "c.duckdb"
    day = home / ".codex" / "sessions" / "2026" / "01" / "01"
    day.mkdir(parents=True)
    for n, rel in enumerate(("codex_053_rate_limit.jsonl", "stage0/agents/codex/small.jsonl",
                             "stage0/agents/codex/large.jsonl")):  # fmt: skip
        target = day / f"rollout-2026-01-01T00-00-0{n}-{n:08d}-0000-7000-8000-000000000000.jsonl"
        target.write_bytes((ROLLOUTS / rel).read_bytes())
    assert _import(home, catalog) == 0
    con = duckdb.connect(str(catalog), read_only=True)
    try:
        rows = con.execute(
            "SELECT session_id, window_kind, used_percent, window_minutes, "
            "epoch(resets_at)::BIGINT, limit_id, plan_type FROM rate_limits ORDER BY ALL"
        ).fetchall()
    finally:
        con.close()
    ratelimit = [r[1:5] for r in rows if r[0] == "test-ratelimit-session"]
    assert ratelimit == [  # resets_at (token_count) and reset_at (account/rateLimits/updated)
        ("primary", 0.0, 300, 1761950218), ("primary", 1.0, 300, 1761950223),
        ("primary", 85.0, 300, 1730393112), ("secondary", 7.0, 10080, 1762458353),
        ("secondary", 7.0, 10080, 1762458353), ("secondary", 12.0, 10080, 1730900712),
    ]  # fmt: skip
    # the newest shape: a limit id and a plan, the weekly window in the primary slot; the
    # lines whose timestamp was trimmed away cannot be placed in time and are left out
    assert ("019fc8be-3658-7ca3-9e29-000000000000", "primary", 1.0, 10080, 1785958530,
            "codex", "pro") in rows  # fmt: skip
    assert not any(r[0] == "019fc8be-3658-7ca3-9e29-000000000000" and r[4] is None for r in rows)
