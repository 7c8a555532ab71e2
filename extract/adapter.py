"""The small contract every provider adapter implements.

The framework (``extract.extract``) owns the loop: it opens the source, reads bounded
batches from the checkpoint, classifies bad lines and builds Arrow tables. An adapter
only says where a file's session is (:meth:`Adapter.locate`) and maps one parsed record
to rows (:meth:`Adapter.map_record`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from .rows import RowSink
from .sources import SourceFile

RecordOutcome = Literal["mapped", "ignored", "unknown"]
"""``mapped``: rows emitted; ``ignored``: a known record type with nothing to import;
``unknown``: a record type the adapter does not know (rejected as UNKNOWN_RECORD)."""


class InvalidRecord(ValueError):
    """A known record type whose fields have impossible types (rejected, not fatal)."""


class FormatDrift(ValueError):
    """A record declares a major format version the adapter does not know."""


@dataclass(slots=True)
class SourceContext:
    """Per-source state an adapter keeps while mapping records of one file.

    ``session_id``/``parent_session_id`` come from :meth:`Adapter.locate`; ``memo`` is the
    adapter's scratch space for this run (e.g. the last metadata it emitted).
    """

    source: SourceFile
    session_id: str
    parent_session_id: str | None = None
    memo: dict[str, Any] = field(default_factory=dict)


class Adapter(Protocol):
    """What a provider module implements."""

    def locate(self, source: SourceFile) -> SourceContext:
        """Session identity of a file, from its path alone."""
        ...

    def map_record(
        self, record: dict[str, Any], offset: int, ctx: SourceContext, sink: RowSink
    ) -> RecordOutcome:
        """Map one parsed record (at byte ``offset``) to rows in ``sink``.

        Raises :class:`InvalidRecord` for a known record with impossible field types and
        :class:`FormatDrift` for an unknown major format version.
        """
        ...
