"""Where the catalog lives and which workspace a command acts on."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from .errors import ConfigurationError

DEFAULT_WORKSPACE = "default"


def default_catalog(env: Mapping[str, str] | None = None) -> Path:
    """``$AGENTLAKE_CATALOG``, else ``$XDG_DATA_HOME/agentlake/catalog.duckdb``
    (``~/.local/share/agentlake/catalog.duckdb``)."""
    env = os.environ if env is None else env
    if env.get("AGENTLAKE_CATALOG"):
        return Path(env["AGENTLAKE_CATALOG"]).expanduser()
    data = env.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data).expanduser() / "agentlake" / "catalog.duckdb"


def default_workspace(env: Mapping[str, str] | None = None) -> str:
    """``$AGENTLAKE_WORKSPACE``, else ``default``."""
    env = os.environ if env is None else env
    return check_workspace(env.get("AGENTLAKE_WORKSPACE") or DEFAULT_WORKSPACE)


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
