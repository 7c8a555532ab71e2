"""A provider's row in the registry (:data:`agentlake.extract.providers.REGISTRY`): its
formats, roots, capabilities and where its fixtures, tests and documentation are."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..adapter import FormatSpec
from ..sources import Root, SourceFile

# discover: found under the home with no effort; stream: read incrementally (byte
# offsets, or a store's watermark); enrich: a side store adds to sessions read elsewhere;
# tokens: model calls with token counts; subagents: sub-agent sessions linked to parents.
Capability = Literal["discover", "stream", "enrich", "tokens", "subagents"]
Support = Literal["native", "export", "both"]


@dataclass(frozen=True)
class ProviderSpec:
    """One row of the registry: everything the framework needs to know of a provider."""

    id: str
    aliases: tuple[str, ...]
    env_overrides: tuple[str, ...]
    roots: Callable[[Path, Mapping[str, str]], list[Root]]
    formats: tuple[FormatSpec, ...]
    capabilities: frozenset[Capability]
    adapter_version: str
    fixtures: tuple[str, ...]
    tests: tuple[str, ...]
    # Sources to leave out because another copy of the same transcript is preferred
    # (e.g. Cursor's duplicate composer stems): {source_id: reason}.
    superseded: Callable[[Sequence[SourceFile]], dict[str, str]] | None = None
    # Where a capability holds for some of the provider's formats or records only.
    exceptions: tuple[str, ...] = ()

    @property
    def support(self) -> Support:
        """Whether the provider is read from its native store, from exports, or both."""
        origins = {f.origin for f in self.formats}
        return "both" if len(origins) > 1 else ("export" if origins == {"export"} else "native")

    @property
    def docs(self) -> tuple[str, ...]:
        """The modules whose docstrings document the provider's formats."""
        return tuple(dict.fromkeys(f.module for f in self.formats))

    @property
    def adapter_major(self) -> int:
        """Major part of the adapter version; a change refuses old checkpoints (drift)."""
        return int(self.adapter_version.split(".", 1)[0])

    def format_of(self, source: SourceFile) -> FormatSpec:
        """The format a discovered source was admitted as."""
        return next(f for f in self.formats if f.name == source.format)
