"""Tiny Humans OpenHuman: ``session_raw/<stem>.jsonl`` transcripts (provider-formats-more
§6), read as ``document`` sources.

Where: the base directory is ``$OPENHUMAN_WORKSPACE``, else ``~/.openhuman``; transcripts
are ``<base>/workspace/session_raw/<stem>.jsonl`` and, per user [?],
``<base>/<user>/workspace/session_raw/<stem>.jsonl`` (an override naming the workspace
itself: ``<base>/session_raw/<stem>.jsonl``). Older releases wrote
``session_raw/DDMMYYYY/<agent>_<index>.jsonl``. The Markdown views (``sessions/``) are
derived and never read.

OpenHuman REWRITES the whole file on every turn and may drop earlier messages (context
reduction): it is not append-only, so a byte offset means nothing in it. Each file is a
document: re-read whole when its content digest changes, its rows replaced by the new
state's (a dropped message leaves the catalog with the file's next state).

Records: line 1 is ``{"_meta": {agent, dispatcher, created, updated, turn_count,
input_tokens, output_tokens, cached_input_tokens, charged_amount_usd}}`` (positional);
every other line is a message ``{role, content}`` (``content`` a string; unknown keys
kept by OpenHuman, ignored here). Only the LAST assistant line carries ``model``,
``usage{input, output, cached_input, cost_usd}`` and ``ts``; no line has an id.

* Session id: the file stem (``<unix_ts>_<agent>``; the dated layout's stems repeat
  across days, so there it is ``<DDMMYYYY>/<stem>``). A sub-agent's stem is
  ``<parent stem>__<unix_ts>_<agent>``: its parent is the stem before the last ``__``.
* Events: ``user`` → prompt, ``assistant`` → response, ``system`` → system line,
  ``tool`` → tool result (tool calls are not structured: they are inside the
  assistant's text). A message's native id is ``<role>:<content digest>:<n>`` (``n``
  counts earlier lines of the same role and content), so it survives earlier messages
  being dropped and an export of the session (:mod:`.openhuman_export`) names the same
  events. Times: lines have none; each borrows ``_meta.created`` (a stable lower bound),
  except the line with its own ``ts``.
* Tokens: the ``_meta`` counters are the session's CUMULATIVE totals over all provider
  calls; they are the one usage row counted, of session granularity (native id
  :data:`SESSION_TOTAL`, rank = its total, so a later rewrite replaces it and snapshots
  are never summed). The last line's ``usage`` is only the newest turn (earlier turns'
  figures are lost at the next rewrite) and is already inside ``_meta``: it is not
  counted, only its ``model`` names the row's model. ``input = input_tokens −
  cached_input_tokens`` (cached input taken as part of input, as both examples suggest
  [?]), ``cache_read = cached_input_tokens``, ``output = output_tokens``.
* Versions: the header carries none today; a ``_meta.schema_version`` (or ``version``)
  whose major is not 1 is taken as a new major [?] and refuses the file.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from ..adapter import FormatDrift, InvalidRecord, RecordOutcome, SourceContext, UnknownRecord
from ..rows import RowSink
from ..schema import BlockType
from ..sources import RelParts, Root, SourceFile, rel_parts
from ..values import token_count, version_major

PROVIDER: Final = "openhuman"
ADAPTER_VERSION: Final = "1.0"
NATIVE_FORMAT: Final = "openhuman-session-raw"
ENV: Final = "OPENHUMAN_WORKSPACE"
SESSION_TOTAL: Final = "session-total"
KNOWN_MAJORS: Final = frozenset({1})

# The closed set of message roles → the block type each becomes.
ROLES: Final[dict[str, BlockType]] = {
    "user": "text",
    "assistant": "text",
    "system": "system",
    "tool": "tool_result",
}
_RAW: Final = "session_raw"


def roots(home: Path, env: Mapping[str, str]) -> list[Root]:
    """``$OPENHUMAN_WORKSPACE`` if set, else ``~/.openhuman``."""
    configured = env.get(ENV, "").strip()
    if configured:
        return [Root(PROVIDER, Path(configured).expanduser(), ENV)]
    return [Root(PROVIDER, home / ".openhuman", "default")]


def _is_day(name: str) -> bool:
    return len(name) == 8 and name.isascii() and name.isdigit()


def _stem_ok(name: str) -> bool:
    return name.endswith(".jsonl") and len(name) > 6 and not name.startswith(".")


def owns(rel: RelParts) -> bool:
    """``[<user>/][workspace/]session_raw/[DDMMYYYY/]<stem>.jsonl`` under the base."""
    if _RAW not in rel:
        return False
    at = rel.index(_RAW)
    prefix, rest = rel[:at], rel[at + 1 :]
    if prefix and not (prefix[-1] == "workspace" and len(prefix) <= 2):
        return False
    if len(rest) == 1:
        return _stem_ok(rest[0])
    return len(rest) == 2 and _is_day(rest[0]) and _stem_ok(rest[1])


def session_of(rel: RelParts) -> tuple[str, str | None]:
    """The session id and parent session id of a transcript (its path parts below the
    root): the stem, ``<day>/<stem>`` in the dated layout; the parent from ``__``."""
    stem = rel[-1].removesuffix(".jsonl")
    if len(rel) >= 2 and _is_day(rel[-2]):
        return f"{rel[-2]}/{stem}", None
    parent = stem.rsplit("__", 1)[0] if "__" in stem else None
    return stem, parent or None


def message_id(role: str, content: str, seen: dict[str, int]) -> str:
    """The native id of a message: role, digest of its content and how many messages of
    the same role and content came before it (``seen`` counts them)."""
    digest = hashlib.blake2b(content.encode(), digest_size=8).hexdigest()
    key = f"{role}:{digest}"
    n = seen.get(key, 0)
    seen[key] = n + 1
    return f"{key}:{n}"


def mtime_iso(source: SourceFile) -> str:
    """The file's modification time as ISO text (UTC, seconds)."""
    return datetime.fromtimestamp(source.mtime_ns // 1_000_000_000, UTC).strftime(
        "%Y-%m-%dT%H:%M:%SZ"
    )


