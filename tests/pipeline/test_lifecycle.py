"""Hiding, restoring and tagging sessions (:mod:`agentlake.manage.lifecycle`,
:mod:`agentlake.manage.tags`): every read leaves a hidden session out and gets it back
whole on restore, another workspace's id is an unknown id, every change writes a
content-free audit row, and tags and the lifecycle filter bind cursors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import duckdb
import pytest

from agentlake.errors import ConfigurationError, NotFoundError
from agentlake.ingest.run import ImportOptions, run_import
from agentlake.manage.authz import authorize
from agentlake.manage.lifecycle import change_lifecycle
from agentlake.manage.tags import check_tag, tag_session
from agentlake.read.queries import scoped_sql
from agentlake.read.reports import REPORT_KINDS, ReportFilter, report
from agentlake.read.search import SearchFilter, search_page
from agentlake.read.sessions import list_sessions, show_session
from tests.conftest import FIXTURES, CliRunner

# The scoped views of `agentlake sql` that hold session rows, and what is summed of each
# (in one query: each read of the catalog costs a connection).
VIEWS_QUERY = """
SELECT (SELECT count(*) FROM sessions) AS sessions,
       (SELECT count(*) FROM events) AS events,
       (SELECT sum(total_tokens) FROM usage) AS usage,
       (SELECT sum(total_tokens) FROM usage_costed) AS usage_costed,
       (SELECT sum(total_tokens) FROM usage_daily) AS usage_daily,
       (SELECT count(*) FROM session_rollup) AS session_rollup
"""


@pytest.fixture
def catalog(demo_home_catalog: tuple[Path, Path], tmp_path: Path) -> Path:
    """A writable copy of the demo catalog (38 sessions of four providers)."""
    path = tmp_path / "catalog.duckdb"
    shutil.copy(demo_home_catalog[1], path)
    return path


def _one(catalog: Path, query: str) -> Any:
    con = duckdb.connect(str(catalog), read_only=True)
    try:
        row = con.execute(query).fetchone()
        assert row is not None
        return row[0] if len(row) == 1 else row
    finally:
        con.close()


def _parent_with_child(catalog: Path) -> tuple[str, str, str]:
    """(provider, parent id, child id) of a Claude Code session with a subagent."""
    row = _one(
        catalog,
        "SELECT c.provider, c.parent_session_id, c.session_id FROM sessions c "
        "JOIN sessions p ON p.provider = c.provider AND p.session_id = c.parent_session_id "
        "WHERE c.provider = 'claude-code' ORDER BY c.session_id LIMIT 1",
    )
    return str(row[0]), str(row[1]), str(row[2])


def _reads(catalog: Path, *, include_hidden: bool = False) -> dict[str, Any]:
    """What every read shows: listed ids, report totals per kind, view sums."""
    page = list_sessions(catalog, "default", limit=500, include_hidden=include_hidden)
    flt = ReportFilter(include_hidden=include_hidden)
    totals = {kind: report(catalog, "default", kind, flt).totals for kind in REPORT_KINDS}
    rollup = report(catalog, "default", "session", flt, rollup=True).totals
    views = scoped_sql(catalog, "default", VIEWS_QUERY, include_hidden=include_hidden)
    return {
        "listed": sorted(page.sessions.column("session_id").to_pylist()),
        "reports": totals,
        "rollup": rollup,
        "views": views.to_pylist()[0],
    }


def _phrase(catalog: Path, session_id: str) -> str:
    """A phrase of the session's first prompt, to find it by search."""
    text = _one(catalog, f"SELECT first_prompt FROM sessions WHERE session_id = '{session_id}'")
    return '"' + " ".join(str(text).split()[:5]) + '"'


def _found(catalog: Path, query: str, **flt: Any) -> set[str]:
    hits = search_page(catalog, "default", query, limit=500, flt=SearchFilter(**flt)).hits
    return {h.session_id for h in hits}


