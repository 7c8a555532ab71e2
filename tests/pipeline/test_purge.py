"""``agentlake sessions purge``: preview, confirm, receipt, revocation and crash safety
(:mod:`agentlake.manage.purge`)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import duckdb
import pytest

from agentlake.errors import NotFoundError
from agentlake.ingest.run import ImportOptions, ImportResult, run_import
from agentlake.manage.audit import audit_page
from agentlake.manage.authz import authorize
from agentlake.manage.purge import ScopeChanged, preview, purge
from agentlake.read.doctor import explain_session
from tests.conftest import FIXTURES, CliRunner, cli_env

PARENT = "5d0c8e1e-0012-4000-8000-000000000001"
CHILDREN = ("agent-9a11dc0000000002", "agent-c0ffee0000000001")
SCOPE = (PARENT, *CHILDREN)
PROJECT = Path(".claude/projects/-home-dev-shop")
TRANSCRIPT = PROJECT / f"{PARENT}.jsonl"
AUTH = authorize("default", "purge", env={"AGENTLAKE_ACTOR": "ann"})


def _home(tmp_path: Path) -> Path:
    """Claude Code's sub-agent tree (a parent, a child, a grandchild, an orphan and a
    loop) and Codex sessions with rate-limit snapshots."""
    home = tmp_path / "home"
    shutil.copytree(FIXTURES / "claude" / "subagent_tree", home)
    shutil.copytree(FIXTURES / "codex" / "contract_all_shapes", home, dirs_exist_ok=True)
    return home


def _import(home: Path, catalog: Path, **options: Any) -> ImportResult:
    result = run_import(
        ImportOptions(catalog=catalog, workspace="default", home=home, env={}, **options)
    )
    assert result.exit_code == 0
    return result


@pytest.fixture
def imported(tmp_path: Path) -> tuple[Path, Path]:
    home, catalog = _home(tmp_path), tmp_path / "catalog.duckdb"
    _import(home, catalog)
    with duckdb.connect(str(catalog)) as con:  # a tag, as `sessions tag` sets them
        con.execute(
            "INSERT INTO session_tags VALUES ('default', 'claude-code', ?, 'keep', now())",
            [CHILDREN[0]],
        )
    return home, catalog


# Every table whose rows belong to a session, and how to find a session's rows in it.
_SESSION_ROWS = {
    "sessions": "SELECT session_id FROM sessions WHERE workspace = 'default'",
    "session_versions": "SELECT session_id FROM session_versions WHERE workspace = 'default'",
    "events": "SELECT session_id FROM events WHERE workspace = 'default'",
    "usage": "SELECT session_id FROM usage WHERE workspace = 'default'",
    "rate_limits": "SELECT session_id FROM rate_limits WHERE workspace = 'default'",
    "session_tags": "SELECT session_id FROM session_tags WHERE workspace = 'default'",
    "search_docs": "SELECT e.session_id FROM search_docs d JOIN events e USING (workspace, event_id)",
    "search_postings": "SELECT e.session_id FROM search_postings p JOIN search_docs d USING (doc) "
    "JOIN events e USING (workspace, event_id)",
    "search_vectors": "SELECT e.session_id FROM search_vectors v JOIN events e "
    "USING (workspace, event_id)",
}


def _count(catalog: Path, table: str, sessions: tuple[str, ...]) -> int:
    with duckdb.connect(str(catalog), read_only=True) as con:
        row = con.execute(
            f"SELECT count(*) FROM ({_SESSION_ROWS[table]}) WHERE session_id IN "
            f"(SELECT unnest(?::VARCHAR[]))",
            [list(sessions)],
        ).fetchone()
    assert row is not None
    return int(row[0])


def _rows(catalog: Path, table: str, where: str = "true") -> list[str]:
    """Every row of ``table`` (``where``), as text, sorted."""
    with duckdb.connect(str(catalog), read_only=True) as con:
        return sorted(
            str(r[0])
            for r in con.execute(f"SELECT t::VARCHAR FROM {table} t WHERE {where}").fetchall()
        )


def _others(catalog: Path) -> dict[str, list[str]]:
    """The rows of every session outside the purge's scope."""
    outside = f"session_id NOT IN ({', '.join(repr(s) for s in SCOPE)})"
    return {
        table: _rows(catalog, table, outside)
        for table in ("sessions", "session_versions", "events", "usage", "rate_limits",
                      "session_tags")
    }  # fmt: skip


# Tables that keep a purged session's id on purpose: content-free records of the purge.
_KEPT = ("audit", "purge_receipts", "purge_revocations")


