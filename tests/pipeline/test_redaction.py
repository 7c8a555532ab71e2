"""Canary credentials planted in prompts, tool inputs and tool outputs appear nowhere in
the catalog — not in any column, and not in the raw bytes of the DuckDB file."""

from __future__ import annotations

from pathlib import Path

import duckdb

from agentlake.extract.extract import ExtractLimits
from fixtures.synth import generate_claude_home
from tests.conftest import CliRunner
from tests.pipeline.helpers import import_with, snapshot

# Synthetic, well-formed credentials (never real ones).
CANARIES = (
    "sk-ant-api03-CANARYa1b2c3d4e5f6g7h8i9j0",
    "AKIACANARY1234567890",
    "ghp_CANARYabcdefghijklmnopqrstuvwxyz0123",
    "xoxb-CANARY-1234567890-abcdefghij",
)


def test_canaries_never_reach_the_catalog(cli: CliRunner, tmp_path: Path) -> None:
    home = tmp_path / "home"
    generate_claude_home(home, sessions=4, canaries=CANARIES)
    raw = b"".join(p.read_bytes() for p in home.rglob("*.jsonl"))
    for canary in CANARIES:
        assert raw.count(canary.encode()) >= 3, (
            "the generator plants each canary in prompt, tool input and output"
        )
    catalog = tmp_path / "c.duckdb"
    proc = cli("import", "--home", home, "--catalog", catalog)
    assert proc.returncode == 0, proc.stderr

    con = duckdb.connect(str(catalog))
    redacted = con.execute(
        "SELECT count(*) FROM events WHERE text LIKE '%[REDACTED:%' OR "
        "CAST(tool_input AS VARCHAR) LIKE '%[REDACTED:%'"
    ).fetchone()
    assert redacted is not None and redacted[0] >= len(CANARIES)
    kinds = {
        r[0]
        for r in con.execute(
            "SELECT DISTINCT kind FROM events WHERE text LIKE '%[REDACTED:%' "
            "OR CAST(tool_input AS VARCHAR) LIKE '%[REDACTED:%'"
        ).fetchall()
    }
    assert {"prompt", "tool_call", "tool_result"} <= kinds
    con.execute("CHECKPOINT")
    con.close()
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("c.duckdb*") if p.is_file())
    for canary in CANARIES:
        assert canary.encode() not in stored
        # a fragment long enough to identify the secret must not survive either
        assert canary[-12:].encode() not in stored

    for canary in CANARIES:
        hits = cli("search", canary[-12:], "--catalog", catalog, "--json", "--mode", "lexical")
        assert hits.returncode == 0 and '"hits": []' in hits.stdout


def _canary_home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    generate_claude_home(home, sessions=2, turns_per_session=2, canaries=CANARIES[:1],
                         split_canaries=(SPLIT,))  # fmt: skip
    return home


SPLIT = "ghp_CANARYsplitPipeline0123456789abcdef"


def test_a_secret_split_across_two_commits_is_redacted_as_in_one(tmp_path: Path) -> None:
    """One commit per line puts the two chunks of the split reply in two transactions:
    the earlier event is amended (text and search index), so the catalog equals an
    import that read both chunks in one batch."""
    home = _canary_home(tmp_path)
    catalogs = {}
    for name, limits in (("one", ExtractLimits()), ("per-line", ExtractLimits(batch_lines=1))):
        catalogs[name] = tmp_path / f"{name}.duckdb"
        import_with(home, catalogs[name], limits)
    tables = ("events", "search_postings", "search_terms")
    assert snapshot(catalogs["per-line"], tables) == snapshot(catalogs["one"], tables)
    con = duckdb.connect(str(catalogs["per-line"]), read_only=True)
    texts = [t for (t,) in con.execute("SELECT text FROM events WHERE text IS NOT NULL").fetchall()]
    con.close()
    assert any(t.endswith("[REDACTED:github-token]") for t in texts)
    assert not any(SPLIT[-10:] in t for t in texts)
