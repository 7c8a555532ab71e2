"""The contract every registered provider passes, unchanged (CONVENTIONS §15).

Each registry row names its fixture directory first in ``fixtures``; that directory holds
``contract.json``::

    {"home": "<dir>",            a home with every record shape the provider claims
     "expected": {...},          what importing it must produce (events by kind, calls,
                                 token sums, sessions, rejects by reason)
     "drift_home": "<dir>",      a home whose input declares an unknown major format version
     "canary_home": "<dir>",     a home with the canaries planted in every text-bearing field
     "canaries": [...],          the synthetic credentials planted there
     "split_canaries": [...],    credentials planted cut across two chunks of a streamed
                                 message (optional: formats that stream a message)
     "lookalike_home": "<dir>"}  a home with look-alike files the provider must not admit

(paths relative to the repository). Everything else — malformed lines, symlink escape,
resume after append, idempotent replay — the suite derives from the positive home.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import duckdb
import pytest

from agentlake.errors import ConfigurationError
from agentlake.extract.providers import REGISTRY, ProviderSpec
from agentlake.ingest.files import NamedFile, guess_format, plan_files
from agentlake.ingest.plan import make_plan
from agentlake.ingest.run import ImportOptions, ImportResult, run_import
from tests.conftest import REPO
from tests.pipeline.helpers import snapshot

TABLES = ("events", "usage", "sessions", "rejects")


def _manifest(spec: ProviderSpec) -> dict[str, Any]:
    path = REPO / spec.fixtures[0] / "contract.json"
    doc: dict[str, Any] = json.loads(path.read_text())
    return doc


def _home(spec: ProviderSpec, key: str, tmp: Path) -> Path:
    """A private copy of a contract home (tests mutate it)."""
    target = tmp / key
    shutil.copytree(REPO / _manifest(spec)[key], target, symlinks=True)
    return target


def _exported(home: Path) -> list[Path]:
    """The files of an export-only provider's home: each is named to the import."""
    return sorted(p for p in home.rglob("*") if p.is_file())


def _import(spec: ProviderSpec, home: Path, catalog: Path, **options: Any) -> ImportResult:
    """Import a contract home: discovered under it, or for a provider read only from
    exports, each of its files named (``import --file``) with its format guessed."""
    if spec.support == "export":
        options["files"] = tuple(NamedFile(p) for p in _exported(home))
    else:
        options["providers"] = (spec.id,)
    return run_import(
        ImportOptions(catalog=catalog, workspace="default", home=home, env={},
                      build_index=False, **options)
    )  # fmt: skip


def _query(catalog: Path, sql: str) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(catalog), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def _byte_offset_sources(spec: ProviderSpec, home: Path) -> list[Path]:
    if spec.support == "export":
        plan = plan_files({}, workspace="w", files=[NamedFile(p) for p in _exported(home)])
        return [
            s.path for s in plan.sources if s.source and s.source.position_kind == "byte-offset"
        ]
    plan = make_plan({}, workspace="w", home=home, env={}, providers=(spec,))
    return [s.path for s in plan.sources if s.source and s.source.position_kind == "byte-offset"]


PROVIDERS = pytest.mark.parametrize("spec", REGISTRY, ids=[s.id for s in REGISTRY])


def _claims(spec: ProviderSpec, path: Path) -> bool:
    """Whether ``import --file`` without ``--format`` reads ``path`` as ``spec``'s."""
    try:
        return guess_format(path)[0].id == spec.id
    except ConfigurationError:
        return False


@PROVIDERS
def test_discovers_its_layout_and_refuses_look_alikes(spec: ProviderSpec, tmp_path: Path) -> None:
    home = _home(spec, "home", tmp_path)
    if spec.support == "export":  # nothing to discover: its files are told apart by content
        assert make_plan({}, workspace="w", home=home, env={}, providers=(spec,)).sources == ()
        assert all(_claims(spec, p) for p in _exported(home))
        exported = _exported(_home(spec, "lookalike_home", tmp_path))
        assert exported, "the look-alike home must hold files"
        assert not any(_claims(spec, p) for p in exported)
        return
    plan = make_plan({}, workspace="w", home=home, env={}, providers=(spec,))
    assert plan.sources and all(s.action == "read" and s.provider == spec.id for s in plan.sources)
    assert {s.source.format for s in plan.sources if s.source} <= {f.name for f in spec.formats}
    lookalikes = _home(spec, "lookalike_home", tmp_path)
    files = [p for p in lookalikes.rglob("*") if p.is_file()]
    assert files, "the look-alike home must hold files"
    assert make_plan({}, workspace="w", home=lookalikes, env={}, providers=(spec,)).sources == ()


