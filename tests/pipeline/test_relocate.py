"""Sources that move and sources bound to a workspace: ``agentlake sources relocate``,
``agentlake sources release`` and the ``SOURCE_NOT_AUTHORIZED`` refusal."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import duckdb
import pytest

from agentlake.extract.providers import by_id
from agentlake.ingest.plan import make_plan
from fixtures.synth import generate_claude_home, generate_demo_home
from tests.conftest import FIXTURES, CliRunner

from .helpers import scalar, snapshot

# What a relocation changes in `sources` (the rest of the catalog stays as it was).
MOVED_COLUMNS = ("path", "device", "inode", "mtime_ns")


def _run(cli: CliRunner, *args: str | Path) -> tuple[int, Any, str]:
    proc = cli(*args, "--json")
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, json.loads(proc.stdout) if proc.stdout.strip() else None, proc.stderr


def _import(cli: CliRunner, home: Path, catalog: Path, workspace: str = "default") -> Any:
    code, receipt, stderr = _run(
        cli, "import", "--home", home, "--catalog", catalog, "--workspace", workspace, "--no-index"
    )
    assert code in (0, 1), stderr
    receipt["exit"] = code
    return receipt


def _sources(catalog: Path, workspace: str = "default") -> dict[str, str]:
    con = duckdb.connect(str(catalog), read_only=True)
    try:
        rows = con.execute(
            "SELECT source_id, path FROM sources WHERE workspace = ?", [workspace]
        ).fetchall()
    finally:
        con.close()
    return {str(sid): str(path) for sid, path in rows}


def _audit(catalog: Path, operation: str) -> list[tuple[str, dict[str, int]]]:
    con = duckdb.connect(str(catalog), read_only=True)
    try:
        rows = con.execute(
            "SELECT workspace, counts FROM audit WHERE operation = ? ORDER BY audit_id",
            [operation],
        ).fetchall()
    finally:
        con.close()
    return [(str(ws), json.loads(counts)) for ws, counts in rows]


def _transcripts(home: Path) -> list[Path]:
    """The main session files of a Claude home (not its subagents' files)."""
    return sorted((home / ".claude" / "projects").glob("*/*.jsonl"))


@pytest.fixture
def claude_home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    generate_claude_home(home, sessions=3, turns_per_session=3)
    return home


# -- relocate ----------------------------------------------------------------------------
def test_a_moved_home_keeps_its_sources_and_the_next_import_reads_nothing(
    cli: CliRunner, tmp_path: Path, catalog: Path
) -> None:
    """Every position kind (JSONL byte offsets, a Gemini document, Cursor's SQLite
    stores), copied to another place with their times kept (new inodes) and the old
    copy removed, as a move across file systems does."""
    old, new = tmp_path / "old-home", tmp_path / "new-home"
    generate_demo_home(old)
    first = _import(cli, old, catalog)
    assert first["exit"] == 0
    before_ids = _sources(catalog)
    before = snapshot(catalog, exclude=MOVED_COLUMNS)
    shutil.copytree(old, new, symlinks=True)  # copy2: times kept, new inodes
    shutil.rmtree(old)

    code, dry, stderr = _run(
        cli, "sources", "relocate", old, new, "--dry-run", "--catalog", catalog
    )
    assert code == 0, stderr
    assert dry["dry_run"] and dry["sources_moved"] == 0 and len(dry["moves"]) == len(before_ids)
    assert {m["position_kind"] for m in dry["moves"]} == {"byte-offset", "document", "sqlite"}
    assert _sources(catalog) == before_ids  # a dry run changes nothing
    assert _audit(catalog, "relocate") == []

    # A document whose content differs, a database that is neither the same file nor a
    # copy with the same size and time: each refuses the relocation.
    by_kind = {m["position_kind"]: Path(m["new_path"]) for m in dry["moves"]}
    for kind, why in (("document", "content differs"), ("sqlite", "neither the same file")):
        path = by_kind[kind]
        saved, st = path.read_bytes(), path.stat()
        if kind == "document":
            path.write_bytes(saved.replace(b'"', b"'", 1))
        else:
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
        proc = cli("sources", "relocate", old, new, "--catalog", catalog)
        assert proc.returncode == 2 and why in proc.stderr, proc.stderr
        assert str(path) in " ".join(proc.stderr.split())
        path.write_bytes(saved)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert _sources(catalog) == before_ids

    code, moved, stderr = _run(cli, "sources", "relocate", old, new, "--catalog", catalog)
    assert code == 0, stderr
    assert moved["sources_moved"] == len(before_ids)
    after_ids = _sources(catalog)
    assert after_ids.keys() == before_ids.keys()  # the same ids
    assert all(
        after_ids[sid] == str(new) + path[len(str(old)) :] for sid, path in before_ids.items()
    )
    assert _audit(catalog, "relocate") == [("default", {"sources": len(before_ids)})]

    again = _import(cli, new, catalog)
    totals = again["totals"]
    assert again["exit"] == 0
    assert (totals["bytes"], totals["sources_opened"], totals["sources_imported"]) == (0, 0, 0)
    assert totals["sources_unchanged"] == len(before_ids)
    assert snapshot(catalog, exclude=MOVED_COLUMNS) == before


def test_a_modified_file_refuses_the_whole_relocation(
    cli: CliRunner, claude_home: Path, tmp_path: Path, catalog: Path
) -> None:
    assert _import(cli, claude_home, catalog)["exit"] == 0
    before = snapshot(catalog, ("sources",))
    new = tmp_path / "moved"
    shutil.move(claude_home, new)
    changed = _transcripts(new)[1]
    data = bytearray(changed.read_bytes())
    data[10] = ord("X") if data[10] != ord("X") else ord("Y")  # same size, other bytes
    changed.write_bytes(bytes(data))
    proc = cli("sources", "relocate", claude_home, new, "--catalog", catalog)
    assert proc.returncode == 2
    assert f"error: {changed}: its bytes before offset" in " ".join(proc.stderr.split())
    assert "nothing was relocated" in proc.stderr
    assert snapshot(catalog, ("sources",)) == before
    assert _audit(catalog, "relocate") == []
    # a file missing at NEW refuses it as well
    changed.unlink()
    proc = cli("sources", "relocate", claude_home, new, "--catalog", catalog, "--dry-run")
    assert proc.returncode == 2 and "no such file" in proc.stderr
    assert snapshot(catalog, ("sources",)) == before


def test_a_single_file_moves_and_what_was_appended_there_is_read(
    cli: CliRunner, claude_home: Path, catalog: Path
) -> None:
    assert _import(cli, claude_home, catalog)["exit"] == 0
    ids = _sources(catalog)
    old = _transcripts(claude_home)[0]
    target_dir = claude_home / ".claude" / "projects" / "-home-dev-moved-project"
    target_dir.mkdir()
    new = target_dir / old.name
    shutil.move(old, new)
    # the agent went on writing at the new place: one more complete line
    with new.open("ab") as fh:
        fh.write(new.read_bytes().splitlines(keepends=True)[-1])
    code, moved, stderr = _run(cli, "sources", "relocate", old, new, "--catalog", catalog)
    assert code == 0, stderr
    assert [(m["old_path"], m["new_path"]) for m in moved["moves"]] == [(str(old), str(new))]
    receipt = _import(cli, claude_home, catalog)
    by_path = {s["path"]: s for s in receipt["sources"]}
    assert by_path[str(new)]["continuity"] == "validated-append"
    assert receipt["totals"]["bytes"] == by_path[str(new)]["bytes"] > 0
    assert receipt["totals"]["sources_imported"] == 1
    assert _sources(catalog).keys() == ids.keys()


def test_a_new_file_where_a_relocated_one_was_is_a_new_source(
    cli: CliRunner, claude_home: Path, catalog: Path
) -> None:
    assert _import(cli, claude_home, catalog)["exit"] == 0
    first, second = _transcripts(claude_home)[:2]
    elsewhere = first.with_name("relocated.jsonl")
    shutil.move(first, elsewhere)
    assert cli("sources", "relocate", first, elsewhere, "--catalog", catalog).returncode == 0
    shutil.copy(second, first)  # another file at the relocated one's old path
    receipt = _import(cli, claude_home, catalog)
    by_path = {s["path"]: s for s in receipt["sources"]}
    assert by_path[str(first)]["continuity"] == "new"
    assert by_path[str(elsewhere)]["continuity"] == "unchanged"
    paths = _sources(catalog)
    assert len(paths) == len(set(paths.values())) == len(receipt["sources"])
    again = _import(cli, claude_home, catalog)  # and its id is found again next time
    assert again["totals"]["sources_unchanged"] == len(paths) and again["totals"]["bytes"] == 0


def test_a_relocation_onto_sources_already_imported_is_refused(
    cli: CliRunner, claude_home: Path, tmp_path: Path, catalog: Path
) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(claude_home, copy)
    assert _import(cli, claude_home, catalog)["exit"] == 0
    assert _import(cli, copy, catalog)["exit"] == 0  # the copy is sources of its own
    proc = cli("sources", "relocate", claude_home, copy, "--catalog", catalog)
    assert proc.returncode == 2 and "already imported as a source of its own" in proc.stderr


def test_another_workspace_cannot_relocate_or_release_what_it_does_not_hold(
    cli: CliRunner, claude_home: Path, tmp_path: Path, catalog: Path
) -> None:
    assert _import(cli, claude_home, catalog)["exit"] == 0
    new = tmp_path / "moved"
    shutil.move(claude_home, new)
    unknown = tmp_path / "never-imported"
    for args in (("relocate", claude_home, new), ("release", claude_home)):
        held = cli("sources", *args, "--catalog", catalog, "--workspace", "other")
        nowhere = cli(
            "sources", args[0], unknown, *args[2:], "--catalog", catalog, "--workspace", "other"
        )
        assert held.returncode == nowhere.returncode == 4
        assert held.stderr.replace(str(claude_home), str(unknown)) == nowhere.stderr
        assert "no source of workspace 'other' is at or under" in held.stderr
    assert _audit(catalog, "relocate") == _audit(catalog, "release") == []
    assert cli("sources", "relocate", claude_home, new, "--catalog", catalog).returncode == 0


# -- workspace bindings ------------------------------------------------------------------
def test_a_source_of_another_workspace_is_refused_before_reading(
    cli: CliRunner, claude_home: Path, tmp_path: Path, catalog: Path
) -> None:
    """The same home imported into two workspaces: colliding source, session, event and
    call ids. The second workspace refuses the first one's sources and imports its own."""
    first = _import(cli, claude_home, catalog, "a")
    assert first["exit"] == 0
    bound = {s["path"] for s in first["sources"]}
    extra = tmp_path / "extra"
    generate_claude_home(extra, sessions=1, turns_per_session=2, seed=11)
    added = _transcripts(extra)[0]
    target = claude_home / ".claude" / "projects" / added.parent.name / added.name
    target.parent.mkdir(exist_ok=True)
    shutil.copy(added, target)

    proc = cli("import", "--home", claude_home, "--catalog", catalog, "--workspace", "b", "--json")
    assert proc.returncode == 1
    receipt = json.loads(proc.stdout)
    by_path = {s["path"]: s for s in receipt["sources"]}
    assert {p for p, s in by_path.items() if s["status"] == "refused"} == bound
    assert all(by_path[p]["continuity"] == "unauthorized" for p in bound)
    assert "bound to workspace 'a'" in by_path[sorted(bound)[0]]["message"]
    assert by_path[str(target)]["status"] == "imported"
    assert receipt["totals"]["sources_opened"] == 1
    assert receipt["totals"]["bytes"] == target.stat().st_size
    assert f"refused: SOURCE_NOT_AUTHORIZED: {sorted(bound)[0]}: bound to workspace 'a'" in (
        " ".join(cli("import", "--home", claude_home, "--catalog", catalog, "--workspace", "c")
                 .stderr.split())
    )  # fmt: skip
    # b holds no row of a's sources, and a's rows are as they were
    assert set(_sources(catalog, "b").values()) == {str(target)}
    assert (
        scalar(
            catalog,
            "SELECT count(DISTINCT session_id) FROM events WHERE workspace = 'b'",
        )
        == 1
    )
    # a refuses the file b imported first, and reads nothing of its own again
    again = _import(cli, claude_home, catalog, "a")
    refused = [s for s in again["sources"] if s["status"] == "refused"]
    assert [s["path"] for s in refused] == [str(target)]
    assert "bound to workspace 'b'" in refused[0]["message"]
    assert again["totals"]["bytes"] == 0

    # doctor says in words why a session of a's files is not in b
    session = scalar(catalog, "SELECT session_id FROM sessions WHERE workspace = 'a' LIMIT 1")
    code, diag, _ = _run(
        cli, "doctor", session, "--home", claude_home, "--catalog", catalog, "--workspace", "b"
    )
    assert code == 4
    (why,) = [c for c in diag["candidates"] if c["state"] == "refused"][:1]
    assert "SOURCE_NOT_AUTHORIZED" in why["reason"] and "bound to workspace 'a'" in why["reason"]
    assert "release" in why["remedy"]
    code, report, _ = _run(
        cli, "doctor", "--home", claude_home, "--catalog", catalog, "--workspace", "b"
    )
    reasons = {r["code"] for r in report["refused"]}
    assert reasons == {"SOURCE_NOT_AUTHORIZED"}


def test_released_sources_may_be_imported_by_another_workspace(
    cli: CliRunner, claude_home: Path, catalog: Path
) -> None:
    held = len(_import(cli, claude_home, catalog, "a")["sources"])
    events_a = scalar(catalog, "SELECT count(*) FROM events WHERE workspace = 'a'")
    assert _import(cli, claude_home, catalog, "b")["exit"] == 1

    code, dry, stderr = _run(
        cli, "sources", "release", claude_home, "--dry-run", "--catalog", catalog,
        "--workspace", "a",
    )  # fmt: skip
    assert code == 0, stderr
    assert dry["sources_released"] == 0 and len(dry["sources"]) == held
    code, done, stderr = _run(
        cli, "sources", "release", claude_home, "--catalog", catalog, "--workspace", "a"
    )
    assert code == 0, stderr
    assert done["sources_released"] == held
    assert _audit(catalog, "release") == [("a", {"sources": held})]
    code, twice, _ = _run(
        cli, "sources", "release", claude_home, "--catalog", catalog, "--workspace", "a"
    )
    assert code == 0 and twice["sources_released"] == 0 and twice["already_released"] == held
    assert len(_audit(catalog, "release")) == 1  # nothing changed: no audit row

    b = _import(cli, claude_home, catalog, "b")
    assert b["exit"] == 0 and b["totals"]["sources_imported"] == held
    assert scalar(catalog, "SELECT count(*) FROM events WHERE workspace = 'b'") == events_a
    # a keeps what it imported, and from now on refuses what b holds
    a = _import(cli, claude_home, catalog, "a")
    assert a["exit"] == 1 and a["totals"]["sources_failed"] == held and a["totals"]["bytes"] == 0
    assert all("bound to workspace 'b'" in s["message"] for s in a["sources"])
    assert scalar(catalog, "SELECT count(*) FROM events WHERE workspace = 'a'") == events_a
    # human output
    human = cli("sources", "release", claude_home, "--catalog", catalog, "--workspace", "b")
    assert human.returncode == 0
    assert (
        f"{held} sources at" in human.stdout and "another workspace may import them" in human.stdout
    )


class _Bound:
    """Bindings where every path is held by workspace ``owner`` except ``free`` ones."""

    def __init__(self, owner: str, free: frozenset[str] = frozenset()) -> None:
        self.owner, self.free = owner, free
        self.asked: list[Sequence[tuple[str, str]]] = []

    def released(self) -> frozenset[str]:
        return frozenset()

    def owners(self, keys: Sequence[tuple[str, str]]) -> Mapping[tuple[str, str], str]:
        self.asked.append(keys)
        return {k: self.owner for k in keys if k[1] not in self.free}


def test_the_plan_refuses_bound_sources_with_one_lookup(claude_home: Path) -> None:
    spec = by_id("claude-code")
    free = str(_transcripts(claude_home)[0])
    bindings = _Bound("elsewhere", frozenset({free}))
    plan = make_plan(
        {}, workspace="here", home=claude_home, env={}, providers=[spec], bindings=bindings
    )
    assert len(bindings.asked) == 1 and len(bindings.asked[0]) == len(plan.sources)
    by_path = {str(s.path): s for s in plan.sources}
    assert (by_path[free].action, by_path[free].continuity) == ("read", "new")
    refused = [s for s in plan.sources if str(s.path) != free]
    assert refused and all(
        (s.action, s.code, s.pending_bytes, s.checkpoint)
        == ("refuse", "SOURCE_NOT_AUTHORIZED", 0, None)
        for s in refused
    )
    assert "bound to workspace 'elsewhere'" in (refused[0].message or "")
    # without a catalog (no bindings) nothing is looked up
    alone = make_plan({}, workspace="here", home=claude_home, env={}, providers=[spec])
    assert {s.action for s in alone.sources} == {"read"}


def test_a_named_file_is_bound_like_a_discovered_one(
    cli: CliRunner, tmp_path: Path, catalog: Path
) -> None:
    named = tmp_path / "export.jsonl"
    shutil.copy(FIXTURES / "generic" / "all_record_shapes" / "laptop-export.jsonl", named)
    args = ("import", "--file", named, "--catalog", catalog, "--no-index", "--json")
    assert cli(*args, "--workspace", "a").returncode == 0
    proc = cli(*args, "--workspace", "b")
    assert proc.returncode == 1
    (source,) = json.loads(proc.stdout)["sources"]
    assert source["status"] == "refused" and "bound to workspace 'a'" in source["message"]


def test_a_relocation_onto_another_workspaces_sources_is_refused(
    cli: CliRunner, claude_home: Path, tmp_path: Path, catalog: Path
) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(claude_home, copy)
    assert _import(cli, claude_home, catalog, "a")["exit"] == 0
    assert _import(cli, copy, catalog, "b")["exit"] == 0
    before = snapshot(catalog, ("sources",))
    proc = cli("sources", "relocate", copy, claude_home, "--catalog", catalog, "--workspace", "b")
    assert proc.returncode == 2 and "bound to workspace 'a'" in proc.stderr
    assert snapshot(catalog, ("sources",)) == before
