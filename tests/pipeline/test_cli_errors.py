"""Exit statuses and one-line messages of the CLI's error boundary."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from fixtures.synth import generate_claude_home
from tests.conftest import CliRunner, cli_env


def _one_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


@contextmanager
def _writer_held(catalog: Path) -> Iterator[None]:
    """Another process holds the catalog open for writing for the duration of the block."""
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys; from pathlib import Path; from agentlake.load.catalog import open_for_write\n"
         f"with open_for_write(Path({str(catalog)!r})):\n    print('held', flush=True); sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=cli_env(),
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        yield
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)


def test_second_writer_fails_fast_with_exit_5(run_cli: CliRunner, tmp_path: Path) -> None:
    catalog = tmp_path / "c.duckdb"
    with _writer_held(catalog):
        proc = run_cli("import", "--home", tmp_path, "--catalog", catalog)
        assert proc.returncode == 5
        assert "another import is writing" in _one_line(proc.stderr)
        report = run_cli("report", "daily", "--catalog", catalog)
        assert report.returncode == 5 and "--wait" in _one_line(report.stderr)
    assert run_cli("import", "--home", tmp_path, "--catalog", catalog).returncode == 0


def test_unknown_schema_version_is_refused_with_exit_6(run_cli: CliRunner, tmp_path: Path) -> None:
    catalog = tmp_path / "c.duckdb"
    assert run_cli("import", "--home", tmp_path, "--catalog", catalog).returncode == 0
    con = duckdb.connect(str(catalog))
    con.execute("INSERT INTO schema_version (version, name) VALUES (999, 'from the future')")
    con.close()
    for args in (("import", "--home", str(tmp_path)), ("report", "daily"), ("sql", "SELECT 1")):
        proc = run_cli(*args, "--catalog", catalog)
        assert proc.returncode == 6, (args, proc.stderr)
        assert "999" in _one_line(proc.stderr)


def test_not_a_catalog_is_refused_with_exit_6(run_cli: CliRunner, tmp_path: Path) -> None:
    catalog = tmp_path / "notes.duckdb"
    catalog.write_bytes(b"these are my notes, not a database\n" * 100)
    proc = run_cli("import", "--home", tmp_path, "--catalog", catalog)
    assert proc.returncode == 6
    _one_line(proc.stderr)
    assert catalog.read_bytes().startswith(b"these are my notes")


def test_missing_catalog_is_exit_4_and_bad_usage_is_exit_2(
    run_cli: CliRunner, tmp_path: Path
) -> None:
    proc = run_cli("report", "daily", "--catalog", tmp_path / "none.duckdb")
    assert proc.returncode == 4 and "agentlake import" in _one_line(proc.stderr)
    assert (
        run_cli("import", "--provider", "nope", "--catalog", tmp_path / "c.duckdb").returncode == 2
    )
    assert (
        run_cli("import", "--workspace", "no spaces", "--catalog", tmp_path / "c.duckdb").returncode
        == 2
    )
    assert run_cli("import", "--home", tmp_path, "--catalog", tmp_path / "c.duckdb").returncode == 0
    bad_sql = run_cli("sql", "SELEC 1", "--catalog", tmp_path / "c.duckdb")
    assert bad_sql.returncode == 2 and "SQL error" in _one_line(bad_sql.stderr)
    write = run_cli("sql", "DELETE FROM usage", "--catalog", tmp_path / "c.duckdb")
    assert write.returncode == 2  # read-only


def test_claude_config_dir_comma_list_replaces_the_default_root(
    run_cli: CliRunner, tmp_path: Path
) -> None:
    one, two, home = tmp_path / "one", tmp_path / "two", tmp_path / "home"
    generate_claude_home(one, sessions=2)
    generate_claude_home(two, sessions=3, seed=8)
    generate_claude_home(home, sessions=1, seed=9)  # not read: CLAUDE_CONFIG_DIR wins
    env = cli_env(CLAUDE_CONFIG_DIR=f"{one / '.claude'},{two / '.claude'}")
    proc = run_cli(
        "sources",
        "--home",
        home,
        "--provider",
        "claude",
        "--catalog",
        tmp_path / "c.duckdb",
        "--json",
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    plan = json.loads(proc.stdout)
    assert {r["origin"] for r in plan["roots"]} == {"CLAUDE_CONFIG_DIR"}
    paths = {s["path"] for s in plan["sources"]}
    assert paths and all(p.startswith((str(one), str(two))) for p in paths)
    assert any(p.startswith(str(one)) for p in paths) and any(p.startswith(str(two)) for p in paths)


def test_look_alike_files_are_not_admitted(run_cli: CliRunner, tmp_path: Path) -> None:
    home = tmp_path / "home"
    generate_claude_home(home, sessions=1)
    projects = home / ".claude" / "projects"
    (projects / "notes.jsonl").write_text('{"type":"user"}\n')  # not inside a project dir
    (projects / "-home-dev-x").mkdir(exist_ok=True)
    (projects / "-home-dev-x" / "cache.json").write_text("{}")  # not *.jsonl
    (home / ".claude" / "history.jsonl").write_text('{"display":"x"}\n')  # outside projects/
    proc = run_cli("sources", "--home", home, "--catalog", tmp_path / "c.duckdb", "--json")
    paths = [s["path"] for s in json.loads(proc.stdout)["sources"]]
    assert not any(p.endswith(("notes.jsonl", "cache.json", "history.jsonl")) for p in paths)


def test_relative_codex_home_is_ignored_with_a_warning(run_cli: CliRunner, tmp_path: Path) -> None:
    env = cli_env(CODEX_HOME="relative/codex")
    proc = run_cli("sources", "--home", tmp_path, "--provider", "codex", "--catalog", tmp_path / "c.duckdb",
                   "--json", env=env)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "warning: codex: CODEX_HOME='relative/codex' is relative" in proc.stderr
    roots = json.loads(proc.stdout)["roots"]
    assert all(str(r["path"]).startswith(str(tmp_path / ".codex")) for r in roots)


def test_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    catalog = tmp_path / "c.duckdb"
    home = tmp_path / "home"
    generate_claude_home(home, sessions=3)
    subprocess.run([sys.executable, "-m", "agentlake", "import", "--home", str(home), "--catalog", str(catalog)],
                   check=True, capture_output=True, env=cli_env())  # fmt: skip
    proc = subprocess.run(
        f"{sys.executable} -m agentlake sql 'SELECT e.* FROM events e, range(40)' --catalog {catalog} --csv | head -1",
        shell=True, capture_output=True, text=True, env=cli_env(),
    )  # fmt: skip
    assert proc.stdout.startswith("event_id,")
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr


def test_readers_during_an_import_fail_in_one_line_or_wait_with_wait(
    run_cli: CliRunner, tmp_path: Path
) -> None:
    catalog = tmp_path / "c.duckdb"
    assert run_cli("import", "--home", tmp_path, "--catalog", catalog).returncode == 0
    readers = [
        ("report", "daily"), ("report", "--unpriced"), ("sql", "SELECT 1"), ("search", "cache"),
        ("sessions", "list"), ("prices", "list"),
    ]  # fmt: skip
    with _writer_held(catalog):
        for args in readers:
            proc = run_cli(*args, "--catalog", catalog)
            assert proc.returncode == 5, args
            assert "an import is writing" in _one_line(proc.stderr), args
        waiting = subprocess.Popen(
            [sys.executable, "-m", "agentlake", "report", "daily", "--wait", "--json",
             "--catalog", str(catalog)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cli_env(),
        )  # fmt: skip
        assert waiting.stderr is not None
        assert "waiting for it to finish" in waiting.stderr.readline()
        assert waiting.poll() is None, "--wait must block while the import writes"
    out, err = waiting.communicate(timeout=60)
    assert waiting.returncode == 0, err
    assert json.loads(out)["report"] == "daily"
