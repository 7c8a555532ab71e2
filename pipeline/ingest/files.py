"""Files the user names (``agentlake import --file PATH [--format NAME]``): sessions an agent
exported by hand, in a format no discovery root holds. Each named file is a source like
any other (its id from provider and path, byte-offset checkpoints, continuity, rejects);
only how it is found differs. Without ``--format`` the format is guessed from the file's
first bytes, and the plan says so."""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from agentlake.errors import ConfigurationError
from agentlake.extract.adapter import FormatSpec
from agentlake.extract.providers import REGISTRY, ProviderSpec
from agentlake.extract.sources import SourceFile, file_kind, source_id_for
from agentlake.load.checkpoint import Checkpoint

from .plan import (
    Plan,
    PlannedSource,
    SourceBindings,
    SourceIds,
    Unbound,
    bind_planned,
    classify,
    needs_binding,
)

SNIFF_BYTES: Final = 64 * 1024


@dataclass(frozen=True, slots=True)
class NamedFile:
    """A file named on the command line, with the export format it was named in (None:
    guess it from the content)."""

    path: Path
    format: str | None = None


def export_formats() -> list[tuple[ProviderSpec, FormatSpec]]:
    """Every format read from files the user exports, with its provider."""
    return [(spec, f) for spec in REGISTRY for f in spec.formats if f.origin == "export"]


def export_format(name: str) -> tuple[ProviderSpec, FormatSpec]:
    """The export format called ``name``; a usage error listing them otherwise."""
    known = export_formats()
    for spec, fmt in known:
        if fmt.name == name or name in fmt.aliases:
            return spec, fmt
    names = ", ".join(f.name for _, f in known) or "none"
    raise ConfigurationError(f"unknown export format {name!r}; --format takes one of: {names}")


def guess_format(path: Path) -> tuple[ProviderSpec, FormatSpec]:
    """The export format whose sniffer claims ``path``'s first bytes."""
    with path.open("rb") as fh:
        head = fh.read(SNIFF_BYTES)
    for spec, fmt in export_formats():
        if fmt.sniff is not None and fmt.sniff(head):
            return spec, fmt
    names = ", ".join(f.name for _, f in export_formats())
    raise ConfigurationError(
        f"{path}: no export format recognizes its content; name one with --format ({names})"
    )


def _source(path: Path, spec: ProviderSpec, fmt: FormatSpec) -> SourceFile | PlannedSource:
    """The named file as a source (symlinks followed: the user named it), or its refusal
    when it is not a regular file."""
    st = path.stat()
    if (kind := file_kind(st.st_mode)) is not None:
        what = "a directory" if stat.S_ISDIR(st.st_mode) else kind
        return PlannedSource(
            spec.id, path, source_id_for(spec.id, path), "not-a-file", "refuse",
            message=f"{what}, not a regular file; name a file with --file",
        )  # fmt: skip
    return SourceFile(
        spec.id, path, path.parent, fmt.position_kind, fmt.name,
        st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns,
    )  # fmt: skip


def plan_files(
    checkpoints: Mapping[str, Checkpoint],
    *,
    workspace: str,
    files: Sequence[NamedFile],
    restart_refused: bool = False,
    bindings: SourceBindings | None = None,
) -> Plan:
    """Classify each named file against its checkpoint, as discovery's sources are (and
    refused, as they are, when another workspace holds it)."""
    planned: list[PlannedSource | None] = []
    unbound: list[Unbound] = []
    ids = SourceIds(checkpoints)
    released = bindings.released() if bindings is not None else frozenset()
    guesses: list[tuple[str, str]] = []
    seen: set[Path] = set()
    for named in files:
        path = Path(os.path.realpath(named.path.expanduser()))
        if not path.exists():
            raise ConfigurationError(f"{named.path}: no such file")
        if path in seen:
            continue
        seen.add(path)
        if named.format is not None:
            spec, fmt = export_format(named.format)
        elif path.is_file():
            spec, fmt = guess_format(path)
            guesses.append((str(path), fmt.name))
        else:  # no content to tell a format from, so no provider to refuse it under
            what = "a directory" if path.is_dir() else file_kind(path.stat().st_mode)
            raise ConfigurationError(
                f"{named.path}: {what}, not a regular file; --file names the files an "
                "agent exported"
            )
        item = _source(path, spec, fmt)
        if isinstance(item, PlannedSource):
            planned.append(item)
        else:
            item, cp = ids.resolve(item)
            if needs_binding(bindings, released, item, cp):
                unbound.append((len(planned), spec, item, cp))
                planned.append(None)
            else:
                planned.append(classify(item, cp, spec, restart_refused=restart_refused))
    return Plan(
        workspace,
        (),
        bind_planned(planned, unbound, bindings, restart_refused),
        guesses=tuple(guesses),
    )
