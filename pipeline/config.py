"""Where the catalog lives, which workspace a command acts on, and the user's config file
(``config.toml``: user price overrides, the import's ceilings).

Every command reads this module before it runs, so it imports no more than it needs to
name a catalog: the price overrides (and DuckDB with them) load when a file declares some."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Final

from agentlake.errors import ConfigurationError

if TYPE_CHECKING:
    from agentlake.load.lake import Catalog
    from agentlake.load.price_overrides import PriceOverrides

DEFAULT_WORKSPACE = "default"


def default_catalog(env: Mapping[str, str] | None = None) -> Path:
    """The default DuckDB file: ``$XDG_DATA_HOME/agentlake/catalog.duckdb``
    (``~/.local/share/agentlake/catalog.duckdb``)."""
    env = os.environ if env is None else env
    data = env.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data).expanduser() / "agentlake" / "catalog.duckdb"


def resolve_catalog(
    named: str | Path | None = None,
    *,
    data_path: str | Path | None = None,
    env: Mapping[str, str] | None = None,
) -> Catalog:
    """The catalog a command acts on: ``named`` (``--catalog``), else
    ``$AGENTLAKE_CATALOG``, else the config file's ``[catalog] url``, else
    :func:`default_catalog`. A DuckDB file's path, or a DuckLake URL
    (``ducklake:postgres:...``, ``ducklake:sqlite:FILE``) whose data path is
    ``data_path`` (``--data-path``), else ``$AGENTLAKE_DATA_PATH``, else the config
    file's ``[catalog] data_path``."""
    from agentlake.load.lake import parse_catalog

    env = os.environ if env is None else env
    settings = catalog_settings(env)
    text = str(named) if named else env.get("AGENTLAKE_CATALOG") or settings.get("url")
    if not text:
        return default_catalog(env)
    data = data_path or env.get("AGENTLAKE_DATA_PATH") or settings.get("data_path")
    return parse_catalog(text, data_path=str(data) if data else None)


_CATALOG_KEYS: Final = ("url", "data_path", "workspace")


def catalog_settings(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The config file's ``[catalog]`` table: ``url`` (a path or a DuckLake URL),
    ``data_path`` (a lake's Parquet folder) and ``workspace``; empty without one."""
    path = config_path(env)
    if not path.exists():
        return {}
    from agentlake.load.price_overrides import read_toml

    doc = read_toml(path, what="config file")
    _check_sections(path, doc)
    table = doc.get("catalog", {})
    if not isinstance(table, dict):
        raise ConfigurationError(f"{path}: catalog must be a table; write [catalog] with its keys")
    for key, value in table.items():
        if key not in _CATALOG_KEYS:
            raise ConfigurationError(
                f"{path}: unknown key {key!r} in [catalog]; use one of {', '.join(_CATALOG_KEYS)}"
            )
        if not isinstance(value, str) or not value.strip():
            raise ConfigurationError(f'{path}: catalog.{key} must be text, e.g. {key} = "..."')
    return {key: str(value) for key, value in table.items()}


def default_home(env: Mapping[str, str] | None = None) -> Path:
    """``$HOME`` (or the user's home directory): where the providers' roots are found."""
    env = os.environ if env is None else env
    return Path(env.get("HOME") or Path.home())


def default_workspace(
    env: Mapping[str, str] | None = None, *, catalog: Catalog | None = None
) -> str:
    """``$AGENTLAKE_WORKSPACE``, else the config file's ``[catalog] workspace``, else
    ``default`` for a DuckDB file and this machine's host name for a lake (each machine
    imports into its own workspace of a team's lake)."""
    env = os.environ if env is None else env
    if env.get("AGENTLAKE_WORKSPACE"):
        return check_workspace(env["AGENTLAKE_WORKSPACE"])
    if configured := catalog_settings(env).get("workspace"):
        return check_workspace(configured)
    from agentlake.load.lake import LakeCatalog

    return host_workspace() if isinstance(catalog, LakeCatalog) else DEFAULT_WORKSPACE


def host_workspace() -> str:
    """This machine's host name as a workspace name (other characters become ``-``)."""
    import socket

    name = socket.gethostname().split(".")[0] or DEFAULT_WORKSPACE
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in name)[:64]


def check_workspace(name: str) -> str:
    """A workspace name: 1–64 characters of letters, digits, ``-``, ``_`` or ``.``."""
    if not (0 < len(name) <= 64) or not all(c.isalnum() or c in "-_." for c in name):
        raise ConfigurationError(
            f"invalid workspace {name!r}: use 1-64 letters, digits, '-', '_' or '.'"
        )
    return name


def parse_size(text: str) -> int:
    """``"1GiB"``, ``"512MiB"``, ``"800MB"`` or plain bytes → bytes."""
    units = {
        "kib": 1 << 10,
        "mib": 1 << 20,
        "gib": 1 << 30,
        "kb": 10**3,
        "mb": 10**6,
        "gb": 10**9,
        "b": 1,
    }
    lowered = text.strip().lower()
    suffix = next((u for u in units if lowered.endswith(u)), "")
    number, factor = lowered[: len(lowered) - len(suffix)].strip(), units.get(suffix, 1)
    try:
        value = float(number)
    except ValueError:
        raise ConfigurationError(
            f"invalid size {text!r}: use e.g. 1GiB, 512MiB or a byte count"
        ) from None
    if value <= 0:
        raise ConfigurationError(f"invalid size {text!r}: must be positive")
    return int(value * factor)


def config_path(env: Mapping[str, str] | None = None) -> Path:
    """``$AGENTLAKE_CONFIG``, else ``$XDG_CONFIG_HOME/agentlake/config.toml``
    (``~/.config/agentlake/config.toml``)."""
    env = os.environ if env is None else env
    if env.get("AGENTLAKE_CONFIG"):
        return Path(env["AGENTLAKE_CONFIG"]).expanduser()
    base = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base).expanduser() / "agentlake" / "config.toml"


