"""What the CLI says: the same provider names and kinds everywhere, queries that are
text, counts of rows written, help that matches the code, and timestamps with a zone."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import duckdb
import pytest

from fixtures.synth import generate_claude_home
from tests.conftest import CliRunner

from .helpers import scalar


@pytest.fixture
def demo(demo_home_catalog: tuple[Path, Path]) -> tuple[Path, Path]:
    """The four-provider demo home and its catalog (read-only for these tests)."""
    return demo_home_catalog


def _json(cli: CliRunner, *args: str | Path) -> dict[str, object]:
    proc = cli(*args, "--json")
    assert proc.returncode == 0, proc.stderr
    return dict(json.loads(proc.stdout))


def test_every_command_takes_the_provider_aliases(cli: CliRunner, demo: tuple[Path, Path]) -> None:
    catalog = demo[1]
    for alias, canonical in (("claude", "claude-code"), ("gemini", "gemini-cli")):
        by_alias = _json(cli, "search", "c*", "--provider", alias, "--catalog", catalog)
        by_id = _json(cli, "search", "c*", "--provider", canonical, "--catalog", catalog)
        assert by_alias["hits"] and by_alias["hits"] == by_id["hits"]
        assert {h["provider"] for h in by_alias["hits"]} == {canonical}  # type: ignore[attr-defined]
        listed = _json(cli, "sessions", "list", "--provider", alias, "--catalog", catalog)
        assert {s["provider"] for s in listed["sessions"]} == {canonical}  # type: ignore[attr-defined]
        daily = _json(cli, "report", "daily", "--provider", alias, "--catalog", catalog)
        assert daily["filters"]["provider"] == canonical  # type: ignore[index]


@pytest.mark.parametrize(
    "args",
    [
        ("search", "cache", "--provider", "nope"),
        ("sessions", "list", "--provider", "nope"),
        ("report", "daily", "--provider", "nope"),
        ("report", "--unpriced", "--provider", "nope"),
        ("import", "--provider", "nope"),
        ("sources", "--provider", "nope"),
        ("doctor", "--provider", "nope"),
    ],
)
def test_an_unknown_provider_is_a_usage_error_listing_the_valid_ones(
    cli: CliRunner, demo: tuple[Path, Path], args: tuple[str, ...]
) -> None:
    home, catalog = demo
    extra = ("--home", str(home)) if args[0] in ("import", "sources", "doctor") else ()
    proc = cli(*args, *extra, "--catalog", catalog)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "unknown provider 'nope'" in proc.stderr
    assert "claude-code (claude)" in proc.stderr and "gemini-cli (gemini)" in proc.stderr


def test_an_unknown_kind_is_a_usage_error_listing_the_kinds(
    cli: CliRunner, demo: tuple[Path, Path]
) -> None:
    proc = cli("search", "cache", "--kind", "prompts", "--catalog", demo[1])
    assert proc.returncode == 2
    assert "unknown event kind 'prompts'" in proc.stderr and "tool_result" in proc.stderr


def test_a_query_may_start_with_a_dash(cli: CliRunner, demo: tuple[Path, Path]) -> None:
    catalog = demo[1]
    words = ("--mode", "lexical")  # the query's words alone
    plain = _json(cli, "search", "cache", "--catalog", catalog, *words)
    for query in ("-cache", "--cache"):
        proc = cli("search", query, "--catalog", catalog, "--json", *words)
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["hits"] == plain["hits"]  # only exclusions: the words
    assert plain["hits"]
    both = _json(cli, "search", "cache -cache", "--catalog", catalog, *words)
    assert both["hits"] == []  # beside a positive word, "-" still excludes


def test_search_timestamps_carry_their_zone(cli: CliRunner, demo: tuple[Path, Path]) -> None:
    hits = _json(cli, "search", "cache", "--catalog", demo[1])["hits"]
    stamps = [hit["ts"] for hit in hits if hit["ts"] is not None]  # type: ignore[attr-defined]
    assert stamps  # (an event without a time has none)
    for stamp in stamps:
        assert datetime.fromisoformat(stamp).utcoffset() is not None, stamp


def test_help_matches_the_code(cli: CliRunner) -> None:
    text = " ".join(cli("import", "--help").stdout.split())
    assert "a fifth" in text and "a quarter" not in text
    search = " ".join(cli("search", "--help").stdout.split())
    assert "--tz" not in search and "UTC" in search


def test_a_memory_limit_the_run_cannot_honour_is_refused_or_warned(
    cli: CliRunner, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    generate_claude_home(home, sessions=1)
    catalog = tmp_path / "c.duckdb"
    low = cli("import", "--home", home, "--catalog", catalog, "--memory-limit", "200MiB")
    assert low.returncode == 2 and "at least 384MiB" in low.stderr
    assert not catalog.exists()
    small = cli("import", "--home", home, "--catalog", catalog, "--memory-limit", "512MiB")
    assert small.returncode == 0
    assert "warning: --memory-limit 512MiB: DuckDB gets its floor of 128 MiB" in small.stderr


def test_counts_printed_are_rows_written(cli: CliRunner, tmp_path: Path) -> None:
    home = tmp_path / "home"
    generate_claude_home(home, sessions=3)
    catalog = tmp_path / "c.duckdb"
    first = _json(cli, "import", "--home", home, "--catalog", catalog)["totals"]
    events, calls = (scalar(catalog, f"SELECT count(*) FROM {t}") for t in ("events", "usage"))
    assert (first["events"], first["usage_rows"]) == (events, calls)  # type: ignore[index]
    # Re-reading every source as a new generation writes no row the catalog lacked.
    con = duckdb.connect(str(catalog))
    con.execute("UPDATE sources SET policy_version = policy_version - 1")
    con.close()
    again = cli("import", "--home", home, "--catalog", catalog, "--restart-drifted")
    assert again.returncode == 0, again.stderr
    assert " 0 new events, 0 new calls" in " ".join(again.stdout.split())
    assert (
        scalar(catalog, "SELECT count(*) FROM events"),
        scalar(catalog, "SELECT count(*) FROM usage"),
    ) == (events, calls)


def test_a_better_copy_of_a_call_is_no_new_call(cli: CliRunner, tmp_path: Path) -> None:
    project = tmp_path / "home" / ".claude" / "projects" / "-home-dev-demo"
    project.mkdir(parents=True)
    transcript = project / "5d0c8e1e-0000-4000-8000-00000000c001.jsonl"

    def chunk(output: int, n: int) -> str:
        return json.dumps({
            "type": "assistant", "sessionId": transcript.stem, "uuid": f"a-{n}",
            "timestamp": f"2026-05-01T09:00:0{n}.000Z", "requestId": "req_1", "version": "2.1.40",
            "message": {"id": "msg_1", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
                        "content": [{"type": "text", "text": f"part {n}"}],
                        "usage": {"input_tokens": 10, "output_tokens": output}},
        }) + "\n"  # fmt: skip

    transcript.write_text(chunk(5, 1))
    catalog = tmp_path / "c.duckdb"
    first = _json(cli, "import", "--home", tmp_path / "home", "--catalog", catalog)["totals"]
    assert first["usage_rows"] == 1  # type: ignore[index]
    with transcript.open("a") as fh:
        fh.write(chunk(50, 2))  # the same call streamed further: its larger copy wins
    second = _json(cli, "import", "--home", tmp_path / "home", "--catalog", catalog)["totals"]
    assert second["usage_rows"] == 0 and second["events"] == 1  # type: ignore[index]
    assert scalar(catalog, "SELECT count(*) || ' ' || sum(output_tokens) FROM usage") == "1 50"


def test_short_id_prefixes_behave_the_same_everywhere(
    cli: CliRunner, demo: tuple[Path, Path]
) -> None:
    home, catalog = demo
    ids = scalar(catalog, "SELECT list(session_id ORDER BY session_id) FROM sessions")
    some = ids[0]
    unknown = "zzz"  # as short as a matching prefix, and matching nothing
    for prefix in (some[:3], unknown):
        for args in (
            ("sessions", "show", prefix),
            ("search", "cache", "--session", prefix),
            ("doctor", prefix, "--home", home),
        ):
            proc = cli(*args, "--catalog", catalog)
            assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
            assert f"session id prefix {prefix!r} is too short" in proc.stderr, args
    for args in (("sessions", "show", "zzzz"), ("search", "cache", "--session", "zzzz")):
        proc = cli(*args, "--catalog", catalog)
        assert proc.returncode == 4 and "no session 'zzzz'" in proc.stderr, args
    assert cli("sessions", "show", some[:8], "--catalog", catalog).returncode == 0
    assert cli("search", "cache", "--session", some[:8], "--catalog", catalog).returncode == 0
