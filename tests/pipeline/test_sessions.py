"""Session listing (order, filters, stable keyset cursors) and bounded session detail."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import orjson
import pyarrow as pa
import pytest

import agentlake
from agentlake.errors import ConfigurationError, NotFoundError
from agentlake.ingest.run import ImportOptions, run_import
from agentlake.read import cursors
from agentlake.read.sessions import (
    LISTED_COLUMNS,
    TIMELINE_COLUMNS,
    BucketCut,
    SessionDetail,
    SessionPage,
    TimelineBounds,
    TimelineStream,
    list_sessions,
    show_session,
)
from fixtures.synth import encode_cwd
from tests.conftest import CliRunner

T0 = datetime(2026, 4, 1, 9, 0, tzinfo=UTC)
MODEL = "claude-sonnet-4-5-20250929"


# -- synthetic Claude Code transcripts ---------------------------------------------------
@dataclass(frozen=True)
class Turn:
    """One exchange: a prompt, a response, optionally one tool call and its result."""

    prompt: str
    response: str = "done"
    tool_input: dict[str, Any] | None = None
    tool_output: str | None = None


def sid(prefix: str, n: int) -> str:
    """A session id starting with ``prefix`` (hex digits)."""
    return f"{prefix}{n:0{8 - len(prefix)}x}-0000-4000-8000-{n:012d}"


def write_session(
    home: Path,
    session_id: str,
    turns: list[Turn],
    *,
    start: datetime = T0,
    cwd: str = "/home/dev/webshop",
    title: str | None = None,
    step: timedelta = timedelta(seconds=10),
) -> datetime:
    """Append ``turns`` to the session's transcript (creating it); returns the last time."""
    path = home / ".claude" / "projects" / encode_cwd(cwd) / f"{session_id}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    seen = sum(1 for _ in path.open()) if path.exists() else 0
    lines: list[dict[str, Any]] = []
    at = start

    def stamp(offset: int) -> str:
        return (at + timedelta(seconds=offset)).strftime("%Y-%m-%dT%H:%M:%S.000Z")

    def base(kind: str, offset: int) -> dict[str, Any]:
        n = seen + len(lines)
        return {
            "type": kind,
            "sessionId": session_id,
            "uuid": f"{session_id[:8]}-u{n:06d}",
            "timestamp": stamp(offset),
            "cwd": cwd,
            "version": "2.1.40",
            "gitBranch": "main",
            "isSidechain": False,
            "userType": "external",
        }

    def assistant(offset: int, blocks: list[dict[str, Any]]) -> dict[str, Any]:
        n = seen + len(lines)
        msg_id = f"msg_{session_id[:8]}{n:06d}"
        usage = {"input_tokens": 10, "cache_creation_input_tokens": 0,
                 "cache_read_input_tokens": 0, "output_tokens": 5}  # fmt: skip
        return {
            **base("assistant", offset),
            "requestId": f"req_{session_id[:8]}{n:06d}",
            "message": {"id": msg_id, "model": MODEL, "role": "assistant", "type": "message",
                        "content": blocks, "usage": usage},
        }  # fmt: skip

    if title is not None and seen == 0:
        lines.append({"type": "ai-title", "aiTitle": title, "sessionId": session_id})
    for turn in turns:
        lines.append({**base("user", 0), "message": {"role": "user", "content": turn.prompt}})
        lines.append(assistant(1, [{"type": "text", "text": turn.response}]))
        if turn.tool_input is not None:
            call_id = f"toolu_{session_id[:8]}{seen + len(lines):06d}"
            block = {"type": "tool_use", "id": call_id, "name": "Bash", "input": turn.tool_input}
            lines.append(assistant(2, [block]))
            result = {"type": "tool_result", "tool_use_id": call_id,
                      "content": turn.tool_output or ""}  # fmt: skip
            lines.append({**base("user", 3), "message": {"role": "user", "content": [result]}})
        at += step
    with path.open("ab") as fh:
        for line in lines:
            fh.write(orjson.dumps(line) + b"\n")
    return at - step + timedelta(seconds=3)


def do_import(home: Path, catalog: Path, workspace: str = "default") -> None:
    result = run_import(ImportOptions(catalog=catalog, workspace=workspace, home=home, env={}))
    assert not result.refused


def all_pages(catalog: Path, workspace: str = "default", **filters: Any) -> list[str]:
    """Session ids of every page of a listing."""
    ids: list[str] = []
    cursor = None
    while True:
        page = list_sessions(catalog, workspace, cursor=cursor, **filters)
        ids += page.sessions.column("session_id").to_pylist()
        if page.next_cursor is None:
            return ids
        cursor = page.next_cursor


def ids(page: SessionPage) -> list[str]:
    return [str(v) for v in page.sessions.column("session_id").to_pylist()]