@PROVIDERS
def test_imports_every_record_shape_exactly(spec: ProviderSpec, tmp_path: Path) -> None:
    expected = _manifest(spec)["expected"]
    catalog = tmp_path / "c.duckdb"
    result = _import(spec, _home(spec, "home", tmp_path), catalog)
    assert result.exit_code == 0
    kinds = dict(_query(catalog, "SELECT kind, count(*) FROM events GROUP BY ALL"))
    assert kinds == expected["events"]
    (calls, *sums) = _query(
        catalog,
        "SELECT count(*), sum(input_tokens), sum(cache_write_tokens), sum(cache_read_tokens), "
        "sum(output_tokens), sum(reasoning_tokens) FROM usage",
    )[0]
    got = {"calls": calls, **dict(zip(("input", "cache_write", "cache_read", "output", "reasoning"),
                                      (int(v or 0) for v in sums), strict=True))}  # fmt: skip
    assert got == expected["usage"]
    assert _query(catalog, "SELECT count(*) FROM sessions")[0][0] == expected["sessions"]
    assert (
        dict(_query(catalog, "SELECT reason, count(*) FROM rejects GROUP BY ALL"))
        == expected["rejects"]
    )


@PROVIDERS
def test_malformed_lines_are_rejected_and_the_rest_imports(
    spec: ProviderSpec, tmp_path: Path
) -> None:
    home = _home(spec, "home", tmp_path)
    clean = tmp_path / "clean.duckdb"
    _import(spec, home, clean)
    targets = _byte_offset_sources(spec, home)
    if not targets:
        pytest.skip("no append-only sources")
    for path in targets:
        with path.open("ab") as fh:
            fh.write(b'{"this is": not json\n\xff\xfe broken bytes\n')
    catalog = tmp_path / "c.duckdb"
    result = _import(spec, home, catalog)
    assert result.exit_code == 0
    reasons = dict(_query(catalog, "SELECT reason, count(*) FROM rejects GROUP BY ALL"))
    base = dict(_query(clean, "SELECT reason, count(*) FROM rejects GROUP BY ALL"))
    assert reasons.get("MALFORMED", 0) - base.get("MALFORMED", 0) == len(targets)
    assert reasons.get("BAD_ENCODING", 0) - base.get("BAD_ENCODING", 0) == len(targets)
    assert snapshot(catalog, ("events", "usage")) == snapshot(clean, ("events", "usage"))


@PROVIDERS
def test_unknown_major_format_version_refuses_the_source(
    spec: ProviderSpec, tmp_path: Path
) -> None:
    home = _home(spec, "drift_home", tmp_path)
    catalog = tmp_path / "c.duckdb"
    result = _import(spec, home, catalog)
    assert result.exit_code == 1
    assert result.refused and all(s.code == "SCHEMA_DRIFT" for s in result.refused)
    assert _query(catalog, "SELECT DISTINCT status FROM sources") == [("refused",)]
    # nothing of the drifting part was written; a second run refuses again (as reported
    # before: counted, exit 0)
    before = snapshot(catalog, TABLES)
    again = _import(spec, home, catalog)
    assert again.exit_code == 0 and [s.code for s in again.still_refused] == [
        s.code for s in result.refused
    ]
    assert snapshot(catalog, TABLES) == before


@PROVIDERS
def test_symlink_out_of_the_root_is_refused(spec: ProviderSpec, tmp_path: Path) -> None:
    if spec.support == "export":
        pytest.skip("a file named with --file has no provider root to escape")
    home = _home(spec, "home", tmp_path)
    plan = make_plan({}, workspace="w", home=home, env={}, providers=(spec,))
    victim = plan.sources[0].path
    outside = tmp_path / "outside" / victim.name
    outside.parent.mkdir()
    shutil.copy2(victim, outside)
    link = victim.with_name("zz-link-" + victim.name)
    link.symlink_to(outside)
    plan = make_plan({}, workspace="w", home=home, env={}, providers=(spec,))
    refused = [s for s in plan.sources if s.path == link]
    if not refused:  # the provider's predicate does not admit the link's name at all
        assert all(s.path != link for s in plan.sources)
        return
    assert refused[0].action == "refuse" and refused[0].code == "SOURCE_OUTSIDE_ROOT"


