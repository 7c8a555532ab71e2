"""The planner decides each source's continuity from stat calls and the checkpoint
window alone (DESIGN §5); these tests need no catalog."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from agentlake.errors import ConfigurationError
from agentlake.extract.providers import REGISTRY, by_id
from agentlake.extract.sources import SourceFile
from agentlake.ingest.plan import classify, make_plan, select_providers
from agentlake.load.checkpoint import Checkpoint, window_digest
from agentlake.transform.redact import POLICY_VERSION

SPEC = by_id("claude-code")


def _source(path: Path) -> SourceFile:
    st = path.stat()
    return SourceFile(
        "claude-code",
        path,
        path.parent,
        "byte-offset",
        "claude-jsonl",
        st.st_dev,
        st.st_ino,
        st.st_size,
        st.st_mtime_ns,
    )


def _checkpoint(src: SourceFile, offset: int) -> Checkpoint:
    return Checkpoint(
        src.source_id, src.provider, str(src.path), src.device, src.inode, src.size, src.mtime_ns,
        offset, window_digest(src.path, offset), 1, SPEC.adapter_version, POLICY_VERSION, "ok", "new", None,
    )  # fmt: skip


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"a":1}\n{"b":2}\n')
    return path


def test_new_source_reads_everything(transcript: Path) -> None:
    planned = classify(_source(transcript), None, SPEC)
    assert (planned.continuity, planned.action, planned.start, planned.stop) == (
        "new",
        "read",
        0,
        16,
    )


def test_unchanged_source_is_skipped_without_reading(
    transcript: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = _source(transcript)
    cp = _checkpoint(src, 16)
    monkeypatch.setattr(
        "agentlake.ingest.plan.window_digest", lambda *_: pytest.fail("must not read")
    )
    planned = classify(src, cp, SPEC)
    assert (planned.continuity, planned.action) == ("unchanged", "skip")


def test_append_reads_from_the_committed_offset(transcript: Path) -> None:
    cp = _checkpoint(_source(transcript), 16)
    with transcript.open("ab") as fh:
        fh.write(b'{"c":3}\n')
    planned = classify(_source(transcript), cp, SPEC)
    assert (planned.continuity, planned.action, planned.start, planned.stop) == (
        "validated-append",
        "read",
        16,
        24,
    )


def test_unread_complete_lines_of_an_unchanged_file_are_read(transcript: Path) -> None:
    # A per-run ceiling or a stopped run committed only the first line.
    src = _source(transcript)
    planned = classify(src, _checkpoint(src, 8), SPEC)
    assert (planned.continuity, planned.action, planned.start, planned.stop) == (
        "validated-append",
        "read",
        8,
        16,
    )


def test_a_torn_last_line_alone_leaves_an_unchanged_file_skipped(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"a":1}\n{"b":')  # the writer is mid-line
    src = _source(path)
    planned = classify(src, _checkpoint(src, 8), SPEC)
    assert (planned.continuity, planned.action) == ("unchanged", "skip")


def test_touched_file_with_same_bytes_is_unchanged(transcript: Path) -> None:
    cp = _checkpoint(_source(transcript), 16)
    os.utime(transcript, ns=(1, 1))
    planned = classify(_source(transcript), cp, SPEC)
    assert (planned.continuity, planned.action, planned.touched) == ("unchanged", "skip", True)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ("truncate", "truncated"),
        ("replace", "replaced"),
        ("rewrite", "rewritten"),
        ("adapter", "drift"),
        ("policy", "drift"),
    ],
)
def test_refusals(transcript: Path, change: str, expected: str) -> None:
    src = _source(transcript)
    cp = _checkpoint(src, 16)
    if change == "truncate":
        transcript.write_bytes(b'{"a":1}\n')
    elif change == "replace":
        tmp = transcript.with_name("new")
        tmp.write_bytes(transcript.read_bytes() + b'{"c":3}\n')
        tmp.replace(transcript)
    elif change == "rewrite":
        with transcript.open("r+b") as fh:
            fh.write(b'{"z":9}\n{"b":2}\n{"c":3}\n')
    elif change == "adapter":
        cp = replace(cp, adapter_version="0.9")
    else:
        cp = replace(cp, policy_version=POLICY_VERSION - 1)
    if change in ("adapter", "policy"):
        with transcript.open("ab") as fh:
            fh.write(b'{"c":3}\n')
    planned = classify(_source(transcript), cp, SPEC)
    assert (planned.continuity, planned.action) == (expected, "refuse")
    assert planned.code and planned.message and "--restart-drifted" in planned.message
    restarted = classify(_source(transcript), cp, SPEC, restart_refused=True)
    assert (restarted.action, restarted.start, restarted.generation, restarted.restart) == (
        "read",
        0,
        2,
        True,
    )


def test_make_plan_walks_the_registry_roots(tmp_path: Path) -> None:
    project = tmp_path / ".claude" / "projects" / "-home-dev-x"
    project.mkdir(parents=True)
    (project / "a.jsonl").write_bytes(b"{}\n")
    (project / "b.txt").write_bytes(b"{}\n")
    plan = make_plan({}, workspace="w", home=tmp_path, env={})
    assert [s.path.name for s in plan.sources] == ["a.jsonl"]
    assert plan.bytes_to_read == 3
    assert {r.origin for r in plan.roots} == {"default"}


def test_select_providers_by_alias_and_unknown() -> None:
    assert select_providers(["claude"]) == (SPEC,)
    assert select_providers([]) == REGISTRY
    with pytest.raises(ConfigurationError, match="unknown provider"):
        select_providers(["nope"])
