"""The Claude Code adapter: every record shape of the formats reference maps to events,
is known-and-ignored, or is counted unknown — never an exception."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from agentlake.extract.extract import extract_source
from agentlake.extract.providers import by_id
from agentlake.extract.sources import SourceFile, walk_root
from tests.conftest import CONFORMANCE, FIXTURES

SPEC = by_id("claude-code")


def _sources(home: Path) -> list[SourceFile]:
    out = []
    for root in SPEC.roots(home, {}):
        out += [s for s in walk_root(root, SPEC.formats) if isinstance(s, SourceFile)]
    return out


def _extract(
    home: Path,
) -> tuple[Counter[str], Counter[str], list[dict[str, object]], list[dict[str, object]]]:
    outcomes: Counter[str] = Counter()
    rejects: Counter[str] = Counter()
    events: list[dict[str, object]] = []
    usage: list[dict[str, object]] = []
    for src in _sources(home):
        for batch in extract_source(SPEC, src, start=0, stop=src.size):
            outcomes.update(batch.outcomes)
            rejects.update(r.reason for r in batch.rejects)
            events += batch.tables.events.to_pylist()
            usage += batch.tables.usage.to_pylist()
    return outcomes, rejects, events, usage


def test_every_record_type_is_mapped_ignored_or_counted_unknown() -> None:
    outcomes, rejects, events, usage = _extract(FIXTURES / "claude" / "all_record_types")
    assert outcomes["unknown"] == 1 and rejects == Counter({"UNKNOWN_RECORD": 1})  # x-future-record
    assert outcomes["ignored"] >= 10 and outcomes["mapped"] >= 20
    block_types = Counter(e["block_type"] for e in events)
    assert {"text", "thinking", "tool_use", "tool_result", "image", "summary", "system"} <= set(
        block_types
    )
    # <system-reminder> and isMeta user text are system events, not prompts
    reminders = [
        e
        for e in events
        if isinstance(e["text"], str) and e["text"].startswith("<system-reminder>")
    ]
    assert reminders and all(e["block_type"] == "system" for e in reminders)
    # progress-wrapped subagent usage (2.0.x) is a usage candidate; the `result` line is not
    assert any(u["model"] and "haiku" in str(u["model"]) for u in usage)
    assert all(u["message_id"] != "" for u in usage)


def test_tool_calls_carry_name_id_and_json_input() -> None:
    _, _, events, _ = _extract(FIXTURES / "claude" / "subagents")
    calls = [e for e in events if e["block_type"] == "tool_use"]
    results = {e["tool_call_id"]: e for e in events if e["block_type"] == "tool_result"}
    assert calls and all(
        c["tool_name"] and c["tool_call_id"] and str(c["tool_input"]).startswith("{") for c in calls
    )
    assert any(c["tool_call_id"] in results for c in calls)


def test_subagent_file_is_its_own_session_with_its_parent() -> None:
    home = FIXTURES / "claude" / "subagents"
    (sub,) = [s for s in _sources(home) if "subagents" in s.path.relative_to(s.root).parts]
    ctx = SPEC.format_of(sub).adapter.locate(sub)
    assert ctx.session_id == sub.path.stem and ctx.session_id.startswith("agent-")
    assert ctx.parent_session_id == sub.path.parent.parent.name


def test_old_layout_agent_file_takes_its_parent_from_the_lines() -> None:
    home = FIXTURES / "claude" / "all_record_types"
    (agent,) = [s for s in _sources(home) if s.path.name.startswith("agent-")]
    batch = next(extract_source(SPEC, agent, start=0, stop=agent.size))
    sessions = batch.tables.sessions.to_pylist()
    assert sessions[0]["session_id"] == "agent-a3f9c2e"
    assert sessions[0]["parent_session_id"] == "5d0c8e1e-0007-4000-8000-000000000002"


def test_streamed_chunks_are_separate_events_and_candidates() -> None:
    _, _, events, usage = _extract(FIXTURES / "claude" / "streamed_duplicate_chunks")
    by_message = Counter(u["message_id"] for u in usage)
    assert max(by_message.values()) == 3  # one candidate per chunk line; dedup happens later
    outputs = sorted(
        int(str(u["output_tokens"])) for u in usage if by_message[u["message_id"]] == 3
    )
    assert outputs == [12, 40, 184]
    assert len({(e["native_id"], e["block_index"]) for e in events}) == len(events)


@pytest.mark.parametrize(
    "name",
    sorted(
        p.name
        for p in (FIXTURES / "claude").iterdir()
        if p.is_dir() and p.name not in ("bad_input", "contract_drift", "contract_lookalikes")
    ),
)
def test_fixtures_extract_without_invalid_records(name: str) -> None:
    outcomes, rejects, events, _ = _extract(FIXTURES / "claude" / name)
    assert outcomes["invalid"] == 0 and "INVALID_RECORD" not in rejects
    assert events


CLAUDE_CODE_LOG = CONFORMANCE / "daaain__claude-code-log" / "test" / "test_data"


@pytest.mark.skipif(not CLAUDE_CODE_LOG.is_dir(), reason="conformance data not present")
def test_conformance_transcripts_never_raise(tmp_path: Path) -> None:
    project = tmp_path / ".claude" / "projects" / "-conformance"
    project.mkdir(parents=True)
    for path in CLAUDE_CODE_LOG.glob("*.jsonl"):
        (project / path.name).write_bytes(path.read_bytes())
    outcomes, rejects, events, _ = _extract(tmp_path)
    assert sum(outcomes.values()) > 200 and len(events) > 200
    # edge_cases.jsonl holds JSON lines that are not objects and a record of unknown shape
    assert rejects["MALFORMED"] >= 3
    assert outcomes["invalid"] <= 2, rejects


@pytest.mark.parametrize(
    ("rel", "owned"),
    [
        ("-home-dev-app/0b1c.jsonl", True),
        ("-home-dev-app/0b1c/subagents/agent-1.jsonl", True),
        ("-home-dev-app/..jsonl", True),
        ("0b1c.jsonl", False),  # directly in the projects root: no project folder
        ("-home-dev-app/.jsonl", False),  # a hidden file with no name before the suffix
        ("-home-dev-app/0b1c.json", False),
        ("-home-dev-app/0b1c.jsonl.bak", False),
    ],
)
def test_owns_transcripts_below_a_project_folder(rel: str, owned: bool) -> None:
    (fmt,) = by_id("claude-code").formats
    assert fmt.owns(Path(rel).parts) is owned