def test_hide_leaves_every_read_and_restore_brings_it_back_whole(
    cli: CliRunner, catalog: Path
) -> None:
    provider, parent, child = _parent_with_child(catalog)
    before = _reads(catalog)
    phrase = _phrase(catalog, parent)
    assert parent in _found(catalog, phrase)
    own_tokens = _one(
        catalog,
        "SELECT sum(total_tokens) FROM usage "
        f"WHERE session_id IN ('{parent}', '{child}') AND provider = '{provider}'",
    )

    proc = cli("sessions", "hide", parent[:8], "--catalog", catalog, "--json")
    assert proc.returncode == 0, proc.stderr
    done = json.loads(proc.stdout)
    assert done["changed"] and done["lifecycle"] == "tombstoned"
    assert done["sessions"] == sorted([parent, child])  # the subagent goes with it
    assert done["counts"]["sessions"] == 2 and done["counts"]["usage"] > 0

    hidden = _reads(catalog)
    assert hidden["listed"] == [s for s in before["listed"] if s not in (parent, child)]
    for kind in REPORT_KINDS:
        assert hidden["reports"][kind]["total_tokens"] == (
            before["reports"][kind]["total_tokens"] - own_tokens
        ), kind
    assert hidden["rollup"]["total_tokens"] == before["rollup"]["total_tokens"] - own_tokens
    assert hidden["views"]["usage_daily"] == before["views"]["usage_daily"] - own_tokens
    assert hidden["views"]["sessions"] == before["views"]["sessions"] - 2
    for name, value in before["views"].items():
        assert hidden["views"][name] < value, name
    assert parent not in _found(catalog, phrase)
    assert parent in _found(catalog, phrase, include_hidden=True)
    with pytest.raises(NotFoundError, match="hidden"):
        show_session(catalog, "default", parent)
    with pytest.raises(NotFoundError, match="hidden"):
        _found(catalog, phrase, session=parent)
    shown = show_session(catalog, "default", parent, include_hidden=True)
    assert shown.session.lifecycle == "tombstoned"
    proc = cli("sessions", "show", parent, "--catalog", catalog)
    assert proc.returncode == 4 and "hidden" in proc.stderr
    # --include-hidden reads everything as before
    views = scoped_sql(catalog, "default", VIEWS_QUERY, include_hidden=True).to_pylist()[0]
    assert views == before["views"]
    listed = list_sessions(catalog, "default", limit=500, include_hidden=True)
    assert sorted(listed.sessions.column("session_id").to_pylist()) == before["listed"]
    marked = {r["session_id"]: r["lifecycle"] for r in listed.sessions.to_pylist()}
    assert marked[parent] == marked[child] == "tombstoned"
    proc = cli("sessions", "list", "--include-hidden", "--limit", "500", "--catalog", catalog)
    assert proc.stdout.count("(hidden)") == 2
    flt = ReportFilter(include_hidden=True)
    assert report(catalog, "default", "session", flt).totals == before["reports"]["session"]
    proc = cli("report", "daily", "--catalog", catalog, "--json", "--include-hidden")
    assert json.loads(proc.stdout)["totals"] == before["reports"]["daily"]

    proc = cli("sessions", "restore", parent, "--catalog", catalog, "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["sessions"] == sorted([parent, child])
    assert _reads(catalog) == before
    assert parent in _found(catalog, phrase)
    assert show_session(catalog, "default", parent).session.lifecycle == "active"


def test_a_subagent_hidden_alone_leaves_its_parent_shown(cli: CliRunner, catalog: Path) -> None:
    _, parent, child = _parent_with_child(catalog)
    assert cli("sessions", "hide", child, "--catalog", catalog).returncode == 0
    listed = list_sessions(catalog, "default", limit=500).sessions.column("session_id").to_pylist()
    assert parent in listed and child not in listed
    detail = show_session(catalog, "default", parent)
    assert child not in [c.session_id for c in detail.children]
    assert detail.tree is not None and detail.tree.subtree_sessions == 1
    # restoring the parent restores everything under it
    proc = cli("sessions", "restore", parent, "--catalog", catalog, "--json")
    assert json.loads(proc.stdout)["sessions"] == [child]
    listed = list_sessions(catalog, "default", limit=500).sessions.column("session_id")
    assert child in listed.to_pylist()


def test_hiding_twice_is_a_no_op_that_says_so(cli: CliRunner, catalog: Path) -> None:
    _, parent, _ = _parent_with_child(catalog)
    assert cli("sessions", "hide", parent, "--catalog", catalog).returncode == 0
    proc = cli("sessions", "hide", parent, "--catalog", catalog)
    assert proc.returncode == 0 and "hidden already; nothing to do" in proc.stdout
    proc = cli("sessions", "hide", parent, "--catalog", catalog, "--json")
    assert json.loads(proc.stdout)["changed"] is False
    assert cli("sessions", "restore", parent, "--catalog", catalog).returncode == 0
    proc = cli("sessions", "restore", parent, "--catalog", catalog)
    assert proc.returncode == 0 and "active already; nothing to do" in proc.stdout
    audit = json.loads(cli("audit", "--catalog", catalog, "--json").stdout)["rows"]
    assert [r["operation"] for r in audit] == ["restore", "hide"]


def test_audit_rows_have_counts_and_no_text(cli: CliRunner, catalog: Path) -> None:
    _, parent, child = _parent_with_child(catalog)
    env = {"AGENTLAKE_ACTOR": "ann"}
    for args in (
        ["hide", parent],
        ["tag", parent, "ticket:AB-12"],
        ["untag", parent, "ticket:AB-12"],
    ):
        assert cli("sessions", *args, "--catalog", catalog, env=env).returncode == 0
    rows = json.loads(cli("audit", "--catalog", catalog, "--json").stdout)["rows"]
    assert [r["operation"] for r in rows] == ["untag", "tag", "hide"]
    hide = rows[-1]
    events = _one(
        catalog, f"SELECT count(*) FROM events WHERE session_id IN ('{parent}', '{child}')"
    )
    assert hide["counts"]["sessions"] == 2 and hide["counts"]["events"] == events
    assert all(r["actor"] == "ann" and r["session_id"] == parent for r in rows)
    assert all(len(r["digest"]) == 64 for r in rows)
    title = _one(catalog, f"SELECT title FROM sessions WHERE session_id = '{parent}'")
    text = json.dumps(rows)
    assert "AB-12" not in text and str(title) not in text  # no tag, title or transcript text


@pytest.mark.parametrize(
    "command",
    [
        ["sessions", "hide"], ["sessions", "restore"], ["sessions", "tag", "{id}", "x"],
        ["sessions", "untag", "{id}", "x"], ["sessions", "show"], ["search", "x", "--session"],
    ],
)  # fmt: skip
def test_another_workspaces_session_is_an_unknown_id(
    cli: CliRunner, catalog: Path, command: list[str]
) -> None:
    _, parent, _ = _parent_with_child(catalog)
    unknown = "0" * len(parent)

    def run(ident: str) -> tuple[int, str]:
        args = [a.replace("{id}", ident) for a in command]
        if "{id}" not in " ".join(command):
            args.append(ident)
        proc = cli(*args, "--catalog", catalog, "--workspace", "other")
        return proc.returncode, proc.stderr.replace(ident, "ID")

    assert run(parent) == run(unknown)
    assert run(parent)[0] == 4
    # and nothing of the default workspace changed
    assert _one(catalog, "SELECT count(*) FROM sessions WHERE lifecycle <> 'active'") == 0
    assert _one(catalog, "SELECT count(*) FROM session_tags") == 0


def test_tags_filter_list_search_and_reports(cli: CliRunner, catalog: Path) -> None:
    _, parent, child = _parent_with_child(catalog)
    for session in (parent, child):
        proc = cli("sessions", "tag", session, "team/infra", "--catalog", catalog, "--json")
        assert proc.returncode == 0 and json.loads(proc.stdout)["tags"] == ["team/infra"]
    proc = cli("sessions", "tag", parent, "team/infra", "--catalog", catalog)
    assert proc.returncode == 0 and "nothing to do" in proc.stdout
    proc = cli("sessions", "list", "--tag", "team/infra", "--catalog", catalog, "--json")
    assert sorted(s["session_id"] for s in json.loads(proc.stdout)["sessions"]) == sorted(
        [parent, child]
    )
    phrase = _phrase(catalog, parent)
    assert _found(catalog, phrase, tag="team/infra") <= {parent, child}
    assert parent in _found(catalog, phrase, tag="team/infra")
    assert _found(catalog, phrase, tag="other") == set()
    tokens = _one(
        catalog, f"SELECT sum(total_tokens) FROM usage WHERE session_id IN ('{parent}', '{child}')"
    )
    for kind in ("daily", "session", "model", "project"):
        proc = cli("report", kind, "--tag", "team/infra", "--catalog", catalog, "--json")
        doc = json.loads(proc.stdout)
        assert doc["totals"]["total_tokens"] == tokens and doc["filters"]["tag"] == "team/infra"
    # a hidden tagged session leaves the tag's reads too
    cli("sessions", "hide", child, "--catalog", catalog)
    proc = cli("sessions", "list", "--tag", "team/infra", "--catalog", catalog, "--json")
    assert [s["session_id"] for s in json.loads(proc.stdout)["sessions"]] == [parent]
    # untag
    auth = authorize("default", "untag")
    assert show_session(catalog, "default", parent).session.tags == ("team/infra",)
    proc = cli("sessions", "show", parent, "--catalog", catalog, "--json")
    assert json.loads(proc.stdout)["session"]["tags"] == ["team/infra"]
    change = tag_session(catalog, auth, parent, "team/infra")
    assert change.changed and change.tags == ()
    assert not tag_session(catalog, auth, parent, "team/infra").changed


@pytest.mark.parametrize("bad", ["", "two words", "x" * 65, "naïve", "a;b", "tag\n"])
def test_invalid_tags_are_refused(cli: CliRunner, catalog: Path, bad: str) -> None:
    with pytest.raises(ConfigurationError, match="invalid tag"):
        check_tag(bad)
    _, parent, _ = _parent_with_child(catalog)
    for args in (
        ["sessions", "tag", parent, bad],
        ["sessions", "list", "--tag", bad],
        ["search", "loader", "--tag", bad],
        ["report", "daily", "--tag", bad],
    ):
        proc = cli(*args, "--catalog", catalog)
        assert proc.returncode == 2 and "invalid tag" in proc.stderr, args
    assert _one(catalog, "SELECT count(*) FROM session_tags") == 0


def test_valid_tags() -> None:
    for tag in ("ci", "team/infra", "ticket:AB-12", "v1.2", "a_b", "x" * 64):
        assert check_tag(tag) == tag


def test_cursors_refuse_a_changed_lifecycle_filter_or_tag(cli: CliRunner, catalog: Path) -> None:
    first = list_sessions(catalog, "default", limit=2)
    assert first.next_cursor is not None
    with pytest.raises(ConfigurationError, match="include_hidden"):
        list_sessions(catalog, "default", limit=2, cursor=first.next_cursor, include_hidden=True)
    with pytest.raises(ConfigurationError, match="tag"):
        list_sessions(catalog, "default", limit=2, cursor=first.next_cursor, tag="x")
    page = search_page(catalog, "default", "session", limit=2)
    assert page.next_cursor is not None
    for flt in (SearchFilter(include_hidden=True), SearchFilter(tag="x")):
        with pytest.raises(ConfigurationError, match="other filters"):
            search_page(catalog, "default", "session", limit=2, cursor=page.next_cursor, flt=flt)
    proc = cli(
        "sessions", "list", "--catalog", catalog, "--cursor", first.next_cursor, "--include-hidden"
    )
    assert proc.returncode == 2
    # the same filters continue the listing
    tagged = list_sessions(catalog, "default", limit=2, include_hidden=True)
    assert tagged.next_cursor is not None
    more = list_sessions(
        catalog, "default", limit=2, include_hidden=True, cursor=tagged.next_cursor
    )
    assert more.sessions.num_rows == 2


def test_doctor_explains_a_hidden_session(
    cli: CliRunner, catalog: Path, demo_home_catalog: tuple[Path, Path]
) -> None:
    _, parent, _ = _parent_with_child(catalog)
    cli("sessions", "hide", parent, "--catalog", catalog)
    cli("sessions", "tag", parent, "ci", "--catalog", catalog)
    home = demo_home_catalog[0]
    proc = cli("doctor", parent, "--catalog", catalog, "--home", home, "--json")
    message = json.loads(proc.stdout)["message"]
    assert "it is hidden" in message and "sessions restore" in message
    assert "tagged ci" in message


def test_the_library_checks_its_authorization(catalog: Path) -> None:
    with pytest.raises(ValueError, match="hide or restore"):
        change_lifecycle(catalog, authorize("default", "tag"), "anything")
    with pytest.raises(ValueError, match="tag or untag"):
        tag_session(catalog, authorize("default", "hide"), "anything", "x")


def test_a_hidden_session_stays_hidden_when_an_import_adds_to_it(
    cli: CliRunner, tmp_path: Path
) -> None:
    home, catalog = tmp_path / "home", tmp_path / "c.duckdb"
    shutil.copytree(FIXTURES / "claude" / "subagents", home)
    options = ImportOptions(catalog=catalog, workspace="default", home=home, env={})
    assert run_import(options).exit_code == 0
    parent = "5d0c8e1e-0004-4000-8000-000000000001"
    proc = cli("sessions", "hide", parent, "--catalog", catalog, "--json")
    assert json.loads(proc.stdout)["counts"]["sessions"] == 2  # with its subagent
    events = _one(catalog, f"SELECT events FROM sessions WHERE session_id = '{parent}'")
    (transcript,) = home.rglob(f"{parent}.jsonl")
    line = json.loads(transcript.read_text().splitlines()[0])
    line.update(uuid="54000004-0000-4000-8000-000000000009", timestamp="2026-05-04T11:01:00.000Z")
    line["message"]["content"] = "and the writes?"
    with transcript.open("a") as out:
        out.write(json.dumps(line) + "\n")
    assert run_import(options).exit_code == 0
    row = _one(catalog, f"SELECT lifecycle, events FROM sessions WHERE session_id = '{parent}'")
    assert row == ("tombstoned", events + 1)
    assert list_sessions(catalog, "default").sessions.num_rows == 0


def test_a_subagent_imported_after_its_parent_was_hidden_is_hidden_with_it(
    cli: CliRunner, tmp_path: Path
) -> None:
    """Hiding a session hides its subtree, also the sub-agents that arrive later; a
    restore of the parent brings them back with it."""
    home, catalog = tmp_path / "home", tmp_path / "c.duckdb"
    shutil.copytree(FIXTURES / "claude" / "subagents", home)
    parent = "5d0c8e1e-0004-4000-8000-000000000001"
    held = tmp_path / "held"
    (agents,) = home.rglob("subagents")
    agents.rename(held)  # the sub-agent's transcript is written after the first import
    options = ImportOptions(catalog=catalog, workspace="default", home=home, env={})
    assert run_import(options).exit_code == 0
    proc = cli("sessions", "hide", parent, "--catalog", catalog, "--json")
    assert json.loads(proc.stdout)["counts"]["sessions"] == 1
    held.rename(agents)
    assert run_import(options).exit_code == 0
    children = f"SELECT lifecycle FROM sessions WHERE parent_session_id = '{parent}'"
    assert _one(catalog, children) == "tombstoned"
    assert list_sessions(catalog, "default").sessions.num_rows == 0
    proc = cli("sessions", "restore", parent, "--catalog", catalog, "--json")
    assert json.loads(proc.stdout)["counts"]["sessions"] == 2
    assert _one(catalog, children) == "active"


def test_report_limits_leaves_out_the_snapshots_of_hidden_sessions(
    cli: CliRunner, catalog: Path
) -> None:
    """A rate-limit snapshot names the session that wrote it: a hidden session's
    snapshots leave ``report limits`` (an older visible one stands) unless
    ``--include-hidden``."""

    def shown(*flags: str) -> set[str]:
        proc = cli("report", "limits", "--catalog", catalog, "--json", *flags)
        assert proc.returncode == 0, proc.stderr
        return {row["session_id"] for row in json.loads(proc.stdout)["limits"]}

    before = shown()
    assert before, "the demo catalog holds rate-limit snapshots"
    hidden = sorted(before)[0]
    assert cli("sessions", "hide", hidden, "--catalog", catalog).returncode == 0
    assert hidden not in shown()
    assert hidden in shown("--include-hidden")