# -- fixtures ----------------------------------------------------------------------------
@pytest.fixture
def demo(demo_home_catalog: tuple[Path, Path]) -> Path:
    """The four-provider demo home imported into a catalog (read-only for tests)."""
    return demo_home_catalog[1]


@pytest.fixture
def small(tmp_path: Path) -> tuple[Path, Path]:
    """A home of six synthetic sessions (two sharing an update time) and its catalog."""
    home = tmp_path / "home"
    write_session(home, sid("aaaa1", 1), [Turn("fix the Cache bug")], start=T0, title="Cache fix")
    write_session(home, sid("aaaa2", 2), [Turn("write docs")], start=T0 + timedelta(hours=1))
    write_session(home, sid("bbbb", 3), [Turn("tidy up")], start=T0 + timedelta(hours=1))
    write_session(
        home, sid("cccc", 4), [Turn("speed up the loader")], start=T0 + timedelta(days=2),
        cwd="/home/dev/api-gateway",
    )  # fmt: skip
    write_session(home, sid("dddd", 5), [Turn("rename a flag")], start=T0 + timedelta(days=3))
    write_session(
        home, sid("eeee", 6), [Turn("add logging")], start=T0 + timedelta(days=4),
        cwd="/home/dev/notes-cli", title="Structured LOGGING",
    )  # fmt: skip
    catalog = tmp_path / "c.duckdb"
    do_import(home, catalog)
    return home, catalog


# -- ordering, filters, limits -----------------------------------------------------------
def test_newest_first_with_ties_broken_by_provider_then_id(demo: Path) -> None:
    listed = list_sessions(demo, "default", limit=500).sessions
    con = duckdb.connect(str(demo), read_only=True)
    expected = [
        r[0]
        for r in con.execute(
            "SELECT session_id FROM sessions WHERE workspace = 'default' "
            "ORDER BY updated_at DESC NULLS LAST, provider, session_id"
        ).fetchall()
    ]
    con.close()
    assert listed.column("session_id").to_pylist() == expected
    assert {r["provider"] for r in listed.to_pylist()} == {
        "claude-code", "codex", "gemini-cli", "cursor",
    }  # fmt: skip
    assert listed.column_names == list(LISTED_COLUMNS)


def test_equal_update_times_are_ordered_by_session_id(small: tuple[Path, Path]) -> None:
    _, catalog = small
    order = ids(list_sessions(catalog, "default"))
    # aaaa2… and bbbb… end at the same instant: ascending id breaks the tie.
    assert order == [sid("eeee", 6), sid("dddd", 5), sid("cccc", 4), sid("aaaa2", 2),
                     sid("bbbb", 3), sid("aaaa1", 1)]  # fmt: skip


def test_provider_filter_accepts_ids_and_aliases(demo: Path) -> None:
    for name, canonical in (
        ("claude", "claude-code"),
        ("gemini", "gemini-cli"),
        ("codex", "codex"),
    ):
        rows = list_sessions(demo, "default", provider=name, limit=500).sessions.to_pylist()
        assert rows and {r["provider"] for r in rows} == {canonical}
    both = list_sessions(demo, "default", provider=["cursor", "codex"], limit=500).sessions
    assert set(both.column("provider").to_pylist()) == {"cursor", "codex"}
    with pytest.raises(ConfigurationError, match="unknown provider 'nope'"):
        list_sessions(demo, "default", provider="nope")


def test_project_filter_is_a_substring_of_the_path(small: tuple[Path, Path]) -> None:
    _, catalog = small
    assert ids(list_sessions(catalog, "default", project="api-gate")) == [sid("cccc", 4)]
    assert ids(list_sessions(catalog, "default", project="/home/dev/notes")) == [sid("eeee", 6)]
    assert ids(list_sessions(catalog, "default", project="no-such-project")) == []


def test_since_and_max_age_filter_on_the_update_time(small: tuple[Path, Path]) -> None:
    _, catalog = small
    newest_three = [sid("eeee", 6), sid("dddd", 5), sid("cccc", 4)]
    assert ids(list_sessions(catalog, "default", since=date(2026, 4, 3))) == newest_three
    assert ids(list_sessions(catalog, "default", since=datetime(2026, 4, 5, 9, 0))) == [
        sid("eeee", 6)
    ]
    now = T0 + timedelta(days=5, hours=1)  # 3d before: after cccc… ended, before dddd…
    assert ids(list_sessions(catalog, "default", max_age="3d", now=now)) == newest_three[:2]
    assert ids(list_sessions(catalog, "default", max_age=timedelta(hours=12), now=now)) == []
    with pytest.raises(ConfigurationError, match="--max-age must be"):
        list_sessions(catalog, "default", max_age="7 days")
    with pytest.raises(ConfigurationError, match="not both"):
        list_sessions(catalog, "default", max_age="7d", since=date(2026, 4, 1))


