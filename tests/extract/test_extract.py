"""Unit tests of line extraction (extract/extract.py): each line parsed and mapped in
turn, rejects of every stage in offset order, the per-source record budget, a format
drift cutting a batch short, and an adapter's own bug failing the run (only
``InvalidRecord`` becomes a reject)."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path
from typing import NoReturn

import orjson
import pytest

from agentlake.errors import SourceError
from agentlake.extract.adapter import InvalidRecord, SourceContext
from agentlake.extract.digests import document_digest, window_digest
from agentlake.extract.extract import ExtractBatch, ExtractLimits, extract_source
from agentlake.extract.jsonl import RecordLimits
from agentlake.extract.providers import by_id
from agentlake.extract.providers.warp_export import WarpMarkdownAdapter
from agentlake.extract.rows import RowSink
from agentlake.extract.sources import SourceFile, walk_root
from agentlake.ingest.run import ImportOptions, run_import
from fixtures.synth import generate_gemini_home

SPEC = by_id("claude-code")


def _prompt(n: int, version: str = "2.1.37") -> bytes:
    """A user prompt line of Claude Code numbered ``n``."""
    return orjson.dumps(
        {
            "type": "user",
            "uuid": f"u-{n}",
            "sessionId": "s1",
            "version": version,
            "timestamp": f"2026-03-01T10:00:{n:02d}.000Z",
            "message": {"role": "user", "content": f"prompt {n}"},
        }
    )


def _source(home: Path, lines: list[bytes]) -> SourceFile:
    """A Claude Code transcript of ``lines`` under ``home``, as discovery sees it."""
    path = home / ".claude" / "projects" / "-home-dev-app" / "s1.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    (src,) = [
        s
        for root in SPEC.roots(home, {})
        for s in walk_root(root, SPEC.formats)
        if isinstance(s, SourceFile)
    ]
    return src


def _offsets(lines: list[bytes]) -> list[int]:
    """The offset of each of ``lines`` in the file :func:`_source` writes."""
    out, at = [], 0
    for line in lines:
        out.append(at)
        at += len(line) + 1
    return out


def _native_ids(batches: list[ExtractBatch]) -> list[str]:
    return [str(e["native_id"]) for b in batches for e in b.tables.events.to_pylist()]


def test_rejects_of_every_stage_come_out_in_offset_order(tmp_path: Path) -> None:
    lines = [
        _prompt(0),
        b'{"type":"user","message":',  # malformed
        b'{"type":"brand-new-record"}',  # unknown
        b"x" * 300,  # oversized
        b'{"type":"user","message":"not an object"}',  # invalid
        _prompt(5),
        b"",
    ]
    src = _source(tmp_path, lines)
    limits = ExtractLimits(record=RecordLimits(max_line_bytes=256))
    (batch,) = extract_source(SPEC, src, start=0, stop=src.size, limits=limits)
    offsets = _offsets(lines)
    assert [(r.offset, r.reason) for r in batch.rejects] == [
        (offsets[1], "MALFORMED"),
        (offsets[2], "UNKNOWN_RECORD"),
        (offsets[3], "OVERSIZED"),
        (offsets[4], "INVALID_RECORD"),
    ]
    assert [r.length for r in batch.rejects] == [len(lines[i]) + 1 for i in (1, 2, 3, 4)]
    assert _native_ids([batch]) == ["u-0", "u-5"]
    assert batch.outcomes == {"mapped": 2, "unknown": 1, "invalid": 1}
    assert batch.records == 4
    assert (batch.start_offset, batch.end_offset, batch.lines) == (0, src.size, len(lines))


@pytest.mark.parametrize("batch_lines", [2, 3, 100])
def test_the_record_budget_ends_the_source_before_the_record_past_it(
    tmp_path: Path, batch_lines: int
) -> None:
    lines = [_prompt(0), b"{oops", _prompt(2), _prompt(3), b"{oops", _prompt(5), _prompt(6)]
    src = _source(tmp_path, lines)
    limits = ExtractLimits(batch_lines=batch_lines, max_records_per_source=3)
    batches = list(extract_source(SPEC, src, start=0, stop=src.size, limits=limits))
    offsets = _offsets(lines)
    # Records 0, 2 and 3 are read. In batches of two lines the budget is spent with the
    # second batch and reading stops there; otherwise the batch ends just before the
    # record past the budget, and the malformed line before that record is rejected.
    assert _native_ids(batches) == ["u-0", "u-2", "u-3"]
    assert sum(b.records for b in batches) == 3
    end = offsets[4] if batch_lines == 2 else offsets[5]
    assert batches[-1].end_offset == end
    assert [r.offset for b in batches for r in b.rejects] == [
        o for o in (offsets[1], offsets[4]) if o < end
    ]
    for prev, nxt in pairwise(batches):
        assert nxt.start_offset == prev.end_offset


def test_a_format_drift_ends_the_batch_before_its_record(tmp_path: Path) -> None:
    lines = [_prompt(0), b"{oops", _prompt(2), _prompt(3, version="9.0.0"), _prompt(4)]
    src = _source(tmp_path, lines)
    batches: list[ExtractBatch] = []
    with pytest.raises(SourceError) as raised:
        batches.extend(extract_source(SPEC, src, start=0, stop=src.size))
    assert raised.value.code == "SCHEMA_DRIFT"
    (batch,) = batches
    offsets = _offsets(lines)
    assert _native_ids(batches) == ["u-0", "u-2"]
    assert [r.offset for r in batch.rejects] == [offsets[1]]
    assert (batch.end_offset, batch.lines) == (offsets[3], 3)


@pytest.mark.parametrize("bug", [KeyError, TypeError, AttributeError, ValueError])
def test_an_adapter_bug_fails_the_extraction_rather_than_becoming_a_reject(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bug: type[Exception]
) -> None:
    src = _source(tmp_path, [_prompt(0), _prompt(1)])
    adapter = SPEC.format_of(src).adapter

    def broken(*args: object) -> NoReturn:
        raise bug("adapter bug")

    monkeypatch.setattr(type(adapter), "map_record", broken)
    with pytest.raises(bug, match="adapter bug"):
        list(extract_source(SPEC, src, start=0, stop=src.size))


def test_an_adapter_bug_fails_the_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = _source(tmp_path / "home", [_prompt(0)])
    adapter = SPEC.format_of(src).adapter

    def broken(*args: object) -> NoReturn:
        raise KeyError("adapter bug")

    monkeypatch.setattr(type(adapter), "map_record", broken)
    options = ImportOptions(
        catalog=tmp_path / "catalog.duckdb", workspace="default", home=tmp_path / "home",
        env={}, providers=("claude-code",), build_index=False,
    )  # fmt: skip
    with pytest.raises(KeyError, match="adapter bug"):
        run_import(options)


def test_each_batch_hands_over_the_checkpoint_digest_of_the_bytes_it_read(
    tmp_path: Path,
) -> None:
    """A batch's digest is the one the checkpoint would read from the file at its end
    (the window before it), so the committer need not read the file again; a batch
    cut short by the record budget has none (the committer reads it then)."""
    lines = [_prompt(n) for n in range(30)]
    src = _source(tmp_path, lines)
    for limits in (ExtractLimits(batch_lines=4), ExtractLimits()):
        batches = list(extract_source(SPEC, src, start=0, stop=src.size, limits=limits))
        assert all(b.digest == window_digest(src.path, b.end_offset) for b in batches)
    cut = ExtractLimits(max_records_per_source=5)
    (batch,) = extract_source(SPEC, src, start=0, stop=src.size, limits=cut)
    assert batch.digest is None


def test_a_document_batch_hands_over_the_digest_of_the_document(tmp_path: Path) -> None:
    generate_gemini_home(tmp_path, sessions=1)  # session 0 is a legacy .json document
    spec = by_id("gemini-cli")
    (doc,) = [
        s
        for root in spec.roots(tmp_path, {})
        for s in walk_root(root, spec.formats)
        if isinstance(s, SourceFile) and s.position_kind == "document"
    ]
    (batch,) = extract_source(spec, doc, start=0, stop=doc.size)
    assert batch.digest == document_digest(doc.path) and batch.rows.event_count


def _text_document(path: Path, data: bytes) -> SourceFile:
    """A Markdown export (a text document) at ``path`` as the planner hands it over."""
    path.write_bytes(data)
    st = path.stat()
    return SourceFile("warp", path, path.parent, "document", "warp-markdown-export",
                      st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)  # fmt: skip


def test_a_text_document_is_decoded_once_and_a_bad_one_is_one_reject(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Text documents (not JSON) reach their adapter as text with the document's digest;
    invalid UTF-8 or an invalid record is one reject covering the document, and the rows
    the adapter emitted before it are dropped."""
    spec = by_id("warp")
    doc = _text_document(tmp_path / "chat.md", b"USER:\nhello\n")
    (batch,) = extract_source(spec, doc, start=0, stop=doc.size)
    assert batch.digest == document_digest(doc.path) and batch.rows.event_count == 1
    bad = _text_document(tmp_path / "latin1.md", b"USER:\n\xff\n")
    (batch,) = extract_source(spec, bad, start=0, stop=bad.size)
    assert [(r.offset, r.length, r.reason) for r in batch.rejects] == [(0, 8, "BAD_ENCODING")]
    original = WarpMarkdownAdapter.map_text

    def half_then_invalid(
        self: WarpMarkdownAdapter, text: str, ctx: SourceContext, sink: RowSink
    ) -> int:
        original(self, text, ctx, sink)
        raise InvalidRecord("cannot be read")

    monkeypatch.setattr(WarpMarkdownAdapter, "map_text", half_then_invalid)
    (batch,) = extract_source(spec, doc, start=0, stop=doc.size)
    assert [r.reason for r in batch.rejects] == ["INVALID_RECORD"]
    assert batch.rows.event_count == 0


