"""The authorization context and the audit trail every lifecycle change writes
(:mod:`agentlake.manage`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentlake.errors import ConfigurationError, NotFoundError
from agentlake.load.catalog import open_for_write
from agentlake.manage.audit import audit_page, record
from agentlake.manage.authz import actor_name, authorize
from agentlake.manage.writes import mutation
from tests.conftest import CliRunner


def _catalog(tmp_path: Path) -> Path:
    path = tmp_path / "c.duckdb"
    with open_for_write(path):
        pass  # created and migrated
    return path


def test_the_actor_is_named_or_the_login_user() -> None:
    assert actor_name({"AGENTLAKE_ACTOR": "  ci-bot  "}) == "ci-bot"
    assert actor_name({}) != ""
    auth = authorize("team-a", "hide", env={"AGENTLAKE_ACTOR": "ann"})
    assert (auth.actor, auth.workspace, auth.operation) == ("ann", "team-a", "hide")
    with pytest.raises(ConfigurationError, match="invalid workspace"):
        authorize("../etc", "hide")


def test_a_change_and_its_audit_row_land_together_or_not_at_all(tmp_path: Path) -> None:
    catalog = _catalog(tmp_path)
    auth = authorize("default", "tag", env={"AGENTLAKE_ACTOR": "ann"})
    with mutation(catalog, workspace="default") as con:
        record(con, auth, provider="codex", session_id="s1", counts={"tags": 1}, digest="d1")
    with pytest.raises(RuntimeError), mutation(catalog, workspace="default") as con:
        record(con, auth, session_id="s2")
        raise RuntimeError("the change failed")
    page = audit_page(catalog, authorize("default", "audit"))
    assert [(r.operation, r.actor, r.session_id, r.counts, r.digest) for r in page.rows] == [
        ("tag", "ann", "s1", {"tags": 1}, "d1")
    ]
    with pytest.raises(NotFoundError), mutation(tmp_path / "missing.duckdb", workspace="default"):
        pass
    assert not (tmp_path / "missing.duckdb").exists()


def test_pages_are_newest_first_per_workspace_with_a_bound_cursor(tmp_path: Path) -> None:
    catalog = _catalog(tmp_path)
    with mutation(catalog, workspace="default") as con:
        for i in range(5):
            record(con, authorize("a", "hide" if i % 2 else "tag"), session_id=f"s{i}")
        record(con, authorize("b", "hide"), session_id="other")
    first = audit_page(catalog, authorize("a", "audit"), limit=2)
    assert [r.session_id for r in first.rows] == ["s4", "s3"] and first.next_cursor
    second = audit_page(catalog, authorize("a", "audit"), limit=2, cursor=first.next_cursor)
    third = audit_page(catalog, authorize("a", "audit"), limit=2, cursor=second.next_cursor)
    assert [r.session_id for r in [*second.rows, *third.rows]] == ["s2", "s1", "s0"]
    assert third.next_cursor is None
    hides = audit_page(catalog, authorize("a", "audit"), operation="hide")
    assert [r.session_id for r in hides.rows] == ["s3", "s1"]
    # another workspace sees only its own rows; a cursor does not cross workspaces or filters
    assert [r.session_id for r in audit_page(catalog, authorize("b", "audit")).rows] == ["other"]
    with pytest.raises(ConfigurationError):
        audit_page(catalog, authorize("b", "audit"), limit=2, cursor=first.next_cursor)
    with pytest.raises(ConfigurationError):
        audit_page(catalog, authorize("a", "audit"), operation="hide", cursor=first.next_cursor)


def test_the_audit_command(cli: CliRunner, tmp_path: Path) -> None:
    catalog = _catalog(tmp_path)
    with mutation(catalog, workspace="default") as con:
        record(con, authorize("default", "hide", env={"AGENTLAKE_ACTOR": "ann"}),
               provider="codex", session_id="s1", counts={"events": 3})  # fmt: skip
    proc = cli("audit", "--catalog", catalog, "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["workspace"] == "default" and doc["next_cursor"] is None
    [row] = doc["rows"]
    assert {k: row[k] for k in ("operation", "actor", "session_id", "counts")} == {
        "operation": "hide", "actor": "ann", "session_id": "s1", "counts": {"events": 3}
    }  # fmt: skip
    assert row["at"].endswith("Z")
    human = cli("audit", "--catalog", catalog, env={"COLUMNS": "120"})
    assert human.returncode == 0 and "hide" in human.stdout and "ann" in human.stdout
    empty = cli("audit", "--catalog", catalog, "--workspace", "other")
    assert empty.returncode == 0 and "no audit rows in workspace 'other'" in empty.stdout
