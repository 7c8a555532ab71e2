"""Tokens of delegated work: the ``session_rollup`` view (roots, depths and lineages of the
trees parent links make, bounded against loops and depth, per workspace and provider),
``report session --rollup`` built on it, for every provider that links children."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import pytest
from typer.testing import CliRunner

import agentlake
from agentlake.cli import app
from agentlake.errors import ConfigurationError
from agentlake.ingest.run import ImportOptions, run_import
from agentlake.load.catalog import open_for_write
from agentlake.read.reports import ReportFilter, report
from tests.conftest import FIXTURES

Link = tuple[str, str, str, str | None]  # workspace, provider, session, parent


def _catalog(path: Path, links: list[Link], calls: dict[str, int] | None = None) -> Path:
    """A catalog holding ``links`` as sessions, and one call of ``calls[session]`` tokens
    per named session (workspace ``default``, the session's provider)."""
    with open_for_write(path) as con:
        con.executemany(
            "INSERT INTO sessions (workspace, provider, session_id, parent_session_id) "
            "VALUES (?, ?, ?, ?)",
            links,
        )
        providers = {(w, s): p for w, p, s, _ in links}
        for n, (session, tokens) in enumerate((calls or {}).items()):
            con.execute(
                "INSERT INTO usage (call_id, workspace, provider, session_id, ts, model, "
                "input_tokens, cache_write_tokens, cache_write_1h_tokens, cache_read_tokens, "
                "output_tokens, reasoning_tokens, total_tokens, source_id, source_offset, "
                "import_id) VALUES (?, 'default', ?, ?, TIMESTAMPTZ '2026-05-01 10:00:00+00' "
                "+ to_minutes(?), 'gpt-5', ?, 0, 0, 0, 0, 0, ?, 'src', 0, 1)",
                [f"c{n}", providers[("default", session)], session, n, tokens, tokens],
            )
    return path


def _rollup(catalog: Path, workspace: str = "default") -> dict[tuple[str, str], tuple[Any, ...]]:
    """(provider, session) → (root, depth, lineage) of one workspace."""
    con = duckdb.connect(str(catalog), read_only=True)
    try:
        rows = con.execute(
            "SELECT provider, session_id, root_session_id, depth, lineage FROM session_rollup "
            "WHERE workspace = ?",
            [workspace],
        ).fetchall()
    finally:
        con.close()
    return {(p, s): (root, depth, tuple(lineage)) for p, s, root, depth, lineage in rows}


# -- the view on literal rows ------------------------------------------------------------


@pytest.mark.parametrize("provider", ["claude-code", "codex", "gemini-cli", "cursor"])
def test_parent_child_and_grandchild_share_the_root(tmp_path: Path, provider: str) -> None:
    # The links each adapter writes: a Claude subagent transcript, a Codex spawned thread
    # or fork, a Gemini subagent log, a Cursor subagent composer all name their parent.
    links: list[Link] = [
        ("default", provider, "p", None),
        ("default", provider, "c", "p"),
        ("default", provider, "g", "c"),
        ("default", provider, "c2", "p"),
        ("default", provider, "o", "gone"),  # its parent is not in the catalog
    ]
    got = _rollup(_catalog(tmp_path / "c.duckdb", links))
    assert got == {
        (provider, "p"): ("p", 0, ("p",)),
        (provider, "c"): ("p", 1, ("p", "c")),
        (provider, "g"): ("p", 2, ("p", "c", "g")),
        (provider, "c2"): ("p", 1, ("p", "c2")),
        (provider, "o"): ("o", 0, ("o",)),
    }


def test_a_loop_of_parent_links_has_one_root_and_every_session_once(tmp_path: Path) -> None:
    links: list[Link] = [
        ("default", "codex", "b", "c"),
        ("default", "codex", "c", "d"),
        ("default", "codex", "d", "b"),  # b → c → d → b
        ("default", "codex", "e", "d"),  # hangs under the loop
        ("default", "codex", "s", "s"),  # its own parent
    ]
    got = _rollup(_catalog(tmp_path / "c.duckdb", links))
    assert got == {
        ("codex", "b"): ("b", 0, ("b",)),  # the loop's smallest id is its root
        ("codex", "c"): ("b", 2, ("b", "d", "c")),
        ("codex", "d"): ("b", 1, ("b", "d")),
        ("codex", "e"): ("b", 2, ("b", "d", "e")),
        ("codex", "s"): ("s", 0, ("s",)),
    }


def test_an_absurdly_deep_chain_is_cut_after_64_links(tmp_path: Path) -> None:
    chain = [f"s{n:03d}" for n in range(100)]
    links: list[Link] = [("default", "cursor", chain[0], None)]
    links += [("default", "cursor", s, chain[n]) for n, s in enumerate(chain[1:])]
    got = _rollup(_catalog(tmp_path / "c.duckdb", links))
    assert len(got) == 100  # one row per session, whatever its depth
    assert got[("cursor", "s064")][:2] == ("s000", 64)
    assert got[("cursor", "s099")][:2] == ("s035", 64)  # rooted at its 64th ancestor
    assert len(got[("cursor", "s099")][2]) == 65


def test_links_stay_inside_their_workspace_and_provider(tmp_path: Path) -> None:
    links: list[Link] = [
        ("default", "claude-code", "p", None),
        ("default", "claude-code", "c", "p"),
        ("default", "codex", "c", "p"),  # no codex session p: its own root
        ("other", "claude-code", "c", "q"),
        ("other", "claude-code", "q", None),
    ]
    catalog = _catalog(tmp_path / "c.duckdb", links)
    assert _rollup(catalog)[("claude-code", "c")][0] == "p"
    assert _rollup(catalog)[("codex", "c")][0] == "c"
    assert _rollup(catalog, "other")[("claude-code", "c")][0] == "q"
    result = CliRunner().invoke(
        app, ["sql", "SELECT count(*) AS n FROM session_rollup", "--catalog", str(catalog),
              "--workspace", "other", "--json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["rows"] == [{"n": 2}]  # agentlake sql: its workspace only


def test_rollup_counts_each_call_once_even_through_a_loop(tmp_path: Path) -> None:
    links: list[Link] = [
        ("default", "codex", "p", None),
        ("default", "codex", "c", "p"),
        ("default", "codex", "x", "y"),
        ("default", "codex", "y", "x"),
    ]
    calls = {"p": 100, "c": 20, "x": 3, "y": 4}
    catalog = _catalog(tmp_path / "c.duckdb", links, calls)
    plain = report(catalog, "default", "session", ReportFilter())
    rolled = report(catalog, "default", "session", ReportFilter(), rollup=True)
    assert rolled.totals == plain.totals
    got = {r["session_id"]: (r["sessions"], r["calls"], r["total_tokens"])
           for r in rolled.rows.to_pylist()}  # fmt: skip
    assert got == {"p": (2, 2, 120), "x": (2, 2, 7)}


# -- every provider's own links, imported ------------------------------------------------


def _import(home: Path, catalog: Path) -> Path:
    result = run_import(
        ImportOptions(catalog=catalog, workspace="default", home=home, env={}, build_index=False)
    )
    assert result.exit_code == 0
    return catalog


@pytest.mark.parametrize(
    ("fixture", "parent", "children"),
    [
        ("claude/subagent_tree", "5d0c8e1e-0012-4000-8000-000000000001",
         {"agent-c0ffee0000000001", "agent-9a11dc0000000002"}),
        ("codex/index_only_thread", "019e1a00-0000-7000-8000-c0de00000020",
         {"019e1a05-0000-7000-8000-c0de00000021"}),  # a spawned subagent thread
        ("codex/fork_replays_parent", "019df75d-9a80-7000-8000-c0de00000006",
         {"019df7cb-7848-7000-8000-c0de00000007"}),  # a fork
        ("gemini/subagent", "2b3c4d5e-0000-4000-8000-000000002001",
         {"8a9b0c1d-0000-4000-8000-000000002002"}),
        ("cursor/parent_and_subagents", "aa000000-0000-4000-8000-000000000001",
         {"aa000000-0000-4000-8000-000000000051", "aa000000-0000-4000-8000-000000000052"}),
    ],
)  # fmt: skip
def test_each_providers_children_fold_into_their_parent(
    tmp_path: Path, fixture: str, parent: str, children: set[str]
) -> None:
    catalog = _import(FIXTURES / fixture, tmp_path / "c.duckdb")
    tree = {s: root for (_, s), (root, _, _) in _rollup(catalog).items()}
    assert {s for s, root in tree.items() if root == parent} == {parent, *children}
    plain = report(catalog, "default", "session", ReportFilter())
    rolled = report(catalog, "default", "session", ReportFilter(), rollup=True)
    assert rolled.totals == plain.totals  # a call is counted once in every total
    by_session = {r["session_id"]: r for r in plain.rows.to_pylist()}
    (row,) = [r for r in rolled.rows.to_pylist() if r["session_id"] == parent]
    members = [s for s in (parent, *children) if s in by_session]
    assert row["sessions"] == len(members)
    assert row["total_tokens"] == sum(by_session[s]["total_tokens"] for s in members)
    assert row["calls"] == sum(by_session[s]["calls"] for s in members)


# -- report session --rollup -------------------------------------------------------------

TREE = FIXTURES / "claude" / "subagent_tree"


@pytest.fixture(scope="module")
def tree_catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _import(TREE, tmp_path_factory.mktemp("tree") / "c.duckdb")


def test_rollup_report_has_one_row_per_root(tree_catalog: Path) -> None:
    args = ["report", "session", "--rollup", "--json", "--catalog", str(tree_catalog)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["rollup"] is True and doc["report"] == "session"
    got = [(r["session_id"], r["sessions"], r["calls"], r["total_tokens"]) for r in doc["sessions"]]
    assert got == [  # most recent first
        ("agent-cc00000000000004", 2, 2, 2273),  # the loop of two subagents, once each
        ("agent-0b0e000000000003", 1, 1, 2024),  # its parent session is not in the home
        ("5d0c8e1e-0012-4000-8000-000000000001", 3, 4, 29736),  # parent, child, grandchild
    ]
    assert doc["totals"]["total_tokens"] == 34033 and doc["totals"]["calls"] == 7
    parent = doc["sessions"][2]
    assert parent["title"] is None and parent["project_path"] == "/home/dev/shop"
    assert parent["models"] == ["claude-haiku-4-5-20251001", "claude-sonnet-4-5-20250929"]


def test_rollup_bounds_and_breakdown(tree_catalog: Path) -> None:
    # the filters keep their calls: with --model haiku the root's row holds its subagents'
    late = report(tree_catalog, "default", "session", ReportFilter(model="haiku"), rollup=True)
    rows = {r["session_id"]: (r["sessions"], r["total_tokens"]) for r in late.rows.to_pylist()}
    assert rows["5d0c8e1e-0012-4000-8000-000000000001"] == (2, 4090 + 1538)
    full = report(tree_catalog, "default", "session", ReportFilter(), rollup=True, breakdown=True)
    assert full.breakdown is not None
    assert "root_sessions" not in full.breakdown.column_names
    parts = full.parts()[("claude-code", "5d0c8e1e-0012-4000-8000-000000000001", "/home/dev/shop",
                          None)]  # fmt: skip
    assert {(p["model"], p["calls"]) for p in parts} == {
        ("claude-sonnet-4-5-20250929", 2),
        ("claude-haiku-4-5-20251001", 2),
    }


def test_rollup_human_table_and_refusals(tree_catalog: Path) -> None:
    wide = CliRunner().invoke(
        app, ["report", "session", "--rollup", "--breakdown", "--catalog", str(tree_catalog)],
        env={"COLUMNS": "160"},
    )  # fmt: skip
    assert wide.exit_code == 0, wide.output
    assert "subagents folded into their root session" in wide.stdout
    assert "sessions" in wide.stdout and "29,736" in wide.stdout
    for kind in ("daily", "model", "project"):
        refused = CliRunner().invoke(
            app, ["report", kind, "--rollup", "--catalog", str(tree_catalog)]
        )
        assert refused.exit_code == 2
        assert "--rollup applies to the session report" in refused.output
    with pytest.raises(ConfigurationError):
        report(tree_catalog, "default", "daily", ReportFilter(), rollup=True)


# -- sessions show: own and subtree totals -----------------------------------------------

ROOT = "5d0c8e1e-0012-4000-8000-000000000001"


@pytest.mark.parametrize(
    ("session", "tree", "own", "subtree"),
    [
        (ROOT, (ROOT, 0, 1, 3), (2, 24108), (4, 29736)),
        ("agent-c0ffee0000000001", (ROOT, 1, 1, 2), (1, 4090), (2, 4090 + 1538)),
        ("agent-9a11dc0000000002", (ROOT, 2, 0, 1), (1, 1538), (1, 1538)),
        ("agent-0b0e000000000003", ("agent-0b0e000000000003", 0, 0, 1), (1, 2024), (1, 2024)),
        # a loop: its smallest id is the root, and the other is counted under it once
        ("agent-cc00000000000004", ("agent-cc00000000000004", 0, 1, 2), (1, 1031), (2, 2273)),
        ("agent-cc00000000000005", ("agent-cc00000000000004", 1, 1, 1), (1, 1242), (1, 1242)),
    ],
)
def test_show_gives_own_and_subtree_totals(
    tree_catalog: Path,
    session: str,
    tree: tuple[str, int, int, int],
    own: tuple[int, int],
    subtree: tuple[int, int],
) -> None:
    args = ["sessions", "show", session, "--json", "--catalog", str(tree_catalog)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    facts = doc["tree"]
    assert (facts["root_session_id"], facts["depth"], facts["children_count"],
            facts["subtree_sessions"]) == tree  # fmt: skip
    assert facts["children_count"] == len(doc["children"])
    totals = doc["totals"]
    assert (totals["own"]["calls"], totals["own"]["total_tokens"]) == own
    assert (totals["subtree"]["calls"], totals["subtree"]["total_tokens"]) == subtree
    assert totals["own"]["total_tokens"] == doc["session"]["total_tokens"]
    assert set(totals["own"]) == set(totals["subtree"]) == {
        "calls", "input_tokens", "cache_write_tokens", "cache_write_1h_tokens",
        "cache_read_tokens", "output_tokens", "reasoning_tokens", "total_tokens",
    }  # fmt: skip


def test_show_prints_the_subtree_and_the_root(tree_catalog: Path) -> None:
    root = CliRunner().invoke(app, ["sessions", "show", ROOT, "--catalog", str(tree_catalog)])
    assert root.exit_code == 0, root.output
    shown = " ".join(root.stdout.split())  # whatever the widths of the facts' columns
    assert "tokens 24,108 in 2 calls" in shown
    assert "with subtree 29,736 in 4 calls of 3 sessions" in shown
    leaf = CliRunner().invoke(
        app, ["sessions", "show", "agent-9a11dc0000000002", "--catalog", str(tree_catalog)]
    )
    assert f"root {ROOT} (depth 2)" in " ".join(leaf.stdout.split())
    assert "with subtree" not in leaf.stdout


def test_the_python_facade_rolls_up_too(tree_catalog: Path) -> None:
    lake = agentlake.open(tree_catalog)
    rows = lake.report("session", rollup=True)
    assert rows.column("sessions").to_pylist() == [2, 1, 3]
    assert lake.report_full("session", rollup=True, breakdown=True).rollup
    assert lake.limits().rows.num_rows == 0  # Claude Code writes no rate-limit snapshots