def test_text_filter_matches_title_or_first_prompt_ignoring_case(small: tuple[Path, Path]) -> None:
    _, catalog = small
    # "cache" is in a title (Cache fix) and in that session's first prompt (Cache bug).
    assert ids(list_sessions(catalog, "default", text="CACHE")) == [sid("aaaa1", 1)]
    assert ids(list_sessions(catalog, "default", text="logging")) == [sid("eeee", 6)]  # title
    assert ids(list_sessions(catalog, "default", text="LOADER")) == [sid("cccc", 4)]  # prompt
    assert ids(list_sessions(catalog, "default", text="100%_")) == []  # literal, not a pattern


def test_limit_is_between_1_and_500(demo: Path) -> None:
    assert list_sessions(demo, "default", limit=1).sessions.num_rows == 1
    assert list_sessions(demo, "default").sessions.num_rows == 25
    assert list_sessions(demo, "default", limit=500).next_cursor is None
    for bad in (0, 501):
        with pytest.raises(ConfigurationError, match="--limit must be between 1 and 500"):
            list_sessions(demo, "default", limit=bad)


# -- pagination --------------------------------------------------------------------------
@pytest.mark.parametrize(
    "filters",
    [{}, {"provider": "claude"}, {"text": "the"}, {"since": date(2026, 5, 1)}, {"project": "web"}],
)
def test_paging_through_every_page_equals_one_big_listing(
    demo: Path, filters: dict[str, Any]
) -> None:
    whole = ids(list_sessions(demo, "default", limit=500, **filters))
    assert whole, filters
    for size in (1, 3, 7):
        assert all_pages(demo, limit=size, **filters) == whole


def test_pages_stay_stable_while_an_import_adds_and_appends(tmp_path: Path) -> None:
    home, catalog = tmp_path / "home", tmp_path / "c.duckdb"
    sessions = [sid("a0", n) for n in range(10)]
    for n, session in enumerate(sessions):
        write_session(home, session, [Turn(f"task {n}")], start=T0 + timedelta(hours=n))
    do_import(home, catalog)
    before = ids(list_sessions(catalog, "default", limit=500))
    assert before == sessions[::-1]

    first = list_sessions(catalog, "default", limit=3)
    assert ids(first) == before[:3]
    # Between pages an import appends to a session already shown (a09…), to one not shown
    # yet (a02…, which becomes the newest of all), and adds brand-new sessions.
    later = T0 + timedelta(days=30)
    write_session(home, sessions[9], [Turn("more on 9")], start=later)
    write_session(home, sessions[2], [Turn("more on 2")], start=later + timedelta(hours=1))
    for n in range(3):
        write_session(home, sid("b0", n), [Turn(f"new {n}")], start=later + timedelta(hours=2 + n))
    do_import(home, catalog)

    seen, cursor, pages = ids(first), first.next_cursor, []
    while cursor:
        page = list_sessions(catalog, "default", limit=3, cursor=cursor)
        assert page.snapshot == first.snapshot
        pages.append(page)
        seen += ids(page)
        cursor = page.next_cursor
    assert seen == before  # nothing skipped, nothing repeated, nothing new
    # The appended session a02… is shown with its values as of the first page.
    shown = {r["session_id"]: r for p in pages for r in p.sessions.to_pylist()}
    assert shown[sessions[2]]["events"] == 2 and shown[sessions[2]]["prompts"] == 1
    assert shown[sessions[2]]["updated_at"] < later

    fresh = list_sessions(catalog, "default", limit=500)
    assert fresh.snapshot > first.snapshot
    assert ids(fresh)[:5] == [sid("b0", 2), sid("b0", 1), sid("b0", 0), sessions[2], sessions[9]]
    row = fresh.sessions.to_pylist()[3]
    assert row["events"] == 4 and row["prompts"] == 2 and row["total_tokens"] == 30


