"""The config file (pipeline/config.py): where it is found and the user prices it holds."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentlake.config import config_path, price_overrides_from_config, resolve_price_overrides
from agentlake.errors import ConfigurationError
from agentlake.load.catalog import open_for_read, open_for_write
from agentlake.load.price_overrides import PriceOverrides, apply_price_overrides
from tests.load.test_prices import add_call, cost

PRICES = '[models."from-file"]\ninput = 1\noutput = 1\n[models."both"]\ninput = 2\noutput = 2\n'


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def inputs(found: PriceOverrides | None) -> dict[str, float]:
    assert found is not None
    return {r["model"]: r["input_per_mtok"] for r in found.prices.to_pylist()}


# -- discovery --------------------------------------------------------------------------


def test_agentlake_config_names_the_file(tmp_path: Path) -> None:
    env = {"AGENTLAKE_CONFIG": str(tmp_path / "my.toml"), "XDG_CONFIG_HOME": "/elsewhere"}
    assert config_path(env) == tmp_path / "my.toml"


def test_xdg_config_home_is_used_when_agentlake_config_is_unset(tmp_path: Path) -> None:
    env = {"AGENTLAKE_CONFIG": "", "XDG_CONFIG_HOME": str(tmp_path)}
    assert config_path(env) == tmp_path / "agentlake" / "config.toml"


def test_the_default_is_under_the_home_config_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert config_path({}) == tmp_path / ".config" / "agentlake" / "config.toml"
    assert config_path({"AGENTLAKE_CONFIG": "~/a.toml"}) == tmp_path / "a.toml"


def test_the_process_environment_is_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTLAKE_CONFIG", str(tmp_path / "env.toml"))
    assert config_path() == tmp_path / "env.toml"


def test_a_missing_config_file_is_no_error(tmp_path: Path) -> None:
    assert price_overrides_from_config({"XDG_CONFIG_HOME": str(tmp_path)}) is None
    assert price_overrides_from_config({"AGENTLAKE_CONFIG": str(tmp_path / "none.toml")}) is None


def test_a_config_without_prices_has_no_overrides(tmp_path: Path) -> None:
    config = write(tmp_path / "config.toml", "# nothing yet\n")
    assert price_overrides_from_config({"AGENTLAKE_CONFIG": str(config)}) is None


# -- prices in the config ---------------------------------------------------------------


def test_the_price_file_is_relative_to_the_config_directory(tmp_path: Path) -> None:
    write(tmp_path / "conf" / "prices" / "mine.toml", PRICES)
    config = write(tmp_path / "conf" / "config.toml", '[prices]\nfile = "prices/mine.toml"\n')
    found = price_overrides_from_config({"AGENTLAKE_CONFIG": str(config)})
    assert inputs(found) == {"from-file": 1.0, "both": 2.0}
    assert found is not None and found.path == tmp_path / "conf" / "prices" / "mine.toml"


def test_the_price_file_may_start_with_a_tilde(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    write(tmp_path / "home" / "prices.toml", PRICES)
    config = write(tmp_path / "conf" / "config.toml", '[prices]\nfile = "~/prices.toml"\n')
    assert inputs(price_overrides_from_config({"AGENTLAKE_CONFIG": str(config)})) == {
        "from-file": 1.0,
        "both": 2.0,
    }


def test_inline_models_are_read(tmp_path: Path) -> None:
    config = write(
        tmp_path / "agentlake" / "config.toml",
        '[prices.models."inline"]\ninput = 3\noutput = 4\nmatch = "prefix"\n',
    )
    found = price_overrides_from_config({"XDG_CONFIG_HOME": str(tmp_path)})
    assert inputs(found) == {"inline": 3.0}
    assert found is not None and found.path == config
    assert found.aliases.to_pylist()[0]["kind"] == "prefix"


def test_a_file_and_inline_models_merge_and_inline_wins(tmp_path: Path) -> None:
    write(tmp_path / "prices.toml", PRICES)
    config = write(
        tmp_path / "config.toml",
        '[prices]\nfile = "prices.toml"\n\n[prices.models."both"]\ninput = 9\noutput = 9\n',
    )
    found = price_overrides_from_config({"AGENTLAKE_CONFIG": str(config)})
    assert inputs(found) == {"from-file": 1.0, "both": 9.0}
    assert found is not None and found.files == (tmp_path / "prices.toml", config)


def test_config_overrides_price_a_read_only_catalog(tmp_path: Path) -> None:
    catalog = tmp_path / "c.duckdb"
    with open_for_write(catalog) as con:
        call = add_call(con, "inline-model", input=1_000_000)
    write(
        tmp_path / "cfg" / "agentlake" / "config.toml",
        "[prices.models.inline-model]\ninput = 3\noutput = 4\n",
    )
    found = price_overrides_from_config({"XDG_CONFIG_HOME": str(tmp_path / "cfg")})
    assert found is not None
    with open_for_read(catalog) as con:
        apply_price_overrides(con, found)
        assert cost(con, call) == pytest.approx(3.0)


# -- broken configs ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[prices\nfile = 1\n", "line 1"),
        ("[catalogue]\npath = 'x'\n", "unknown config section [catalogue]"),
        ("prices = 3\n", "prices must be a table"),
        ("[prices]\nfiles = 'x.toml'\n", "unknown key 'files' in [prices]"),
        ("[prices]\nfile = 3\n", "prices.file = 3 is not a path"),
        ("[prices]\nfile = 'missing.toml'\n", "missing.toml, which is not a file"),
        ('[prices.models."m"]\ninput = 1\n', 'prices.models."m": missing output'),
        ('[prices.models."m"]\ninput = 1\noutput = 2\nmatch = "glob"\n', 'prices.models."m"'),
    ],
)
def test_a_broken_config_names_the_config_file(tmp_path: Path, text: str, expected: str) -> None:
    config = write(tmp_path / "config.toml", text)
    with pytest.raises(ConfigurationError) as caught:
        price_overrides_from_config({"AGENTLAKE_CONFIG": str(config)})
    message = str(caught.value)
    assert message.startswith(f"{config}: ")
    assert expected in message
    assert "\n" not in message and ";" in message


def test_a_broken_price_file_named_by_the_config_names_the_price_file(tmp_path: Path) -> None:
    prices = write(tmp_path / "prices.toml", '[models."m"]\ninput = -1\noutput = 1\n')
    config = write(tmp_path / "config.toml", '[prices]\nfile = "prices.toml"\n')
    with pytest.raises(ConfigurationError, match=r'models\."m": input = -1') as caught:
        price_overrides_from_config({"AGENTLAKE_CONFIG": str(config)})
    assert str(caught.value).startswith(f"{prices}: ")


def test_a_config_directory_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "config.toml").mkdir()
    with pytest.raises(ConfigurationError, match="cannot read the config file"):
        price_overrides_from_config({"AGENTLAKE_CONFIG": str(tmp_path / "config.toml")})


# -- an explicit --prices FILE ----------------------------------------------------------


def test_an_explicit_price_file_replaces_the_config(tmp_path: Path) -> None:
    config = write(tmp_path / "config.toml", '[prices.models."inline"]\ninput = 3\noutput = 4\n')
    explicit = write(tmp_path / "explicit.toml", '[models."explicit"]\ninput = 5\noutput = 6\n')
    env = {"AGENTLAKE_CONFIG": str(config)}
    assert inputs(resolve_price_overrides(None, env)) == {"inline": 3.0}
    found = resolve_price_overrides(explicit, env)
    assert inputs(found) == {"explicit": 5.0}
    assert found is not None and found.path == explicit


def test_an_explicit_price_file_does_not_read_a_broken_config(tmp_path: Path) -> None:
    config = write(tmp_path / "config.toml", "[prices\n")
    explicit = write(tmp_path / "explicit.toml", '[models."explicit"]\ninput = 5\noutput = 6\n')
    env = {"AGENTLAKE_CONFIG": str(config)}
    with pytest.raises(ConfigurationError):
        resolve_price_overrides(None, env)
    assert inputs(resolve_price_overrides(explicit, env)) == {"explicit": 5.0}


def test_a_missing_explicit_price_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="cannot read the price file"):
        resolve_price_overrides(tmp_path / "nope.toml", {})


def test_nothing_configured_means_no_overrides(tmp_path: Path) -> None:
    assert resolve_price_overrides(None, {"XDG_CONFIG_HOME": str(tmp_path)}) is None
