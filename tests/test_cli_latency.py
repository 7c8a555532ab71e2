"""The CLI latency measurement (benchmarks/cli_latency.py) on the demo catalog: its
commands come from the catalog, each runs and is timed, and the document has the shape
the benchmark reads."""

from __future__ import annotations

from pathlib import Path

from benchmarks.cli_latency import cli_commands, measure_cli_latency
from tests.conftest import cli_env


def test_the_commands_name_a_session_and_words_of_the_catalog(
    demo_home_catalog: tuple[Path, Path],
) -> None:
    _, catalog = demo_home_catalog
    commands = cli_commands(catalog)
    assert {spec["group"] for spec in commands.values()} == {"help", "read"}
    show, common, rare = (
        commands[name]["args"][i]
        for name, i in (("sessions_show", 2), ("search_common", 1), ("search_rare", 1))
    )
    assert show and common.isalpha() and rare.isalpha() and common != rare
    assert commands["doctor_json"]["args"][-1] == "--json"


def test_every_command_is_timed(demo_home_catalog: tuple[Path, Path], tmp_path: Path) -> None:
    home, catalog = demo_home_catalog
    env = cli_env(HOME=str(home), AGENTLAKE_CONFIG=str(tmp_path / "no-config.toml"))
    result = measure_cli_latency(catalog, env=env, rounds=1)
    commands = result["commands"]
    assert set(commands) == set(cli_commands(catalog)) and result["rounds"] == 1
    for figures in commands.values():
        assert "agentlake" in " ".join(figures["argv"]) and len(figures["samples_s"]) == 1
        assert figures["p50_s"] == figures["samples_s"][0] > 0
    for group in ("help", "read"):
        medians = [c["p50_s"] for c in commands.values() if c["group"] == group]
        assert result[f"{group}_max_p50_s"] == max(medians)