def test_pages_stay_stable_when_an_import_rereads_a_session_whole(tmp_path: Path) -> None:
    """A source re-read from byte 0 (a new generation) withdraws and recomputes its
    session, which may move it back in time; pages of the old snapshot do not notice."""
    home, catalog = tmp_path / "home", tmp_path / "c.duckdb"
    sessions = [sid("c0", n) for n in range(6)]
    for n, session in enumerate(sessions):
        turns = [Turn(f"task {n}.{k}") for k in range(3)]
        write_session(home, session, turns, start=T0 + timedelta(hours=n), step=timedelta(hours=2))
    do_import(home, catalog)
    before = ids(list_sessions(catalog, "default", limit=500))
    first = list_sessions(catalog, "default", limit=2)
    # The newest session's transcript shrinks to its first turn: refused as truncated,
    # then re-read whole with restart_drifted, which makes it the oldest session.
    newest = home / ".claude" / "projects" / encode_cwd("/home/dev/webshop") / f"{before[0]}.jsonl"
    newest.write_text("")
    write_session(home, before[0], [Turn("only this")], start=T0 - timedelta(days=1))
    result = run_import(
        ImportOptions(catalog=catalog, workspace="default", home=home, env={}, restart_drifted=True)
    )
    assert not result.refused
    con = duckdb.connect(str(catalog), read_only=True)
    archived = con.execute(
        "SELECT count(*), min(superseded_by) FROM session_versions WHERE session_id = ?",
        [before[0]],
    ).fetchone()
    con.close()
    assert archived == (1, result.import_id)  # the version the listing of import 1 shows
    fresh = ids(list_sessions(catalog, "default", limit=500))
    assert fresh[-1] == before[0] and fresh[:-1] == before[1:]
    seen, cursor = ids(first), first.next_cursor
    while cursor:
        page = list_sessions(catalog, "default", limit=2, cursor=cursor)
        seen += ids(page)
        cursor = page.next_cursor
    assert seen == before


def test_token_totals_follow_the_deduplicated_calls(demo: Path) -> None:
    con = duckdb.connect(str(demo), read_only=True)
    wrong = con.execute(
        "SELECT count(*) FROM sessions s WHERE s.total_tokens <> coalesce((SELECT sum(u.total_tokens) "
        "FROM usage u WHERE u.workspace = s.workspace AND u.provider = s.provider "
        "AND u.session_id = s.session_id), 0)"
    ).fetchone()
    con.close()
    assert wrong == (0,)


# -- cursor refusals ---------------------------------------------------------------------
def test_cursor_refused_in_another_workspace_catalog_or_with_other_filters(
    small: tuple[Path, Path], tmp_path: Path
) -> None:
    home, catalog = small
    # the same sessions in workspace "other", from a copy of the home (a source is bound
    # to the workspace that first imported it)
    other_home = tmp_path / "other-home"
    shutil.copytree(home, other_home, symlinks=True)
    do_import(other_home, catalog, workspace="other")
    cursor = list_sessions(catalog, "default", limit=2, provider="claude").next_cursor
    assert cursor is not None
    with pytest.raises(ConfigurationError, match='issued for workspace "default", not "other"'):
        list_sessions(catalog, "other", limit=2, provider="claude", cursor=cursor)
    with pytest.raises(ConfigurationError, match="issued with other filters: providers"):
        list_sessions(catalog, "default", limit=2, cursor=cursor)
    with pytest.raises(ConfigurationError, match='text unset \\(now "x"\\)'):
        list_sessions(catalog, "default", provider="claude", text="x", cursor=cursor)
    # The same listing on another catalog: its secret differs.
    copy = tmp_path / "copy.duckdb"
    do_import(home, copy)
    with pytest.raises(ConfigurationError, match="altered or issued by another catalog"):
        list_sessions(copy, "default", limit=2, provider="claude", cursor=cursor)
    # The limit may change from page to page.
    assert list_sessions(catalog, "default", limit=4, provider="claude", cursor=cursor)


def test_altered_or_garbage_cursor_is_refused(small: tuple[Path, Path]) -> None:
    _, catalog = small
    cursor = list_sessions(catalog, "default", limit=2).next_cursor
    assert cursor is not None
    version, body, mac = cursor.split(".")
    payload = json.loads(cursors._unb64(body))
    payload["snapshot"] += 1  # pretend to read a later snapshot
    forged = f"{version}.{cursors._b64(orjson.dumps(payload, option=orjson.OPT_SORT_KEYS))}.{mac}"
    for bad in (forged, cursor[:-2] + ("AA" if cursor[-2:] != "AA" else "BB")):
        with pytest.raises(ConfigurationError, match="signature mismatch"):
            list_sessions(catalog, "default", limit=2, cursor=bad)
    for garbage in ("abc", "v2.x.y", "v1.!!.??", "v1..", ""):
        if garbage:
            with pytest.raises(ConfigurationError, match="not a cursor agentlake issued"):
                list_sessions(catalog, "default", cursor=garbage)


def test_cursor_module_round_trip_and_expectations() -> None:
    token = cursors.encode({"kind": "search", "workspace": "w", "after": [1, "x"]}, "secret")
    assert cursors.decode(token, "secret", expect={"kind": "search"})["after"] == [1, "x"]
    with pytest.raises(ConfigurationError, match='issued for kind "search", not "sessions"'):
        cursors.decode(token, "secret", expect={"kind": "sessions"})
    with pytest.raises(ConfigurationError, match="has no 'filters'"):
        cursors.decode(token, "secret", expect={"filters": {}})
    with pytest.raises(ConfigurationError, match="signature mismatch"):
        cursors.decode(token, b"other", expect={})


