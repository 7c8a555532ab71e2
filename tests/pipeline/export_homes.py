"""The catalog the export tests share: a home of every agent with a generator
(several providers, subagents, per-session usage rows, tool calls) imported once, with
one session tree hidden."""

from __future__ import annotations

from pathlib import Path

from agentlake.ingest.run import ImportOptions, run_import
from agentlake.load.lake import LakeCatalog
from agentlake.manage.authz import authorize
from agentlake.manage.lifecycle import change_lifecycle
from fixtures.synth import ALL_PROVIDERS, generate_demo_home
from tests.lakes import read_connection


def write_home(home: Path) -> Path:
    """``home`` filled with every generator's agent files, one Claude Code transcript
    ending in a line that is not JSON (a reject)."""
    generate_demo_home(home, providers=ALL_PROVIDERS)
    first = min((home / ".claude" / "projects").rglob("*.jsonl"))
    with first.open("ab") as out:
        out.write(b"{not json\n")
    return home


def build_catalog(home: Path, catalog: Path | LakeCatalog) -> str:
    """Import ``home`` into ``catalog`` and hide the parent session of a Claude Code
    subagent (with its subtree); the hidden session's id."""
    result = run_import(ImportOptions(catalog=catalog, workspace="default", home=home, env={}))
    assert result.exit_code == 0
    con = read_connection(catalog)
    try:
        row = con.execute(
            "SELECT parent_session_id FROM sessions WHERE parent_session_id IS NOT NULL "
            "AND provider = 'claude-code' ORDER BY session_id LIMIT 1"
        ).fetchone()
    finally:
        con.close()
    assert row is not None
    change_lifecycle(catalog, authorize("default", "hide"), str(row[0]))
    return str(row[0])
