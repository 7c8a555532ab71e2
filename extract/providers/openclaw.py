"""OpenClaw (formerly Clawdbot): ``<state>/agents/<agentId>/sessions/<sessionId>.jsonl``.

Field-level format: provider-formats-more §5; records are mapped by
:mod:`.openclaw_records`. The state directory is ``$OPENCLAW_STATE_DIR``, else
``~/.openclaw``, else the legacy ``~/.clawdbot`` (only when ``~/.openclaw`` is absent:
OpenClaw's migration may leave the old name behind as a link to the new one).

What is a source (relative to ``<state>/agents``):

* ``<agent>/sessions/<id>.jsonl`` — a live session transcript, append-only (byte offset);
* ``<agent>/sessions/<id>.jsonl.deleted.<ts>`` and ``….jsonl.reset.<ts>`` — a deleted
  or reset session's transcript, renamed aside. They are read like live ones because they
  may hold billed calls no other file has; the session id is the part before ``.jsonl``
  and every event and call is keyed by the records' own ids, so a history whose records
  also sit in a live file (or in the SQLite store) adds nothing twice.

* ``<agent>/agent/openclaw-agent.sqlite`` — the newer per-agent store
  (:mod:`.openclaw_store`), re-read whole when it changes.

The agent id is the first part of a source's path below the root (``agents/<agentId>``);
the catalog has no column of its own for it, so it is read from ``sources.path`` of the
session's events and calls. Session ids are UUIDs, unique across agents, so they carry
no agent prefix.

Never sources: ``sessions.json`` (the index), ``*.jsonl.lock`` (writer locks),
``*.trajectory.jsonl`` (derived trajectories), anything else in the state dir.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from ..adapter import RecordOutcome, SourceContext
from ..rows import RowSink
from ..sources import RelParts, Root, SourceFile, rel_parts
from .openclaw_records import RecordMapper, session_id_of

PROVIDER: Final = "openclaw"
ADAPTER_VERSION: Final = "1.0"
TRANSCRIPT_FORMAT: Final = "openclaw-jsonl"
STORE_FORMAT: Final = "openclaw-sqlite"
STATE_ENV: Final = "OPENCLAW_STATE_DIR"

# <sessionId>.jsonl, optionally renamed aside as .deleted.<ts> / .reset.<ts>.
_TRANSCRIPT: Final = re.compile(r"^[^/]+?\.jsonl(?:\.(?:deleted|reset)\.[^/]+)?$")


def roots(home: Path, env: Mapping[str, str]) -> list[Root]:
    """``$OPENCLAW_STATE_DIR/agents`` (``~`` expanded against ``home``; a relative value
    is ignored with a warning), else ``~/.openclaw/agents``, else ``~/.clawdbot/agents``."""
    configured = env.get(STATE_ENV, "").strip()
    warning = None
    if configured:
        path = Path(configured)
        if configured == "~" or configured.startswith("~/"):
            path = home / configured[2:]
        if path.is_absolute():
            return [Root(PROVIDER, path / "agents", STATE_ENV)]
        warning = f"{STATE_ENV}={configured!r} is relative and was ignored; set an absolute path"
    state, origin = home / ".openclaw", "default"
    legacy = home / ".clawdbot"
    if not state.is_dir() and legacy.is_dir():
        state, origin = legacy, "default (legacy ~/.clawdbot)"
    return [Root(PROVIDER, state / "agents", origin, warning=warning)]


def owns_transcript(rel: RelParts) -> bool:
    """``<agent>/sessions/<id>.jsonl`` and its ``.deleted.<ts>``/``.reset.<ts>`` copies;
    never ``.lock`` files or ``*.trajectory.jsonl``."""
    if len(rel) != 3 or rel[1] != "sessions":
        return False
    name = rel[2]
    return (
        _TRANSCRIPT.match(name) is not None
        and not name.startswith(".jsonl")
        and ".trajectory.jsonl" not in name
    )


class TranscriptAdapter:
    """Maps the lines of one session transcript; the adapter memo is the session's
    running state (current model and provider, last time seen)."""

    def __init__(self) -> None:
        self._mapper = RecordMapper()

    def locate(self, source: SourceFile) -> SourceContext:
        """The session id is the file name's part before ``.jsonl``."""
        name = rel_parts(source)[-1]
        return SourceContext(source, session_id_of(name) or name)

    def map_record(
        self, record: dict[str, Any], offset: int, ctx: SourceContext, sink: RowSink
    ) -> RecordOutcome:
        """Map one transcript line (see :mod:`.openclaw_records`)."""
        return self._mapper.map(record, ctx.session_id, offset, ctx.memo, sink)