# -- prefix resolution -------------------------------------------------------------------
def test_show_resolves_an_id_or_a_unique_prefix(small: tuple[Path, Path]) -> None:
    _, catalog = small
    full = sid("cccc", 4)
    assert show_session(catalog, "default", full).session.session_id == full
    assert show_session(catalog, "default", "cccc").session.session_id == full
    assert show_session(catalog, "default", "aaaa1").session.session_id == sid("aaaa1", 1)


def test_ambiguous_short_and_unknown_prefixes(small: tuple[Path, Path]) -> None:
    home, catalog = small
    with pytest.raises(ConfigurationError, match="'aaaa' is ambiguous: it matches aaaa1") as exc:
        show_session(catalog, "default", "aaaa")
    assert sid("aaaa2", 2) in exc.value.message and "give more characters" in exc.value.message
    with pytest.raises(ConfigurationError, match="too short; give at least 4"):
        show_session(catalog, "default", "ccc")
    with pytest.raises(NotFoundError, match="no session 'ffff' in workspace 'default'"):
        show_session(catalog, "default", "ffff")
    # Another workspace's session is exactly as unknown as an id that exists nowhere.
    other = home.parent / "other-home"
    write_session(other, sid("9999", 9), [Turn("elsewhere")])
    do_import(other, catalog, workspace="elsewhere")
    assert show_session(catalog, "elsewhere", "9999").session.session_id == sid("9999", 9)
    with pytest.raises(NotFoundError, match="no session '9999' in workspace 'default'"):
        show_session(catalog, "default", "9999")
    with pytest.raises(NotFoundError, match=f"no session '{sid('9999', 9)}' in workspace"):
        show_session(catalog, "default", sid("9999", 9))


# -- bounded detail ----------------------------------------------------------------------
@pytest.fixture
def long_session(tmp_path: Path) -> tuple[Path, str]:
    """One session of 6 turns (prompt, response, tool call, tool result), 100-byte texts."""
    home, catalog = tmp_path / "home", tmp_path / "c.duckdb"
    session = sid("1234", 1)
    turns = [
        Turn(
            prompt=f"p{n}" + "p" * 98,
            response=f"r{n}" + "r" * 98,
            tool_input={"command": f"c{n}" + "c" * 80},
            tool_output=f"o{n}" + "o" * 98,
        )
        for n in range(6)
    ]
    write_session(home, session, turns, title="long one")
    do_import(home, catalog)
    return catalog, session


def rows_of(detail: SessionDetail) -> list[dict[str, Any]]:
    """The bounded timeline's events as dicts."""
    assert isinstance(detail.timeline, pa.Table)
    rows: list[dict[str, Any]] = detail.timeline.to_pylist()
    return rows


def kinds_and_heads(table: pa.Table | TimelineStream) -> list[tuple[str, str]]:
    assert isinstance(table, pa.Table)
    return [
        (r["kind"], (r["text"] or r["tool_input"] or "")[:2])
        for r in table.select(["kind", "text", "tool_input"]).to_pylist()
    ]


def test_unbounded_view_keeps_everything_in_time_order(long_session: tuple[Path, str]) -> None:
    catalog, session = long_session
    detail = show_session(catalog, "default", session)
    assert isinstance(detail.timeline, pa.Table)
    assert detail.timeline.column_names == list(TIMELINE_COLUMNS)
    assert detail.timeline.num_rows == 24 == detail.session.events
    assert kinds_and_heads(detail.timeline)[:4] == [
        ("prompt", "p0"), ("response", "r0"), ("tool_call", '{"'), ("tool_result", "o0"),
    ]  # fmt: skip
    assert detail.cut is not None and not detail.cut.anything
    assert detail.cut.prompts == BucketCut(6, 6, 0, 0, 600, 600, 0)
    assert detail.tokens.to_pylist()[0]["calls"] == 12
    assert detail.tokens.to_pylist()[0]["total_tokens"] == detail.session.total_tokens == 180