def test_every_database_adapter_reads_one_snapshot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The runner opens one read transaction around a database adapter's queries, so a
    store its agent writes meanwhile (WAL mode) is read as of one moment, whatever the
    adapter; an adapter's own snapshot inside it adds nothing."""
    import sqlite3

    from agentlake.extract import extract as extract_module
    from agentlake.extract.adapter import one_snapshot

    db = tmp_path / "state.db"
    writer = sqlite3.connect(db)
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("CREATE TABLE t (n INTEGER)")
    writer.execute("INSERT INTO t VALUES (1)")
    writer.commit()
    seen: list[int] = []

    class Reader:
        def locate(self, source: SourceFile) -> SourceContext:
            return SourceContext(source, "s")

        def map_database(self, con: sqlite3.Connection, ctx: SourceContext, sink: RowSink) -> int:
            with one_snapshot(con):  # nested: no second BEGIN
                seen.append(con.execute("SELECT count(*) FROM t").fetchone()[0])
            writer.execute("INSERT INTO t VALUES (2)")  # the agent writes between two reads
            writer.commit()
            seen.append(con.execute("SELECT count(*) FROM t").fetchone()[0])
            return 1

    st = db.stat()
    source = SourceFile("p", db, tmp_path, "sqlite", "f", st.st_dev, st.st_ino, st.st_size,
                        st.st_mtime_ns)  # fmt: skip
    list(extract_module._extract_database(Reader(), Reader().locate(source), source))
    assert seen == [1, 1]  # both reads see the store as it was when the first began
    writer.close()