def _orphans(catalog: Path) -> dict[str, int]:
    """Rows of the purged sessions anywhere (every table with a ``session_id`` column,
    so that a table added later is scanned too), and index rows that point nowhere."""
    found = {table: _count(catalog, table, SCOPE) for table in _SESSION_ROWS}
    with duckdb.connect(str(catalog), read_only=True) as con:
        tables = con.execute(
            "SELECT DISTINCT table_name FROM duckdb_columns() WHERE column_name = 'session_id' "
            "AND NOT internal AND table_name IN (SELECT table_name FROM "
            "duckdb_tables())"
        ).fetchall()
        for (table,) in tables:
            if table not in _KEPT:
                row = con.execute(
                    f"SELECT count(*) FROM {table} WHERE session_id IN "
                    "(SELECT unnest(?::VARCHAR[]))",
                    [list(SCOPE)],
                ).fetchone()
                assert row is not None
                found[f"any {table}"] = int(row[0])
        for name, query in {
            "dangling_docs": "SELECT count(*) FROM search_docs d ANTI JOIN events e "
            "USING (workspace, event_id)",
            "dangling_postings": "SELECT count(*) FROM search_postings p ANTI JOIN search_docs "
            "USING (doc)",
            "withdrawn": "SELECT count(*) FROM search_withdrawn w ANTI JOIN events e "
            "USING (workspace, event_id)",
            "dangling_vectors": "SELECT count(*) FROM search_vectors v ANTI JOIN events e "
            "USING (workspace, event_id)",
            "vector_withdrawn": "SELECT count(*) FROM vector_withdrawn w ANTI JOIN events e "
            "USING (workspace, event_id)",
            "df_mismatch": "SELECT count(*) FROM search_terms t LEFT JOIN (SELECT term_id, "
            "count(*) AS n FROM search_postings GROUP BY ALL) p USING (term_id) "
            "WHERE t.df <> coalesce(p.n, 0)",
            "state_mismatch": "SELECT count(*) FROM search_state s WHERE postings <> "
            "(SELECT count(*) FROM search_postings) OR docs <> (SELECT count(*) FROM search_docs)",
        }.items():
            row = con.execute(query).fetchone()
            assert row is not None
            found[name] = int(row[0])
    return {k: v for k, v in found.items() if v}


def test_the_preview_counts_every_row_of_the_session_and_its_subtree(
    imported: tuple[Path, Path],
) -> None:
    _, catalog = imported
    shown = preview(catalog, AUTH, PARENT[:8])
    assert (shown.provider, shown.session_id, shown.children) == ("claude-code", PARENT, CHILDREN)
    expected = {table: _count(catalog, table, SCOPE) for table in _SESSION_ROWS}
    assert {t: shown.counts[t] for t in expected} == expected
    assert expected["events"] == 7 and expected["usage"] == 4 and expected["session_tags"] == 1
    assert expected["search_postings"] > 0 and shown.counts["search_withdrawn"] == 0
    assert expected["search_vectors"] > 0 and shown.counts["vector_withdrawn"] == 0
    # stable while nothing changes; a child alone is its own, smaller scope
    assert preview(catalog, AUTH, PARENT).operation_id == shown.operation_id
    child = preview(catalog, AUTH, CHILDREN[0])
    assert child.children == () and child.operation_id != shown.operation_id
    codex = preview(catalog, AUTH, "019e11c2")
    assert codex.counts["rate_limits"] == _count(catalog, "rate_limits", (codex.session_id,)) > 0


def test_a_confirmed_purge_deletes_exactly_its_scope_with_receipt_and_audit(
    imported: tuple[Path, Path],
) -> None:
    _, catalog = imported
    others = _others(catalog)
    shown = preview(catalog, AUTH, PARENT)
    receipt = purge(catalog, AUTH, PARENT, confirm=shown.operation_id)
    assert not receipt.repeated and receipt.session_ids == SCOPE
    assert receipt.counts == shown.counts and receipt.actor == "ann"
    assert _orphans(catalog) == {}
    assert _others(catalog) == others
    # content-free: ids, counts and digests only
    stored = _rows(catalog, "purge_receipts")
    assert len(stored) == 1 and "Delegat" not in repr(stored) and "/home" not in repr(stored)
    [row] = audit_page(catalog, authorize("default", "audit")).rows
    assert (row.operation, row.actor, row.session_id, row.digest) == (
        "purge", "ann", PARENT, shown.operation_id,
    )  # fmt: skip
    assert row.counts == dict(shown.counts)
    # a repeat returns the stored receipt and changes nothing
    again = purge(catalog, AUTH, PARENT, confirm=shown.operation_id)
    assert again.repeated and again.purged_at == receipt.purged_at
    assert again.counts == receipt.counts and again.digests == receipt.digests
    assert len(audit_page(catalog, authorize("default", "audit")).rows) == 1
    with pytest.raises(NotFoundError, match=f"purged on .* by ann .*{shown.operation_id}"):
        preview(catalog, AUTH, PARENT)


