"""What a benchmark run is given (:class:`Settings`) and what its phases share
(:class:`Context`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fixtures.synth import HomeStats

from . import corpus

__all__ = ["Context", "Settings"]


@dataclass(frozen=True)
class Settings:
    """One run's parameters."""

    events: int
    seed: int
    providers: tuple[str, ...]
    out: Path
    work: Path | None = None  # None: a temporary directory, removed at the end
    ccusage_dir: Path | None = None
    enforce_budgets: bool = True
    strict: bool = False
    max_wall_s: float | None = None
    search_queries: int = 60
    search_rounds: int = 2
    listing_rounds: int = 3
    report_samples: int = 9
    rerun_samples: int = 3
    cli_rounds: int = 5
    cold_rerun: bool = True  # drop the page cache before re-runs (needs root)
    argv: tuple[str, ...] = ()


@dataclass
class Context:
    """What the phases share: paths, the plan and the figures later phases use."""

    settings: Settings
    work: Path
    plan: corpus.CorpusPlan
    env: dict[str, str]
    written: dict[str, HomeStats] = field(default_factory=dict)
    figures: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def home(self) -> Path:
        return self.work / "home"

    @property
    def catalog(self) -> Path:
        return self.work / "catalog.duckdb"

    @property
    def usage_ready(self) -> Path:
        """The catalog of the import without the publish step (then indexed alone)."""
        return self.work / "usage-ready.duckdb"
