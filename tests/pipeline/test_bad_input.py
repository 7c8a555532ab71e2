"""Bad input never crashes an import nor vanishes: good lines import, bad ones are
rejected with a reason, messages are one line naming file and offset."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb

from tests.conftest import CliRunner

from .helpers import scalar

SID = "5d0c8e1e-0000-4000-8000-00000000b001"


def _good(n: int) -> bytes:
    rec = {
        "type": "user",
        "sessionId": SID,
        "version": "2.1.40",
        "cwd": "/home/dev/demo",
        "uuid": f"g-{n}",
        "timestamp": "2026-05-01T09:00:00.000Z",
        "message": {"role": "user", "content": f"good line {n}"},
    }
    return json.dumps(rec).encode() + b"\n"


def test_every_bad_line_is_rejected_with_its_reason(cli: CliRunner, tmp_path: Path) -> None:
    home = tmp_path / "home"
    project = home / ".claude" / "projects" / "-home-dev-demo"
    project.mkdir(parents=True)
    deep = b'{"type":"user","x":' + b"[" * 100 + b"]" * 100 + b"}\n"
    lines = [
        _good(0),
        b'{"type":"user", broken json\n',  # MALFORMED
        _good(1),
        b"42\n",  # MALFORMED (not an object)
        b'{"type":"user","message":{"role":"user","content":"caf\xe9"}}\n',  # BAD_ENCODING
        _good(2),
        b'{"type":"user","pad":"' + b"x" * (5 * 1024 * 1024) + b'"}\n',  # OVERSIZED
        _good(3),
        deep,  # TOO_DEEP
        b'{"type":"some-future-record","sessionId":"' + SID.encode() + b'"}\n',  # UNKNOWN_RECORD
        _good(4),
    ]
    path = project / f"{SID}.jsonl"
    path.write_bytes(b"".join(lines))
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "secret.jsonl").write_bytes(_good(9))
    link = project / "5d0c8e1e-0000-4000-8000-00000000b002.jsonl"
    link.symlink_to(outside / "secret.jsonl")

    catalog = tmp_path / "c.duckdb"
    proc = cli("import", "--home", home, "--catalog", catalog)
    assert proc.returncode == 1, proc.stderr  # the symlink is a refused source
    assert "Traceback" not in proc.stderr

    assert scalar(catalog, "SELECT count(*) FROM events WHERE session_id = ?", [SID]) == 5
    con = duckdb.connect(str(catalog), read_only=True)
    rejects = con.execute(
        'SELECT "offset", length, reason FROM rejects ORDER BY "offset"'
    ).fetchall()
    con.close()
    offsets, at = [], 0
    for line in lines:
        offsets.append(at)
        at += len(line)
    expected = [
        (offsets[1], len(lines[1]), "MALFORMED"),
        (offsets[3], len(lines[3]), "MALFORMED"),
        (offsets[4], len(lines[4]), "BAD_ENCODING"),
        (offsets[6], len(lines[6]), "OVERSIZED"),
        (offsets[8], len(lines[8]), "TOO_DEEP"),
        (offsets[9], len(lines[9]), "UNKNOWN_RECORD"),
    ]
    assert rejects == expected
    # every byte is accounted for: committed offset is the end of the file
    assert scalar(catalog, "SELECT committed_offset FROM sources WHERE path = ?", [str(path)]) == at

    messages = [m for m in proc.stderr.splitlines() if m.startswith("rejected:")]
    assert len(messages) == 6
    for (offset, _, reason), message in zip(expected, messages, strict=True):
        assert f"{path}:{offset}: {reason}" in message
    refused = [m for m in proc.stderr.splitlines() if m.startswith("refused:")]
    assert len(refused) == 1 and "SOURCE_OUTSIDE_ROOT" in refused[0] and str(link) in refused[0]
    assert scalar(catalog, "SELECT count(*) FROM events WHERE text LIKE '%good line 9%'") == 0