def test_a_changed_scope_is_refused_with_the_new_preview(
    imported: tuple[Path, Path], cli: CliRunner
) -> None:
    home, catalog = imported
    old = preview(catalog, AUTH, PARENT).operation_id
    _append(home / TRANSCRIPT, "one more prompt before the purge")
    _import(home, catalog)
    before = _rows(catalog, "events")
    proc = cli("sessions", "purge", PARENT, "--confirm", old, "--catalog", catalog, "--json")
    assert proc.returncode == 2
    shown = json.loads(proc.stdout)
    assert shown["status"] == "preview" and shown["operation_id"] != old
    assert shown["counts"]["events"] == 8
    assert "nothing was deleted" in proc.stderr and shown["operation_id"] in proc.stderr
    assert _rows(catalog, "events") == before
    with pytest.raises(ScopeChanged):  # an operation id of another session's scope
        purge(catalog, AUTH, PARENT, confirm=preview(catalog, AUTH, CHILDREN[0]).operation_id)
    done = cli("sessions", "purge", PARENT, "--confirm", shown["operation_id"],
               "--catalog", catalog, "--json")  # fmt: skip
    assert done.returncode == 0 and json.loads(done.stdout)["counts"]["events"] == 8


def test_the_command_previews_purges_and_repeats(
    imported: tuple[Path, Path], cli: CliRunner
) -> None:
    _, catalog = imported
    proc = cli("sessions", "purge", PARENT[:8], "--catalog", catalog)
    assert proc.returncode == 0, proc.stderr
    assert "irreversible" in proc.stdout and CHILDREN[1] in proc.stdout
    op = preview(catalog, AUTH, PARENT).operation_id
    assert f"--confirm {op}" in proc.stdout
    done = cli("sessions", "purge", PARENT[:8], "--confirm", op, "--catalog", catalog)
    assert done.returncode == 0 and "purged on" in done.stdout and op in done.stdout
    again = cli("sessions", "purge", PARENT[:8], "--confirm", op, "--catalog", catalog, "--json")
    assert again.returncode == 0 and json.loads(again.stdout)["status"] == "repeated"
    short = cli("sessions", "purge", "5d0", "--catalog", catalog)
    assert short.returncode == 2 and "too short" in short.stderr
    missing = catalog.with_name("missing.duckdb")
    absent = cli("sessions", "purge", PARENT, "--confirm", op, "--catalog", missing)
    assert absent.returncode == 4 and "no catalog here" in absent.stderr
    assert not missing.exists()


def test_a_session_of_another_workspace_is_an_unknown_id(
    imported: tuple[Path, Path], cli: CliRunner
) -> None:
    _, catalog = imported
    op = preview(catalog, AUTH, PARENT).operation_id
    unknown = "5d0c8e1e-9999-4000-8000-000000000001"
    for extra in ((), ("--confirm", op)):
        theirs = cli("sessions", "purge", PARENT, *extra, "--workspace", "other",
                     "--catalog", catalog)  # fmt: skip
        none = cli("sessions", "purge", unknown, *extra, "--workspace", "other",
                   "--catalog", catalog)  # fmt: skip
        assert theirs.returncode == none.returncode == 4
        assert theirs.stderr.replace(PARENT, unknown) == none.stderr
    assert _count(catalog, "events", SCOPE) == 7  # nothing was deleted


def _append(path: Path, text: str) -> None:
    """A prompt line appended to a Claude Code transcript (copied from its first line)."""
    first = json.loads(path.read_text().splitlines()[0])
    n = len(path.read_text().splitlines())
    first.update(
        uuid=f"aaaaaaaa-0000-4000-8000-{n:012d}", type="user",
        message={"role": "user", "content": text}, timestamp="2026-05-12T12:00:00.000Z",
    )  # fmt: skip
    with path.open("a") as out:
        out.write(json.dumps(first) + "\n")