def test_each_count_bound_keeps_the_newest(long_session: tuple[Path, str]) -> None:
    catalog, session = long_session
    d = show_session(catalog, "default", session, bounds=TimelineBounds(max_prompts=2))
    assert d.cut is not None
    assert d.cut.prompts == BucketCut(6, 2, 4, 0, 600, 200, 400)
    prompts = [h for k, h in kinds_and_heads(d.timeline) if k == "prompt"]
    assert prompts == ["p4", "p5"]
    assert d.cut.responses.omitted == 0 and d.cut.tools.omitted == 0

    d = show_session(catalog, "default", session, bounds=TimelineBounds(max_responses=1))
    assert d.cut is not None and d.cut.responses == BucketCut(6, 1, 5, 0, 600, 100, 500)
    assert [h for k, h in kinds_and_heads(d.timeline) if k == "response"] == ["r5"]

    d = show_session(catalog, "default", session, bounds=TimelineBounds(max_tool_events=3))
    assert d.cut is not None
    assert (d.cut.tools.items, d.cut.tools.kept, d.cut.tools.omitted) == (12, 3, 9)
    tools = [(k, h) for k, h in kinds_and_heads(d.timeline) if k.startswith("tool")]
    assert tools == [("tool_result", "o4"), ("tool_call", '{"'), ("tool_result", "o5")]


def test_text_budgets_truncate_the_crossing_event_and_cut_older(
    long_session: tuple[Path, str],
) -> None:
    catalog, session = long_session
    # 250 bytes for prompts and responses: r5 (100), p5 (100), then 50 bytes of r4.
    d = show_session(catalog, "default", session, bounds=TimelineBounds(message_bytes=250))
    assert d.cut is not None
    assert d.cut.prompts == BucketCut(6, 1, 5, 0, 600, 100, 500)
    assert d.cut.responses == BucketCut(6, 2, 4, 1, 600, 150, 450)
    rows = [r for r in rows_of(d) if r["kind"] in ("prompt", "response")]
    assert [(r["kind"], r["text"][:2], r["shown_bytes"], r["truncated"]) for r in rows] == [
        ("response", "r4", 50, True), ("prompt", "p5", 100, False), ("response", "r5", 100, False),
    ]  # fmt: skip
    assert rows[0]["text"] == "r4" + "r" * 48 and rows[0]["bytes"] == 100

    tool_call_bytes = len(orjson.dumps({"command": "c5" + "c" * 80}))
    d = show_session(catalog, "default", session, bounds=TimelineBounds(tool_bytes=150))
    assert d.cut is not None and d.cut.tools.kept == 2 and d.cut.tools.truncated == 1
    assert d.cut.tools.shown_bytes == 150
    assert d.cut.tools.omitted_bytes == d.cut.tools.bytes - 150
    tools = [r for r in rows_of(d) if r["kind"].startswith("tool")]
    assert tools[0]["kind"] == "tool_call" and tools[0]["shown_bytes"] == 50
    assert (
        tools[0]["bytes"] == tool_call_bytes
        and tools[0]["tool_input"] == (orjson.dumps({"command": "c5" + "c" * 80}).decode()[:50])
    )


def test_truncation_never_splits_a_character(tmp_path: Path) -> None:
    home, catalog = tmp_path / "home", tmp_path / "c.duckdb"
    write_session(home, sid("5678", 1), [Turn(prompt="€" * 10, response="ok")])
    do_import(home, catalog)
    # 2 bytes for "ok", 7 left: two whole euro signs (6 bytes) of the 30-byte prompt.
    d = show_session(catalog, "default", "5678", bounds=TimelineBounds(message_bytes=9))
    prompt = next(r for r in rows_of(d) if r["kind"] == "prompt")
    assert prompt["text"] == "€€" and prompt["shown_bytes"] == 6 and prompt["truncated"]
    assert d.cut is not None and d.cut.prompts.omitted_bytes == 24


def test_full_streams_every_event_in_chunks(long_session: tuple[Path, str]) -> None:
    catalog, session = long_session
    d = show_session(catalog, "default", session, bounds=None, chunk_rows=5)
    assert isinstance(d.timeline, TimelineStream) and d.cut is None and d.bounds is None
    batches = list(d.batches())
    assert len(batches) >= 5 and max(b.num_rows for b in batches) <= 5
    table = pa.Table.from_batches(batches)
    assert table.column_names == list(TIMELINE_COLUMNS) and table.num_rows == 24
    bounded = show_session(catalog, "default", session)
    assert isinstance(bounded.timeline, pa.Table)
    assert table.column("event_id").to_pylist() == bounded.timeline.column("event_id").to_pylist()
    assert list(d.batches())  # iterable again


def test_parent_and_children_are_named(demo: Path) -> None:
    con = duckdb.connect(str(demo), read_only=True)
    row = con.execute(
        "SELECT session_id, parent_session_id FROM sessions "
        "WHERE provider = 'claude-code' AND parent_session_id IS NOT NULL LIMIT 1"
    ).fetchone()
    con.close()
    assert row is not None
    child, parent = row
    d = show_session(demo, "default", child)
    assert d.parent is not None and d.parent.session_id == parent and d.parent.known
    assert child in [c.session_id for c in show_session(demo, "default", parent).children]