def price_overrides_from_config(env: Mapping[str, str] | None = None) -> PriceOverrides | None:
    """The user prices the config file (:func:`config_path`) declares, or None when it
    declares none or does not exist. Its ``[prices]`` table may name a price file
    (``file = "path"``, relative to the config file's directory, ``~`` expanded) and hold
    ``[prices.models."name"]`` tables in the same format (agentlake.load.prices); with
    both, an inline table wins over the file's entry of the same model. A broken config
    file raises :class:`ConfigurationError` naming it."""
    path = config_path(env)
    if not path.exists():
        return None
    from agentlake.load.price_overrides import load_price_overrides, parse_price_models, read_toml

    doc = read_toml(path, what="config file")
    _check_sections(path, doc)
    prices = doc.get("prices")
    if prices is None:
        return None
    if not isinstance(prices, dict):
        raise ConfigurationError(
            f'{path}: prices must be a table; write [prices] with file = "..." or '
            '[prices.models."<model name>"] tables'
        )
    for key in prices:
        if key not in ("file", "models"):
            raise ConfigurationError(
                f'{path}: unknown key {key!r} in [prices]; use file or [prices.models."<model name>"]'
            )
    found: list[PriceOverrides] = []
    if "file" in prices:
        found.append(load_price_overrides(_prices_file(path, prices["file"])))
    if "models" in prices:
        found.append(parse_price_models(prices["models"], path=path, table="prices.models"))
    if not found:
        return None
    return found[0] if len(found) == 1 else found[0].merged(found[1])


_SECTIONS: Final = ("prices", "import", "catalog")


def _check_sections(path: Path, doc: Mapping[str, object]) -> None:
    for section in doc:
        if section not in _SECTIONS:
            raise ConfigurationError(
                f"{path}: unknown config section [{section}]; this agentlake reads [prices], "
                "[import] and [catalog]"
            )


# ``[import]`` keys of the config file -> the ExtractLimits field each sets, and whether
# its value is a count or a size ("1GiB" or bytes).
IMPORT_KEYS: Final = {
    "source_records_ceiling": ("source_records", "count"),
    "source_bytes_ceiling": ("source_bytes", "size"),
    "max_document_bytes": ("max_document_bytes", "size"),
    "max_open_ids": ("max_open_ids", "count"),
}