def test_a_purged_session_stays_out_of_later_imports_until_allowed_back(
    imported: tuple[Path, Path], cli: CliRunner
) -> None:
    home, catalog = imported
    full = _rows(catalog, "events", f"session_id IN ({', '.join(repr(s) for s in SCOPE)})")
    op = preview(catalog, AUTH, PARENT).operation_id
    purge(catalog, AUTH, PARENT, confirm=op)
    others = _others(catalog)
    # The rule: the whole session stays out, its old bytes and later appends alike.
    _append(home / TRANSCRIPT, "written after the purge")
    appended = _import(home, catalog)
    assert appended.totals()["withheld"] == 1 and appended.totals()["events"] == 0
    assert _orphans(catalog) == {} and _others(catalog) == others
    # a new sub-agent of the purged session is withheld and revoked with it
    sub = home / PROJECT / PARENT / "subagents"
    shutil.copy(sub / f"{CHILDREN[1]}.jsonl", sub / "agent-feed000000000009.jsonl")
    spawned = cli("import", "--home", home, "--catalog", catalog)
    assert spawned.returncode == 0, spawned.stderr
    said = " ".join(spawned.stdout.split())
    assert "0 new events" in said and "3 rows of purged sessions withheld" in said
    assert _count(catalog, "sessions", ("agent-feed000000000009",)) == 0
    # --restart-drifted re-reads a rewritten transcript, but that is a repair, not a
    # request to bring the session back: it stays out
    text = (home / TRANSCRIPT).read_text()
    (home / TRANSCRIPT).write_text(text.replace("2026-05-12", "2026-05-13", 1))
    refused = run_import(ImportOptions(catalog=catalog, workspace="default", home=home, env={}))
    assert refused.exit_code == 1
    restarted = _import(home, catalog, restart_drifted=True)
    assert restarted.totals()["withheld"] > 0 and _orphans(catalog) == {}
    assert _import(home, catalog).totals()["withheld"] == 0  # nothing new: nothing read
    # doctor says it in words
    diagnosis = explain_session(catalog, "default", CHILDREN[0], home=home, env={})
    assert diagnosis.status == "purged" and diagnosis.exit_code == 4
    assert "purged with the sub-agent tree of session" in diagnosis.message
    assert "by ann" in diagnosis.message and "--allow-purged" in diagnosis.message
    # --allow-purged is the way back: every session of the scope, the appended prompt and
    # the new sub-agent too, and the revocations are gone
    back = cli("import", "--home", home, "--catalog", catalog, "--allow-purged", "--json")
    assert back.returncode == 0, back.stderr
    assert json.loads(back.stdout)["totals"]["withheld"] == 0
    scope = (*SCOPE, "agent-feed000000000009")
    assert _count(catalog, "sessions", scope) == 4
    restored = _rows(catalog, "events", f"session_id IN ({', '.join(repr(s) for s in SCOPE)})")
    assert len(restored) == len(full) + 1
    with duckdb.connect(str(catalog), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM purge_revocations").fetchone() == (0,)
    released = audit_page(catalog, authorize("default", "audit"), operation="release").rows
    assert sorted(r.session_id or "" for r in released) == sorted(scope)
    assert {r.digest for r in released} == {op}
    assert _import(home, catalog).totals()["events"] == 0  # and it stays


_KILLED_PURGE = """
import sys, time
from pathlib import Path
from agentlake.manage.authz import authorize
from agentlake.manage.purge import preview, purge

catalog, marker = Path(sys.argv[1]), Path(sys.argv[2])
auth = authorize("default", "purge")

def pause(point):
    marker.write_text(point)
    time.sleep(600)

purge(catalog, auth, sys.argv[3], confirm=preview(catalog, auth, sys.argv[3]).operation_id,
      faults=pause)
"""


def test_a_purge_killed_before_commit_leaves_the_catalog_as_it_was(
    imported: tuple[Path, Path], tmp_path: Path
) -> None:
    _, catalog = imported
    tables = ("sessions", "session_versions", "events", "usage", "rate_limits", "session_tags",
              "search_docs", "search_postings", "search_terms", "search_state", "audit",
              "purge_receipts", "purge_revocations", "search_vectors", "vector_withdrawn",
              "vector_watermark")  # fmt: skip
    before = {t: _rows(catalog, t) for t in tables}
    marker = tmp_path / "paused"
    proc = subprocess.Popen(
        [sys.executable, "-c", _KILLED_PURGE, str(catalog), str(marker), PARENT],
        env=cli_env(), stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while not marker.exists():  # every row deleted, the receipt written, not committed
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        assert time.monotonic() < deadline
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)
    assert {t: _rows(catalog, t) for t in tables} == before
    # and the purge then runs to its end: after it, nothing of the scope is left
    purge(catalog, AUTH, PARENT, confirm=preview(catalog, AUTH, PARENT).operation_id)
    assert _orphans(catalog) == {}
