"""``agentlake report html``: token usage and cost as one self-contained HTML page of
charts (BokehJS inlined, no network when opened), filtered by provider in the page."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentlake.errors import ConfigurationError

if TYPE_CHECKING:
    from agentlake.load.lake import Catalog
    from agentlake.load.price_overrides import PriceOverrides
    from agentlake.read.reports import ReportFilter


@dataclass(frozen=True, slots=True)
class DashboardWritten:
    """A dashboard written: where, its size, the calls and providers it charts, how
    long reading and writing took, and the lake snapshot read (``None``: a file)."""

    path: Path
    bytes: int
    calls: int
    providers: tuple[str, ...]
    seconds: float
    snapshot: int | None

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` document of ``report html``."""
        return {
            "version": 1,
            "path": str(self.path),
            "bytes": self.bytes,
            "calls": self.calls,
            "providers": list(self.providers),
            "seconds": round(self.seconds, 3),
            "snapshot": self.snapshot,
        }


def write_dashboard(
    catalog: Catalog,
    workspace: str,
    flt: ReportFilter,
    out: Path,
    *,
    prices: PriceOverrides | None = None,
    now: datetime | None = None,
) -> DashboardWritten:
    """Write the dashboard of ``workspace``'s calls inside ``flt`` to ``out`` (replaced
    if it exists), whole or not at all, as the exports write theirs; readable by its
    owner only, like the catalog whose titles and paths it shows."""
    started = time.perf_counter()
    out = out.expanduser()
    if not out.parent.is_dir():
        raise ConfigurationError(f"{out.parent} is not a folder; create it or write elsewhere")
    from agentlake.read.dashboard.data import dashboard_data
    from agentlake.read.dashboard.page import page
    from agentlake.read.export_target import place, private_file, staged

    data = dashboard_data(catalog, workspace, flt, prices=prices)
    text = page(data, generated=now or datetime.now(UTC)).encode("utf-8")
    try:
        with staged(out, kind="file") as temp:
            with private_file(temp) as file:
                file.write(text)
            place(temp, out)
    except OSError as exc:
        raise ConfigurationError(f"cannot write {out}: {exc.strerror}") from None
    providers = tuple(sorted(set(data.days["provider"].to_pylist())))
    return DashboardWritten(out, len(text), data.calls, providers,
                            time.perf_counter() - started, data.snapshot)  # fmt: skip