def _catalog_text(catalog: Path) -> str:
    """Every text value of every catalog table, as one string (what a reader of the
    catalog could see, independent of how DuckDB compresses it on disk)."""
    con = duckdb.connect(str(catalog), read_only=True)
    try:
        columns = con.execute(
            "SELECT table_name, column_name FROM information_schema.columns "
            "WHERE table_schema = 'main' AND data_type IN ('VARCHAR', 'JSON') ORDER BY ALL"
        ).fetchall()
        parts = [
            con.execute(f'SELECT string_agg("{column}", chr(10)) FROM "{table}"').fetchone()
            for table, column in columns
        ]
    finally:
        con.close()
    return "\n".join(str(part[0]) for part in parts if part and part[0] is not None)


def _redacted_kinds(catalog: Path) -> set[str]:
    """Event kinds (and ``title``) holding at least one redaction marker."""
    found = _query(
        catalog,
        "SELECT DISTINCT kind FROM events WHERE contains(coalesce(text, '') || "
        "coalesce(CAST(tool_input AS VARCHAR), ''), '[REDACTED:') "
        "UNION ALL SELECT 'title' FROM sessions WHERE contains(title, '[REDACTED:') LIMIT 100",
    )
    return {kind for (kind,) in found}


@PROVIDERS
def test_canaries_never_reach_the_catalog(spec: ProviderSpec, tmp_path: Path) -> None:
    """The canary home plants ``canaries`` whole and ``split_canaries`` cut across two
    chunks of a streamed message; none of them, nor a split one's second half, may be
    readable anywhere in the catalog (every text column of every table) or its files."""
    manifest = _manifest(spec)
    home = _home(spec, "canary_home", tmp_path)
    raw = b"".join(p.read_bytes() for p in home.rglob("*") if p.is_file())
    split = manifest.get("split_canaries", [])
    for canary in manifest["canaries"]:
        assert canary.encode() in raw, f"{canary} is not planted in the canary home"
    for canary in split:
        assert canary.encode() not in raw, f"{canary} must be planted cut in two"
        assert canary[-10:].encode() in raw, f"{canary}'s second half is not planted"
    catalog = tmp_path / "c.duckdb"
    assert _import(spec, home, catalog).exit_code == 0
    text = _catalog_text(catalog)
    con = duckdb.connect(str(catalog))
    con.execute("CHECKPOINT")
    con.close()
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("c.duckdb*"))
    for canary in manifest["canaries"]:
        assert canary not in text and canary.encode() not in stored
    for canary in split:
        assert canary[-10:] not in text, f"the second half of {canary} reached the catalog"


@PROVIDERS
def test_canaries_are_planted_in_every_text_bearing_field(
    spec: ProviderSpec, tmp_path: Path
) -> None:
    """Every event kind the provider imports from its positive home, and its session
    titles if it has any, carries a redacted canary in the canary home."""
    clean = tmp_path / "clean.duckdb"
    _import(spec, _home(spec, "home", tmp_path), clean)
    fields = set(_manifest(spec)["expected"]["events"])
    if _query(clean, "SELECT count(title) FROM sessions")[0][0]:
        fields.add("title")
    catalog = tmp_path / "c.duckdb"
    _import(spec, _home(spec, "canary_home", tmp_path), catalog)
    assert fields - _redacted_kinds(catalog) == set()


@PROVIDERS
def test_resume_after_append_equals_a_clean_import(spec: ProviderSpec, tmp_path: Path) -> None:
    home = _home(spec, "home", tmp_path)
    clean = tmp_path / "clean.duckdb"
    _import(spec, home, clean)
    targets = _byte_offset_sources(spec, home)
    if not targets:
        pytest.skip("no append-only sources")
    tails: dict[Path, bytes] = {}
    for path in targets:
        data = path.read_bytes()
        cut = data.rfind(b"\n", 0, len(data) // 2) + 1
        tails[path] = data[cut:]
        path.write_bytes(data[:cut])
    catalog = tmp_path / "c.duckdb"
    _import(spec, home, catalog)
    for path, tail in tails.items():
        with path.open("ab") as fh:
            fh.write(tail)
    result = _import(spec, home, catalog)
    assert result.exit_code == 0
    assert all(
        s.planned.continuity in ("validated-append", "unchanged", "updated") for s in result.sources
    )
    assert snapshot(catalog, TABLES) == snapshot(clean, TABLES)


@PROVIDERS
def test_idempotent_replay(spec: ProviderSpec, tmp_path: Path) -> None:
    home = _home(spec, "home", tmp_path)
    catalog = tmp_path / "c.duckdb"
    _import(spec, home, catalog)
    before = snapshot(catalog, TABLES)
    again = _import(spec, home, catalog)
    assert again.totals()["sources_opened"] == 0
    assert snapshot(catalog, TABLES) == before