def import_ceilings_from_config(env: Mapping[str, str] | None = None) -> dict[str, int]:
    """The ceilings the config file's ``[import]`` table sets, by ExtractLimits field
    (none when there is no file or no table), e.g. ``source_records_ceiling = 5000000``,
    ``source_bytes_ceiling = "4GiB"``, ``max_document_bytes = "128MiB"``,
    ``max_open_ids = 20000``. A broken value raises :class:`ConfigurationError` naming
    the file and the key."""
    path = config_path(env)
    if not path.exists():
        return {}
    import tomllib

    try:
        with path.open("rb") as handle:
            doc = tomllib.load(handle)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as exc:
        raise ConfigurationError(f"{path}: cannot read the config file ({exc}); fix it") from None
    _check_sections(path, doc)
    table = doc.get("import", {})
    if not isinstance(table, dict):
        raise ConfigurationError(f"{path}: import must be a table; write [import] with its keys")
    ceilings: dict[str, int] = {}
    for key, value in table.items():
        if key not in IMPORT_KEYS:
            raise ConfigurationError(
                f"{path}: unknown key {key!r} in [import]; use one of {', '.join(IMPORT_KEYS)}"
            )
        field, kind = IMPORT_KEYS[key]
        ceilings[field] = _ceiling(path, key, value, kind)
    return ceilings


def _ceiling(path: Path, key: str, value: object, kind: str) -> int:
    """A positive count, or a size given as bytes or text such as "1GiB"."""
    if kind == "size" and isinstance(value, str):
        try:
            return parse_size(value)
        except ConfigurationError as exc:
            raise ConfigurationError(f"{path}: import.{key}: {exc}") from None
    if type(value) is not int or value <= 0:
        what = "a positive number" + (
            ' of bytes or a size such as "1GiB"' if kind == "size" else ""
        )
        raise ConfigurationError(f"{path}: import.{key} = {value!r}; write {what}")
    return value


def _prices_file(config: Path, value: object) -> Path:
    """The price file named by ``[prices] file`` of the config file ``config``."""
    if not isinstance(value, str) or not value.strip():
        raise ConfigurationError(
            f"{config}: prices.file = {value!r} is not a path; write it in quotes, "
            'e.g. file = "prices.toml"'
        )
    path = Path(value).expanduser()
    if not path.is_absolute():
        path = config.parent / path
    if not path.is_file():
        raise ConfigurationError(
            f"{config}: prices.file names {path}, which is not a file; fix the path "
            "(a relative one starts at the config file's directory)"
        )
    return path


def resolve_price_overrides(
    prices_file: Path | None, env: Mapping[str, str] | None = None
) -> PriceOverrides | None:
    """The user prices in force: an explicit ``--prices FILE`` replaces the config
    file's (which is then not read); else those of the config file, if any."""
    if prices_file is not None:
        from agentlake.load.price_overrides import load_price_overrides

        return load_price_overrides(prices_file.expanduser())
    return price_overrides_from_config(env)


_DURATION_UNITS: Final = {"s": 1, "m": 60, "h": 3600, "d": 86_400}


def parse_duration(text: str, *, zero: bool = False) -> float:
    """``"90s"``, ``"10m"``, ``"1.5h"``, ``"7d"`` or plain seconds → seconds; positive,
    or with ``zero`` also nothing (``"0s"``)."""
    lowered = text.strip().lower()
    factor = _DURATION_UNITS.get(lowered[-1:], 1) if lowered else 1
    number = lowered[:-1] if lowered[-1:] in _DURATION_UNITS else lowered
    try:
        value = float(number)
    except ValueError:
        raise ConfigurationError(
            f"invalid duration {text!r}: use e.g. 90s, 10m, 1.5h or a number of seconds"
        ) from None
    if not (value > 0 or (zero and value == 0)):
        what = "positive or 0" if zero else "positive"
        raise ConfigurationError(f"invalid duration {text!r}: must be {what}")
    return value * factor
