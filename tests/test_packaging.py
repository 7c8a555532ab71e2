"""The wheel installs one namespace, `agentlake`, with its console script and SQL files,
and never bare top-level names such as `load` or `sql`, nor the synthetic home generators
(`fixtures/synth`, development tooling)."""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, REPO


@pytest.mark.slow
def test_wheel_installs_into_a_fresh_venv(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "build",  # the sdist, then the wheel from it: no stale build/ of this tree
            "--no-isolation",
            "--outdir",
            str(dist),
            str(REPO),
        ],
        check=True,
        capture_output=True,
    )
    (wheel,) = dist.glob("agentlake-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/")[0] for n in names if not n.startswith("agentlake-")}
    assert top == {"agentlake"}
    assert (
        "agentlake/sql/001_initial.sql" in names
        and "agentlake/sql/queries/merge_usage.sql" in names
    )
    assert "agentlake/extract/providers/claude.py" in names
    # the synthetic home generators are development tooling (fixtures/synth), not library
    assert [n for n in names if "demo" in n or "synth" in n or "generat" in n] == []

    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    # Reuse this environment's already-installed dependencies (no network); the wheel's
    # own files come first on sys.path because they are in the new venv's site-packages.
    site = Path(sysconfig.get_paths()["purelib"])
    new_site = Path(
        subprocess.run(
            [py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    (new_site / "deps.pth").write_text(f"{site}\n")
    subprocess.run(
        [py, "-m", "pip", "install", "--no-deps", "--no-index", "-q", str(wheel)], check=True
    )

    helped = subprocess.run(
        [env_dir / "bin" / "agentlake", "--help"], capture_output=True, text=True, check=False
    )
    assert helped.returncode == 0 and "import" in helped.stdout
    assert " demo " not in helped.stdout
    probe = subprocess.run(
        [
            py,
            "-c",
            "import agentlake, agentlake.load.catalog as c; print(agentlake.__file__); "
            "print(c.SCHEMA_VERSION); import importlib.util as u; "
            "print(u.find_spec('load'), u.find_spec('sql'), u.find_spec('pipeline'))",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    lines = probe.stdout.splitlines()
    # the installed package carries its migrations and queries: a real import works
    catalog = tmp_path / "c.duckdb"
    imported = subprocess.run(
        [env_dir / "bin" / "agentlake", "import", "--home", FIXTURES / "claude" / "subagents",
         "--catalog", catalog, "--json"],
        capture_output=True, text=True, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert imported.returncode == 0, imported.stderr
    assert json.loads(imported.stdout)["totals"]["usage_rows"] == 4
    assert lines[0].startswith(str(new_site))
    assert int(lines[1]) >= 1
    assert lines[2] == "None None None"