def test_lake_facade(small: tuple[Path, Path]) -> None:
    _, catalog = small
    lake = agentlake.open(catalog)
    page = lake.sessions(limit=2)
    assert ids(page) == [sid("eeee", 6), sid("dddd", 5)]
    assert ids(lake.sessions(limit=2, cursor=page.next_cursor)) == [sid("cccc", 4), sid("aaaa2", 2)]
    assert lake.session("eeee").session.title == "Structured LOGGING"
    assert isinstance(lake.session("eeee", full=True).timeline, TimelineStream)


def test_an_open_connection_can_be_reused(small: tuple[Path, Path]) -> None:
    _, catalog = small
    con = duckdb.connect(str(catalog), read_only=True)
    try:
        page = list_sessions(con, "default", limit=3)
        assert ids(list_sessions(con, "default", limit=3, cursor=page.next_cursor))
        assert len(rows_of(show_session(con, "default", "eeee"))) == 2
    finally:
        con.close()


PIN_FILTERS: list[dict[str, Any]] = [
    {}, {"provider": "claude"}, {"provider": ["codex", "cursor"]}, {"project": "web"},
    {"text": "THE"}, {"text": "café"}, {"since": date(2026, 5, 1)},
    {"text": "test", "provider": "claude", "project": "dev"},
]  # fmt: skip


@pytest.mark.parametrize("filters", PIN_FILTERS)
def test_a_read_only_connection_pages_exactly_like_sql(demo: Path, filters: dict[str, Any]) -> None:
    """A read-only connection serves pages from its pinned listing; they equal SQL's,
    and cursors pass freely between the two."""
    con = duckdb.connect(str(demo), read_only=True)
    try:
        for limit in (1, 4, 25):
            cursor_con: str | None = None
            cursor_sql: str | None = None
            while True:
                a = list_sessions(con, "default", limit=limit, cursor=cursor_sql, **filters)
                b = list_sessions(demo, "default", limit=limit, cursor=cursor_con, **filters)
                assert a.sessions.equals(b.sessions), (filters, limit)
                assert a.snapshot == b.snapshot
                assert (a.next_cursor is None) == (b.next_cursor is None)
                if a.next_cursor is None:
                    break
                cursor_con, cursor_sql = a.next_cursor, b.next_cursor
    finally:
        con.close()


