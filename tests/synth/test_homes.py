"""The synthetic home generators (fixtures/synth) write exactly what they wrote before.

Benchmarks and tests depend on the exact homes (token totals, golden files, snapshots),
so every file of a few small homes is pinned in ``expected_homes.json``: its SHA-256, size
and, for Cursor (whose freshness is its mtimes), modification time. Databases are pinned
by their SQL dump, which does not depend on the SQLite library that wrote them. A change
to a generator that changes its output is a change to every benchmark's corpus: rewrite
the manifest on purpose (``python -m tests.synth.test_homes``) and say so.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import sys
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from fixtures.synth import (
    ALL_PROVIDERS,
    generate_claude_corpus,
    generate_claude_home,
    generate_codex_corpus,
    generate_copilot_corpus,
    generate_cursor_corpus,
    generate_demo_home,
    generate_factory_corpus,
    generate_gemini_corpus,
    generate_opencode_corpus,
)

MANIFEST = Path(__file__).with_name("expected_homes.json")
_DATABASES = (".sqlite", ".vscdb", ".db")

#: Each case writes one home; ``demo`` is pinned file by file, corpora by one digest.
CASES: dict[str, Callable[[Path], Any]] = {
    "demo": lambda home: generate_demo_home(home, seed=7),
    "claude_corpus": lambda home: generate_claude_corpus(
        home, seed=2, target_lines=3_000, tool_output_bytes=100, days=5
    ),
    "claude_canaries": lambda home: generate_claude_home(
        home,
        seed=3,
        sessions=6,
        turns_per_session=3,
        canaries=["sk-test-canary-0001"],
        secret_urls=["https://u:p4ssw0rd@db.example.test/x"],
        split_canaries=["AKIACANARY0001"],
    ),
    "codex_corpus": lambda home: generate_codex_corpus(home, seed=1, target_lines=5_000),
    "cursor_corpus": lambda home: generate_cursor_corpus(home, seed=1, target_lines=2_000),
    "gemini_corpus": lambda home: generate_gemini_corpus(home, seed=3, target_lines=3_000),
    # the home `python -m fixtures.synth` writes (make demo): the four above and three more
    "demo_all": lambda home: generate_demo_home(home, seed=7, providers=ALL_PROVIDERS),
    "copilot_corpus": lambda home: generate_copilot_corpus(home, seed=1, target_lines=3_000),
    "opencode_corpus": lambda home: generate_opencode_corpus(
        home, seed=1, target_lines=3_000, legacy_share=0.05
    ),
    "factory_corpus": lambda home: generate_factory_corpus(home, seed=1, target_lines=3_000),
}
_BY_FILE = frozenset({"demo"})


def _digest(path: Path) -> str:
    if path.suffix in _DATABASES:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            data = "\n".join(con.iterdump()).encode()
        finally:
            con.close()
    else:
        data = path.read_bytes()
    return hashlib.sha256(data).hexdigest()


def _stats(written: Any) -> Any:
    if isinstance(written, dict):
        return {provider: asdict(stats) for provider, stats in written.items()}
    return asdict(written)


def describe(case: str, root: Path) -> dict[str, Any]:
    """Write ``case``'s home under ``root`` and describe every file it holds."""
    home = root / case
    stats = _stats(CASES[case](home))
    files: dict[str, list[Any]] = {}
    for path in sorted(home.rglob("*")):
        if path.is_file():
            cursor = ".cursor" in path.parts or ".config" in path.parts
            mtime = path.stat().st_mtime_ns if cursor else None
            files[path.relative_to(home).as_posix()] = [_digest(path), path.stat().st_size, mtime]
    if case in _BY_FILE:
        return {"stats": stats, "files": files}
    lines = (json.dumps([name, *entry]) for name, entry in files.items())
    return {
        "stats": stats,
        "count": len(files),
        "digest": hashlib.sha256("\n".join(lines).encode()).hexdigest(),
    }


@pytest.mark.parametrize("case", sorted(CASES))
def test_generators_write_the_pinned_homes(case: str, tmp_path: Path) -> None:
    expected = json.loads(MANIFEST.read_text(encoding="utf-8"))[case]
    got = describe(case, tmp_path)
    assert got["stats"] == expected["stats"]
    assert got == expected


def test_the_same_seed_writes_the_same_bytes_and_another_seed_does_not(tmp_path: Path) -> None:
    def files(home: Path) -> dict[str, bytes]:
        return {p.relative_to(home).as_posix(): p.read_bytes() for p in home.rglob("*.json*")}

    for name, seed in (("a", 5), ("b", 5), ("c", 6)):
        generate_demo_home(tmp_path / name, seed=seed)
    a, b, c = (files(tmp_path / name) for name in "abc")
    assert a == b
    assert a.keys() != c.keys() or a != c


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        manifest = {case: describe(case, Path(tmp)) for case in sorted(CASES)}
    MANIFEST.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {MANIFEST}", file=sys.stderr)
