"""The generators of Copilot CLI, OpenCode and Factory Droid homes return what
agentlake's import of them holds, to the token: sessions, events, calls (usage rows)
and every token column (:class:`fixtures.synth.ExpectedStats`). Each small home shows
every behaviour its generator documents; each corpus the long-tailed mix the benchmark
imports."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pytest

from agentlake.ingest.run import ImportOptions, run_import
from fixtures.synth import (
    ALL_PROVIDERS,
    DEMO_PROVIDERS,
    ExpectedStats,
    generate_copilot_corpus,
    generate_copilot_home,
    generate_demo_home,
    generate_factory_corpus,
    generate_factory_home,
    generate_opencode_corpus,
    generate_opencode_home,
)

Generate = Callable[..., ExpectedStats]
#: case -> (generator, provider id, arguments)
CASES: dict[str, tuple[Generate, str, dict[str, Any]]] = {
    "copilot_home": (generate_copilot_home, "copilot", {}),
    "copilot_corpus": (generate_copilot_corpus, "copilot",
                       {"seed": 4, "target_lines": 2_500, "short_share": 0.4}),
    "opencode_home": (generate_opencode_home, "opencode", {}),
    "opencode_corpus": (generate_opencode_corpus, "opencode",
                        {"seed": 4, "target_lines": 2_500, "short_share": 0.4,
                         "legacy_share": 0.2}),
    "factory_home": (generate_factory_home, "factory", {}),
    "factory_corpus": (generate_factory_corpus, "factory",
                       {"seed": 4, "target_lines": 2_500, "short_share": 0.4}),
}  # fmt: skip
_TOTALS = (
    "SELECT (SELECT count(*) FROM sessions), (SELECT count(*) FROM events), count(*), "
    "coalesce(sum(input_tokens), 0), coalesce(sum(cache_write_tokens), 0), "
    "coalesce(sum(cache_read_tokens), 0), coalesce(sum(output_tokens), 0), "
    "coalesce(sum(reasoning_tokens), 0) FROM usage"
)


def _import(home: Path, catalog: Path, provider: str) -> None:
    result = run_import(
        ImportOptions(catalog=catalog, workspace="default", home=home, env={},
                      providers=(provider,), build_index=False)
    )  # fmt: skip
    assert result.exit_code == 0
    assert result.totals()["rejected"] == 0


def _rows(catalog: Path, sql: str) -> list[tuple[Any, ...]]:
    with duckdb.connect(str(catalog), read_only=True) as con:
        return con.execute(sql).fetchall()


def _expected(stats: ExpectedStats) -> tuple[int, ...]:
    return (stats.sessions, stats.events, stats.calls, stats.input_tokens,
            stats.cache_write_tokens, stats.cache_read_tokens, stats.output_tokens,
            stats.reasoning_tokens)  # fmt: skip


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_import_holds_what_the_generator_expects(case: str, tmp_path: Path) -> None:
    generate, provider, kwargs = CASES[case]
    home, catalog = tmp_path / "home", tmp_path / "c.duckdb"
    stats = generate(home, **kwargs)
    assert stats.calls > 0 and stats.output_tokens > 0
    files = [p for p in home.rglob("*") if p.is_file()]
    assert (len(files), sum(p.stat().st_size for p in files)) == (stats.files, stats.bytes)
    jsonl = sum(len(p.read_bytes().splitlines()) for p in home.rglob("*.jsonl"))
    if provider != "opencode":  # OpenCode's lines are its records: rows and files
        assert jsonl == stats.lines
    if "target_lines" in kwargs:
        assert stats.lines >= kwargs["target_lines"]
    _import(home, catalog, provider)
    assert _rows(catalog, _TOTALS) == [_expected(stats)]
    assert _rows(catalog, "SELECT count(*) FROM sessions WHERE project_path IS NULL") == [(0,)]
    # a second import of the unchanged home changes nothing
    _import(home, catalog, provider)
    assert _rows(catalog, _TOTALS) == [_expected(stats)]


def test_the_small_homes_show_what_their_generators_document(tmp_path: Path) -> None:
    home, catalog = tmp_path / "home", tmp_path / "c.duckdb"
    generate_demo_home(home, providers=("copilot", "opencode", "factory"))
    raw = b"".join(p.read_bytes() for p in (home / ".copilot").rglob("events.jsonl"))
    for kind in (b"session.model_change", b"subagent.started", b"session.resume",
                 b"session.info", b"assistant.reasoning", b'"parentToolCallId"'):  # fmt: skip
        assert kind in raw, kind
    assert raw.count(b'"type":"session.shutdown"') == 6  # five sessions, one resumed
    assert (home / ".local/share/opencode/opencode.db").is_file()
    assert list((home / ".local/share/opencode/storage/session").rglob("*.json"))
    assert len(list((home / ".factory/sessions").rglob("*.settings.json"))) == 4
    for provider in ("copilot", "opencode", "factory"):
        _import(home, catalog, provider)
    per = dict(_rows(catalog, "SELECT provider, count(*) FROM sessions GROUP BY ALL"))
    assert per == {"copilot": 5, "opencode": 6, "factory": 4}
    children = "SELECT count(*) FROM sessions WHERE parent_session_id IS NOT NULL"
    assert _rows(catalog, children) == [(1,)]  # OpenCode's task sub-agent
    sidechain = "SELECT count(*) > 0 FROM events WHERE provider = 'copilot' AND is_sidechain"
    assert _rows(catalog, sidechain) == [(True,)]  # Copilot's inline sub-agent
    models = _rows(catalog, "SELECT DISTINCT model FROM usage WHERE provider = 'factory'")
    assert {m for (m,) in models} == {"claude-sonnet-4-5", "gpt-5", "claude-haiku-4-5"}


def test_the_demo_home_keeps_its_four_providers_unless_told(tmp_path: Path) -> None:
    assert set(generate_demo_home(tmp_path / "a")) == set(DEMO_PROVIDERS)
    assert set(generate_demo_home(tmp_path / "b", providers=ALL_PROVIDERS)) == set(ALL_PROVIDERS)
    with pytest.raises(ValueError, match="no generator"):
        generate_demo_home(tmp_path / "c", providers=("windsurf",))