def test_pinned_listing_handles_ties_and_falls_back_past_its_limit(
    small: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, catalog = small
    expected = all_pages(catalog, limit=1)
    con = duckdb.connect(str(catalog), read_only=True)
    try:
        assert all_pages_on(con, limit=1) == expected  # the tie of aaaa2… and bbbb…
    finally:
        con.close()
    monkeypatch.setattr("agentlake.read.sessions.PIN_LIMIT", 3)
    con = duckdb.connect(str(catalog), read_only=True)
    try:
        assert all_pages_on(con, limit=2) == expected
    finally:
        con.close()
    writable = duckdb.connect(str(catalog))  # not pinned: it could change under us
    try:
        assert all_pages_on(writable, limit=4) == expected
    finally:
        writable.close()


def all_pages_on(con: duckdb.DuckDBPyConnection, **filters: Any) -> list[str]:
    out: list[str] = []
    cursor = None
    while True:
        page = list_sessions(con, "default", cursor=cursor, **filters)
        out += ids(page)
        if page.next_cursor is None:
            return out
        cursor = page.next_cursor


# -- CLI ---------------------------------------------------------------------------------
LIST_SHAPE = {"sessions", "next_cursor"}
SHOW_SHAPE = {
    "session", "parent", "children", "tokens", "tree", "totals", "rate_limits", "bounds", "cut",
    "timeline",
}  # fmt: skip
TREE_SHAPE = {"root_session_id", "depth", "children_count", "subtree_sessions"}
TOTALS_SHAPE = {
    "calls", "input_tokens", "cache_write_tokens", "cache_write_1h_tokens", "cache_read_tokens",
    "output_tokens", "reasoning_tokens", "total_tokens",
}  # fmt: skip
SESSION_SHAPE = set(LISTED_COLUMNS)
DETAIL_SESSION_SHAPE = SESSION_SHAPE | {
    "git_branch",
    "cli_version",
    "lifecycle",
    "archived",
    "tags",
}
TOKENS_SHAPE = {
    "model", "calls", "input_tokens", "cache_write_tokens", "cache_write_1h_tokens",
    "cache_read_tokens", "output_tokens", "reasoning_tokens", "total_tokens",
}  # fmt: skip
BOUNDS_SHAPE = {"max_prompts", "max_responses", "max_tool_events", "message_bytes", "tool_bytes"}
CUT_SHAPE = {"items", "kept", "omitted", "truncated", "bytes", "shown_bytes", "omitted_bytes"}
EVENT_SHAPE = set(TIMELINE_COLUMNS)


def test_cli_list_and_show_json_shapes(cli: CliRunner, demo: Path) -> None:
    first = cli("sessions", "list", "--catalog", demo, "--limit", "2", "--json")
    assert first.returncode == 0, first.stderr
    doc = json.loads(first.stdout)
    assert set(doc) == LIST_SHAPE and len(doc["sessions"]) == 2
    assert all(set(s) == SESSION_SHAPE for s in doc["sessions"])
    second = cli(
        "sessions", "list", "--catalog", demo, "--limit", "2", "--json",
        "--cursor", doc["next_cursor"],
    )  # fmt: skip
    assert second.returncode == 0, second.stderr
    assert (
        json.loads(second.stdout)["sessions"][0]["session_id"] != doc["sessions"][0]["session_id"]
    )

    target = doc["sessions"][0]["session_id"]
    shown = cli("sessions", "show", target[:8], "--catalog", demo, "--json")
    assert shown.returncode == 0, shown.stderr
    detail = json.loads(shown.stdout)
    assert set(detail) == SHOW_SHAPE
    assert set(detail["session"]) == DETAIL_SESSION_SHAPE
    assert detail["session"]["session_id"] == target
    assert all(set(t) == TOKENS_SHAPE for t in detail["tokens"]) and detail["tokens"]
    assert set(detail["tree"]) == TREE_SHAPE and set(detail["totals"]) == {"own", "subtree"}
    assert all(set(t) == TOTALS_SHAPE for t in detail["totals"].values())
    assert detail["totals"]["own"]["total_tokens"] == detail["session"]["total_tokens"]
    assert isinstance(detail["rate_limits"], list)
    assert set(detail["bounds"]) == BOUNDS_SHAPE
    assert set(detail["cut"]) == {"prompts", "responses", "tools"}
    assert all(set(c) == CUT_SHAPE for c in detail["cut"].values())
    assert len(detail["timeline"]) == detail["session"]["events"]
    assert all(set(e) == EVENT_SHAPE for e in detail["timeline"])
    assert detail["timeline"][0]["ts"].endswith("+00:00")

    full = cli("sessions", "show", target, "--catalog", demo, "--json", "--full")
    assert full.returncode == 0, full.stderr
    everything = json.loads(full.stdout)
    assert everything["bounds"] is None and everything["cut"] is None
    assert everything["timeline"] == detail["timeline"]


def test_cli_human_output(cli: CliRunner, demo: Path) -> None:
    listed = cli("sessions", "list", "--catalog", demo, "--limit", "3", "--provider", "codex")
    assert listed.returncode == 0, listed.stderr
    assert "codex" in listed.stdout and "more: repeat with --cursor v1." in listed.stdout
    target = list_sessions(demo, "default", provider="codex", limit=1).sessions.to_pylist()[0]
    shown = cli("sessions", "show", target["session_id"], "--catalog", demo)
    assert shown.returncode == 0, shown.stderr
    assert f"session {target['session_id']} (codex)" in shown.stdout
    assert "tokens by model" in shown.stdout and "prompt" in shown.stdout


def test_cli_exit_codes(cli: CliRunner, small: tuple[Path, Path]) -> None:
    _, catalog = small
    cases: list[tuple[tuple[str, ...], int, str]] = [
        (("sessions", "list", "--cursor", "v1.bogus.x"), 2, "--cursor"),
        (("sessions", "list", "--limit", "0"), 2, ""),
        (("sessions", "list", "--limit", "501"), 2, ""),
        (("sessions", "list", "--max-age", "soon"), 2, "--max-age must be"),
        (("sessions", "list", "--provider", "nope"), 2, "unknown provider"),
        (("sessions", "show", "aaaa"), 2, "is ambiguous"),
        (("sessions", "show", "aa"), 2, "too short"),
        (("sessions", "show", "ab"), 2, "too short"),  # matching nothing or not: as short
        (("sessions", "show", "ffff"), 4, "no session 'ffff'"),
        (("sessions", "show", "eeee", "--workspace", "other"), 4, "no session 'eeee'"),
        (("sessions", "show", "eeee"), 0, ""),
    ]
    for args, code, message in cases:
        proc = cli(*args, "--catalog", catalog)
        assert proc.returncode == code, (args, proc.stdout, proc.stderr)
        assert message in proc.stderr, (args, proc.stderr)
        if code == 2 and message:
            assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    cursor = list_sessions(catalog, "default", limit=2).next_cursor
    assert cursor is not None
    proc = cli("sessions", "list", "--catalog", catalog, "--cursor", cursor, "--text", "x")
    assert proc.returncode == 2 and "issued with other filters" in proc.stderr