def _opt_str(value: Any, name: str) -> str | None:
    if value is None:
        return None
    if type(value) is not str:
        raise InvalidRecord(f"'{name}' is not a string")
    return value or None


class SessionRawAdapter:
    """Maps the lines of one ``session_raw`` transcript (see the module docstring); the
    framework hands it every line of the file anew whenever the file changes."""

    def locate(self, source: SourceFile) -> SourceContext:
        """The session the file's path names (and its parent, for a sub-agent)."""
        sid, parent = session_of(rel_parts(source))
        return SourceContext(source, sid, parent)

    def map_record(
        self, record: dict[str, Any], offset: int, ctx: SourceContext, sink: RowSink
    ) -> RecordOutcome:
        """The ``_meta`` header (first line only) or one message."""
        memo = ctx.memo
        first = "started" not in memo
        if first:
            memo["started"], memo["seen"] = 1, {}
            sink.session(ctx.session_id, parent_session_id=ctx.parent_session_id)
        if "_meta" in record:
            if not first:
                raise InvalidRecord("a _meta header after the first line")
            self._meta(record["_meta"], ctx, sink)
            return "mapped"
        role = record.get("role")
        if role is None:
            return "unknown"
        if type(role) is not str:
            raise InvalidRecord("'role' is not a string")
        block = ROLES.get(role)
        if block is None:
            raise UnknownRecord(f"unknown message role {role[:40]!r}")
        content = record.get("content")
        if type(content) is not str:
            raise InvalidRecord("'content' is not a string")
        model = _opt_str(record.get("model"), "model")
        ts = _opt_str(record.get("ts"), "ts") or memo.get("created")
        native = message_id(role, content, memo["seen"])
        sid = ctx.session_id
        if block == "tool_result":
            sink.event(sid, native, 0, ts, block, role, content, offset)
        else:
            sink.event(sid, native, 0, ts, block, role, content, offset, model=model)
        if model is not None:
            memo["model"] = model
            sink.session(sid, model=model)
        if record.get("ts") is not None:
            memo["last_ts"] = ts
        return "mapped"

    @staticmethod
    def _meta(meta: Any, ctx: SourceContext, sink: RowSink) -> None:
        if type(meta) is not dict:
            raise InvalidRecord("'_meta' is not an object")
        version = meta.get("schema_version", meta.get("version"))
        if version is not None and version_major(version) not in KNOWN_MAJORS:
            raise FormatDrift(f"OpenHuman transcript version {str(version)[:20]} is unknown")
        created = _opt_str(meta.get("created"), "created")
        updated = _opt_str(meta.get("updated"), "updated")
        counts = [
            token_count(meta.get(k))
            for k in ("input_tokens", "cached_input_tokens", "output_tokens")
        ]
        memo = ctx.memo
        memo["created"], memo["updated"], memo["tokens"] = created, updated, counts
        sink.session(ctx.session_id, started_at=created, updated_at=updated)

    def end_document(self, ctx: SourceContext, sink: RowSink) -> None:
        """The session's one usage row from the ``_meta`` totals, with the model of the
        last assistant line (known only once every line is read)."""
        memo = ctx.memo
        inp, cached, out = memo.get("tokens") or (0, 0, 0)
        total = max(inp, cached) + out
        if total == 0:
            return
        # A call needs a time to be put on a day: the file's mtime when the header has none.
        ts = memo.get("updated") or memo.get("last_ts") or memo.get("created")
        ts = ts or mtime_iso(ctx.source)
        sink.usage(
            ctx.session_id, None, None, SESSION_TOTAL, ts, memo.get("model"),
            max(inp - cached, 0), 0, 0, cached, out, 0, False, 0,
            rank=total, per_session=True,
        )  # fmt: skip
