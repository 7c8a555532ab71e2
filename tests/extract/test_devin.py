"""Devin Desktop (Windsurf) Cascade hook transcripts: discovered under
``~/.windsurf/transcripts`` and named as ``devin-desktop-cascade-hook-jsonl`` exports."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from agentlake.extract.providers import devin_desktop, resolve
from agentlake.ingest.files import NamedFile, export_format, guess_format
from agentlake.ingest.run import ImportOptions, ImportResult, run_import
from tests.conftest import CONFORMANCE, FIXTURES
from tests.extract.catalogs import catalog_rows

HOME = FIXTURES / "devin-desktop" / "contract_all_record_types"
TRAJ_A = HOME / ".windsurf" / "transcripts" / "traj-0a1b2c.jsonl"
AIWG = CONFORMANCE / "jmagly__ai-writing-guide" / "test" / "fixtures" / "sessions" / "windsurf"
NOWHERE = Path("/nonexistent")


def _import(catalog: Path, home: Path, *files: NamedFile) -> ImportResult:
    options: dict[str, Any] = {"files": files} if files else {"providers": ("devin-desktop",)}
    return run_import(ImportOptions(catalog=catalog, workspace="default", home=home, env={},
                                    build_index=False, **options))  # fmt: skip


_rows = catalog_rows


@pytest.mark.parametrize(
    ("rel", "owned"),
    [
        (("traj-1.jsonl",), True),
        (("sub", "traj-1.jsonl"), False),
        ((".traj-1.jsonl",), False),
        (("traj-1.json",), False),
        (("traj-1.jsonl.tmp",), False),
    ],
)
def test_owns_transcripts_directly_in_the_folder(rel: tuple[str, ...], owned: bool) -> None:
    assert devin_desktop.owns(rel) is owned


def test_windsurf_is_an_alias() -> None:
    assert resolve("windsurf").id == "devin-desktop"


def test_every_step_maps(tmp_path: Path) -> None:
    catalog = tmp_path / "c.duckdb"
    assert _import(catalog, HOME).exit_code == 0
    rows = _rows(catalog, "SELECT native_id, kind, role, model, text, tool_name, "
                          "CAST(tool_input AS VARCHAR), is_error FROM events "
                          "WHERE session_id = 'traj-0a1b2c' ORDER BY seq")  # fmt: skip
    assert [r[:3] for r in rows] == [
        ("ev-1", "prompt", "user"), ("ev-1", "system", "system"), ("ev-2", "response", "assistant"),
        ("ev-3", "tool_call", "assistant"), ("ev-4", "tool_call", "assistant"),
        ("ev-4", "tool_result", "tool"), ("ev-5", "response", "assistant"),
    ]  # fmt: skip
    assert rows[0][4] == "create hello.py"
    assert rows[1][4] == "rules applied\nalways_on: style.md\nglob: py.md"
    assert rows[2][3:5] == ("Claude Sonnet 4", "Creating the file.")
    assert rows[3][5] == "code_action"
    assert json.loads(rows[3][6]) == {
        "path": "/home/dev/hello/hello.py",
        "new_content": "print('hi')\n",
    }
    assert rows[4][5] == "run_command" and rows[4][7] is True
    assert rows[5][4:] == ("Traceback: boom", "run_command", None, True)
    other = _rows(catalog, "SELECT native_id, kind FROM events WHERE session_id = 'traj-3d4e5f' "
                           "ORDER BY seq")  # fmt: skip
    assert [k for _, k in other] == ["prompt", "response"]
    assert other[0][0].startswith("exec-7:")  # no event_id: execution id and offset
    models = dict(_rows(catalog, "SELECT session_id, model FROM sessions"))
    assert models == {"traj-0a1b2c": "Claude Sonnet 4", "traj-3d4e5f": "GPT-4.1"}
    assert _rows(catalog, "SELECT count(*) FROM usage") == [(0,)]
    rejects = _rows(catalog, 'SELECT reason FROM rejects ORDER BY "offset"')
    assert rejects == [("UNKNOWN_RECORD",), ("INVALID_RECORD",)]


def test_the_export_format_and_its_legacy_name(tmp_path: Path) -> None:
    copy = tmp_path / "exported.jsonl"
    shutil.copy(TRAJ_A, copy)
    assert guess_format(copy)[1].name == devin_desktop.EXPORT_FORMAT
    assert export_format(devin_desktop.LEGACY_EXPORT_FORMAT)[1].name == devin_desktop.EXPORT_FORMAT
    catalog = tmp_path / "c.duckdb"
    assert _import(catalog, HOME).exit_code == 0
    before = _rows(catalog, "SELECT count(*) FROM events")
    result = _import(catalog, NOWHERE, NamedFile(copy, devin_desktop.LEGACY_EXPORT_FORMAT))
    assert result.exit_code == 0
    # the same trajectory discovered and exported is one session with one copy of each event
    assert _rows(catalog, "SELECT count(*) FROM events") == before
    assert _rows(catalog, "SELECT count(*) FROM sessions") == [(2,)]


def test_one_trajectory_per_file(tmp_path: Path) -> None:
    path = tmp_path / "two.jsonl"
    steps = [{"type": "user_input", "status": "done", "trajectory_id": t,
              "user_input": {"user_response": t}} for t in ("t1", "t2")]  # fmt: skip
    path.write_text("".join(json.dumps(s) + "\n" for s in steps))
    catalog = tmp_path / "c.duckdb"
    assert _import(catalog, NOWHERE, NamedFile(path)).exit_code == 0
    assert _rows(catalog, "SELECT session_id, text FROM events") == [("t1", "t1")]
    assert _rows(catalog, "SELECT reason FROM rejects") == [("INVALID_RECORD",)]


@pytest.mark.skipif(not AIWG.is_dir(), reason="the shared conformance corpus is absent")
def test_the_hook_fixtures_of_the_ingestion_project(tmp_path: Path) -> None:
    """``current``: every step mapped, the unknown ``future_field`` ignored; ``mixed``
    (1.0.0 and 1.1.0): one major, imported (AIWG refuses mixed minors; agentlake only
    refuses another major); ``malformed``: a step without ``type`` rejected;
    ``unknown-major``: refused as drift."""
    work = tmp_path / "aiwg"
    shutil.copytree(AIWG, work)
    cases = {p.name: p for p in work.iterdir()}
    catalog = tmp_path / "current.duckdb"
    assert _import(catalog, NOWHERE, NamedFile(cases["current.jsonl"])).exit_code == 0
    kinds = _rows(catalog, "SELECT kind FROM events ORDER BY seq")
    assert kinds == [("prompt",), ("system",), ("response",), ("tool_call",)]
    assert _rows(catalog, "SELECT session_id, model FROM sessions") == [
        ("trajectory-1920", "Claude Sonnet 4")
    ]
    catalog = tmp_path / "mixed.duckdb"
    assert _import(catalog, NOWHERE, NamedFile(cases["mixed.jsonl"])).exit_code == 0
    assert _rows(catalog, "SELECT count(*) FROM events") == [(2,)]
    catalog = tmp_path / "malformed.duckdb"
    fmt = devin_desktop.EXPORT_FORMAT
    assert _import(catalog, NOWHERE, NamedFile(cases["malformed.jsonl"], fmt)).exit_code == 0
    assert _rows(catalog, "SELECT reason FROM rejects") == [("INVALID_RECORD",)]
    result = _import(tmp_path / "major.duckdb", NOWHERE, NamedFile(cases["unknown-major.jsonl"]))
    assert [s.code for s in result.refused] == ["SCHEMA_DRIFT"]
