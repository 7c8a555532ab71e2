"""Factory Droid CLI sessions (provider-formats-more §2).

Where Droid keeps them:

* ``~/.factory/sessions/<encoded-cwd>/<session>.jsonl``: the interactive session store
  (``<encoded-cwd>`` is the absolute path with ``/`` → ``-``), with the session's token
  totals beside it in ``<session>.settings.json`` (:mod:`.factory_settings`). A file
  directly in ``sessions/`` is admitted too (peers walk the whole tree).
* ``~/.factory/projects/<key>/<session>.jsonl``: named by AIWG as the transcript Droid's
  hooks point to; other tools keep redirected ``droid exec`` stream-json logs there.
  Which Droid versions write it is not known [?], so it is discovered and every record
  is sniffed (below).

The session store is JSONL: a ``session_start`` line (session ``id``, ``title`` /
``sessionTitle``, ``cwd``, ``owner``, ``version``, title flags), then ``message`` lines
(``id``, ``parentId``, ISO ``timestamp``, ``message{role, content[]}``) whose content is
Anthropic-style blocks: ``text``, ``thinking``, ``tool_use{id, name, input}``,
``tool_result{tool_use_id, content, is_error}`` (in a user message), ``image``.

Rules this adapter keeps:

* **Sniffing, per record.** Only Droid session-store records are mapped:
  ``session_start``, and ``message`` with a ``message`` object (a ``message`` whose
  ``message`` is not an object is invalid). A ``droid exec`` stream-json record
  (``system``, ``tool_call``, ``tool_result``, ``completion``, ``error``, or a
  ``message`` without ``message``: its ``role``/``text`` are top-level) and a record of
  AIWG's synthetic ``schemaVersion`` family (``session``/``user``/``assistant``/``tool``/
  ``session_end``: AIWG's own fixtures, not known to be written by Droid, §0.2) are
  rejected as ``UNKNOWN_RECORD`` with that reason, so such a file imports nothing and
  every line of it has a receipt (named with ``import --file``, it is read by the
  ``factory-droid-jsonl`` export format, :mod:`.factory_export`, which maps both
  families and reuses this module's mapping of the store's records). Stream-json usage is not imported either: Droid keeps
  no discoverable stream-json log of its own, and a run's ``completion.usage`` would
  repeat what the session's ``.settings.json`` totals already count.
* **Identity.** The session id is ``session_start.id``, else the file stem (equal in a
  real store, so the transcript and its ``.settings.json`` are one session). An id that
  changes after messages were mapped is an invalid record (AIWG refuses such files).
  Events are (session, message ``id``, block position).
* **System reminders.** Droid prefixes the person's text with injected
  ``<system-reminder>…</system-reminder>`` blocks. They become a ``system`` event and
  the rest of the text the prompt; block ``i`` of a message is event position ``2i``,
  and its prompt after a split is ``2i + 1``. User text that is machinery as a whole
  (``<environment_context>`` bootstrap messages) is ``system``.
* **Versions.** ``version`` is written as a number (``2``: the session-store format)
  or as a CLI semver (``"0.81.0"``). A number, or a string of digits, is the format's
  major version: outside :data:`KNOWN_FORMAT_MAJORS` it is drift (the source is
  refused). A semver or other string is the CLI's version (``cli_version``), never
  drift: CLI releases are frequent and do not name the record format.
* **Not mapped:** ``owner`` and ``hostId`` (no catalog column; a person's name),
  ``parentId`` (the previous message, not a session), unknown block types. Sub-agents
  (custom droids via a ``Task``-style tool) are not known to get files of their own [?].
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from ..adapter import FormatDrift, InvalidRecord, RecordOutcome, SourceContext, UnknownRecord
from ..rows import RowSink
from ..schema import BlockType
from ..sources import RelParts, Root, SourceFile
from ..values import json_text
from .cursor_fields import instant

PROVIDER_ID: Final = "factory"
ADAPTER_VERSION: Final = "1.0"
SESSION_FORMAT: Final = "factory-session"  # the session store, ~/.factory/sessions
PROJECT_FORMAT: Final = "factory-project"  # the hooks' transcripts, ~/.factory/projects
SETTINGS_FORMAT: Final = "factory-settings"  # <session>.settings.json token totals
KNOWN_FORMAT_MAJORS: Final = frozenset({1, 2})

#: Environment overrides. Droid documents none; both are peers' conventions:
#: ``DROID_SESSIONS_DIR`` (ccusage: a comma list of session-store directories) and
#: ``FACTORY_DIR`` (codeburn: the ``.factory`` directory itself).
ENV_OVERRIDES: Final = ("DROID_SESSIONS_DIR", "FACTORY_DIR")

_JSONL: Final = ".jsonl"
_SETTINGS: Final = ".settings.json"

# Record types of AIWG's synthetic family (with ``schemaVersion``), and of
# ``droid exec --output-format stream-json``.
AIWG_TYPES: Final = frozenset({"session", "user", "assistant", "tool", "session_end"})
STREAM_TYPES: Final = frozenset({"system", "tool_call", "tool_result", "completion", "error"})

_REMINDER: Final = re.compile(r"<system-reminder>.*?</system-reminder>\s*", re.DOTALL)
# User text that is machinery as a whole, not something the person typed.
_SYSTEM_PREFIXES: Final = ("<system-reminder>", "<environment_context>")
_DIGITS: Final = re.compile(r"\d{1,9}")

#: Title ranks (RAW_SESSION_SCHEMA): a title the person set, else Droid's own.
USER_TITLE_RANK: Final = 3
AUTO_TITLE_RANK: Final = 2


# --------------------------------------------------------------------------- discovery


def _absolute(value: str) -> Path | None:
    path = Path(value).expanduser()
    return path if path.is_absolute() else None


def roots(home: Path, env: Mapping[str, str]) -> list[Root]:
    """``$FACTORY_DIR`` when absolute, else ``~/.factory``: its ``sessions/`` (transcripts
    and settings) and ``projects/`` (transcripts). ``DROID_SESSIONS_DIR`` (comma list of
    absolute directories) replaces ``sessions/``. Relative values are ignored, with a
    warning: they would resolve against an unknowable working directory."""
    warnings: list[str] = []
    configured = env.get("FACTORY_DIR", "").strip()
    base, origin = home / ".factory", "default"
    if configured:
        chosen = _absolute(configured)
        if chosen is None:
            warnings.append(f"FACTORY_DIR={configured!r} is relative and was ignored")
        else:
            base, origin = chosen, "FACTORY_DIR"
    listed = [p.strip() for p in env.get("DROID_SESSIONS_DIR", "").split(",") if p.strip()]
    stores = [(p, "DROID_SESSIONS_DIR") for p in map(_absolute, listed) if p is not None]
    if len(stores) < len(listed):
        warnings.append("relative DROID_SESSIONS_DIR entries were ignored")
    if not stores:
        stores = [(base / "sessions", origin)]
    warning = "; ".join(warnings) or None
    found = [
        Root(PROVIDER_ID, path, why, formats=(SESSION_FORMAT, SETTINGS_FORMAT), max_depth=2,
             warning=warning if i == 0 else None)
        for i, (path, why) in enumerate(stores)
    ]  # fmt: skip
    found.append(Root(PROVIDER_ID, base / "projects", origin, formats=(PROJECT_FORMAT,),
                      max_depth=2))  # fmt: skip
    return found


def _named(rel: RelParts, suffix: str) -> bool:
    name = rel[-1]
    return name.endswith(suffix) and len(name) > len(suffix) and not name.startswith(".")


def owns_session(rel: RelParts) -> bool:
    """``<session>.jsonl`` directly in a session store or in its ``<encoded-cwd>/``."""
    return len(rel) <= 2 and _named(rel, _JSONL) and not rel[0].startswith(".")


def owns_project(rel: RelParts) -> bool:
    """``<key>/<session>.jsonl`` under ``projects/``."""
    return len(rel) == 2 and _named(rel, _JSONL) and not rel[0].startswith(".")


def owns_settings(rel: RelParts) -> bool:
    """``<session>.settings.json`` beside a session-store transcript."""
    return len(rel) <= 2 and _named(rel, _SETTINGS) and not rel[0].startswith(".")


def session_of(source: SourceFile, suffix: str) -> str:
    """The session a file names by its stem (``<session><suffix>``)."""
    return source.path.name[: -len(suffix)]


# --------------------------------------------------------------------------- values


def _text(value: Any) -> str | None:
    return value if type(value) is str and value else None


def _result_text(content: Any) -> str | None:
    """A tool result's content: text, or the texts of its blocks (images as a marker)."""
    if content is None or type(content) is str:
        return content
    if type(content) is list:
        texts = [
            b["text"] if type(b.get("text")) is str else "[image]"
            for b in content
            if type(b) is dict and (type(b.get("text")) is str or b.get("type") == "image")
        ]
        return "\n".join(texts) if texts else None
    return json_text(content)


def split_reminders(text: str) -> tuple[str | None, str | None]:
    """(the injected ``<system-reminder>`` blocks, the rest) of a user text; a text
    without a closed reminder is all rest."""
    if "<system-reminder>" not in text:
        return None, text
    reminders = [m.group(0).strip() for m in _REMINDER.finditer(text)]
    if not reminders:
        return None, text
    rest = _REMINDER.sub("", text).strip()
    return "\n\n".join(reminders), rest or None


def check_version(value: Any) -> str | None:
    """The CLI version a ``session_start.version`` names, if any; raises
    :class:`FormatDrift` for an unknown major format version (see the module doc)."""
    if value is None:
        return None
    if type(value) is str and _DIGITS.fullmatch(value):
        value = int(value)
    if type(value) is int:
        if value not in KNOWN_FORMAT_MAJORS:
            raise FormatDrift(
                f"Droid session format version {value} is unknown "
                f"(known: {', '.join(map(str, sorted(KNOWN_FORMAT_MAJORS)))})"
            )
        return None
    if type(value) is str:
        return value or None
    raise InvalidRecord("'version' is neither a number nor a version string")


def foreign_reason(record: dict[str, Any], kind: Any) -> str | None:
    """Why a record is not of the session store, if it is of a known other family."""
    named = type(kind) is str  # any JSON value may stand there; only a string names a type
    what = f"{kind[:40]!r}" if named else "a record without a 'type'"
    if (named and kind in AIWG_TYPES) or "schemaVersion" in record:
        return (
            f"{what} is a record of AIWG's synthetic factory-droid-jsonl family, "
            "not known to be written by Droid"
        )
    if (named and kind in STREAM_TYPES) or kind == "message":
        return (
            f"{what} is a droid exec stream-json record, not the session store; "
            "stream-json logs are not imported"
        )
    return None


# --------------------------------------------------------------------------- adapter


class DroidSessionAdapter:
    """Maps the records of a Droid session-store transcript (see the module docstring).

    ``ctx.memo`` keys: ``sid`` (the session id in use) and ``msgs`` (1 once a message
    was mapped: the id can no longer change).
    """

    def locate(self, source: SourceFile) -> SourceContext:
        """Session identity from the path: the file stem (``session_start.id`` replaces
        it when the file names one)."""
        return SourceContext(source, session_of(source, _JSONL))

    def map_record(
        self, record: dict[str, Any], offset: int, ctx: SourceContext, sink: RowSink
    ) -> RecordOutcome:
        """Map one line; records of other families are rejected with the reason."""
        self._resume(ctx)
        kind = record.get("type")
        if kind == "session_start":
            return self._start(record, ctx, sink)
        if kind == "message" and "message" in record:
            return self._message(record, offset, ctx, sink)
        reason = foreign_reason(record, kind)
        if reason is not None:
            raise UnknownRecord(reason)
        return "unknown"

    @staticmethod
    def _resume(ctx: SourceContext) -> None:
        """The session id in use: the memo's once known (a later run of the file starts
        from the path's), else the path's."""
        memo = ctx.memo
        sid = memo.get("sid")
        if sid is None:
            memo["sid"], memo["msgs"] = ctx.session_id, 0
        elif sid != ctx.session_id:
            ctx.session_id = sid

    def _start(self, rec: dict[str, Any], ctx: SourceContext, sink: RowSink) -> RecordOutcome:
        cli_version = check_version(rec.get("version"))
        sid, title, cwd = rec.get("id"), rec.get("sessionTitle", rec.get("title")), rec.get("cwd")
        for name, value in (("id", sid), ("title", title), ("cwd", cwd)):
            if value is not None and type(value) is not str:
                raise InvalidRecord(f"session_start '{name}' is not a string")
        memo = ctx.memo
        if sid and sid != memo["sid"]:
            if memo["msgs"]:
                raise InvalidRecord("session_start names another session than its messages")
            memo["sid"] = ctx.session_id = sid
        user_set = rec.get("isSessionTitleManuallySet") is True
        sink.session(
            memo["sid"],
            project_path=cwd or None,
            title=title or None,
            title_rank=USER_TITLE_RANK if user_set else AUTO_TITLE_RANK,
            cli_version=cli_version,
        )
        return "mapped"

    def _message(
        self, rec: dict[str, Any], offset: int, ctx: SourceContext, sink: RowSink
    ) -> RecordOutcome:
        msg = rec["message"]
        if type(msg) is not dict:
            raise InvalidRecord("'message' is not an object")
        role = msg.get("role")
        if type(role) is not str:
            raise InvalidRecord("'message.role' is not a string")
        blocks = content_blocks(msg.get("content"), "message.content")
        native = _text(rec.get("id")) or f"@{offset}"
        ctx.memo["msgs"] = 1
        emit_blocks(sink, ctx.session_id, native, instant(rec.get("timestamp")), role,
                    _text(msg.get("model")), blocks, offset)  # fmt: skip
        return "mapped"


def content_blocks(content: Any, name: str) -> list[Any]:
    """A message's content as a list of blocks (a string is one text block); raises
    :class:`InvalidRecord` for content of another type (named ``name``)."""
    if type(content) is str:
        return [{"type": "text", "text": content}]
    if content is None:
        return []
    if type(content) is not list:
        raise InvalidRecord(f"'{name}' is neither text nor a list")
    return content


def emit_blocks(
    sink: RowSink,
    sid: str,
    native: str,
    ts: str | None,
    role: str,
    model: str | None,
    blocks: list[Any],
    offset: int,
) -> list[tuple[int, dict[str, Any]]]:
    """The events of a message's blocks (block ``i`` at event position ``2i``); returns
    the (position, block) of the blocks of an unknown type, which map to nothing."""
    unknown: list[tuple[int, dict[str, Any]]] = []
    for i, block in enumerate(blocks):
        if type(block) is dict and not _block(sink, sid, native, 2 * i, ts, role, model,
                                              block, offset):  # fmt: skip
            unknown.append((2 * i, block))
    return unknown


def _block(
    sink: RowSink,
    sid: str,
    native: str,
    pos: int,
    ts: str | None,
    role: str,
    model: str | None,
    block: dict[str, Any],
    offset: int,
) -> bool:
    """The events of one content block at event position ``pos`` (and ``pos + 1``);
    ``False`` for a block of an unknown type (nothing emitted)."""
    btype = block.get("type")
    if btype == "text":
        text = block.get("text")
        if type(text) is not str:
            return True
        if role != "user":
            sink.event(sid, native, pos, ts, "text", role, text, offset, model=model)
            return True
        reminders, rest = split_reminders(text)
        if reminders is not None:
            sink.event(sid, native, pos, ts, "system", role, reminders, offset)
            pos += 1
        if rest is not None:
            kind: BlockType = "system" if rest.startswith(_SYSTEM_PREFIXES) else "text"
            sink.event(sid, native, pos, ts, kind, role, rest, offset)
    elif btype in ("thinking", "redacted_thinking", "reasoning"):
        thought = block.get("thinking", block.get("text"))
        sink.event(sid, native, pos, ts, "thinking", role, _text(thought), offset, model=model)
    elif btype == "tool_use":
        sink.event(
            sid, native, pos, ts, "tool_use", role, None, offset, model=model,
            tool_name=_text(block.get("name")), tool_call_id=_text(block.get("id")),
            tool_input=json_text(block.get("input")),
        )  # fmt: skip
    elif btype == "tool_result":
        is_error = block.get("is_error")
        sink.event(
            sid, native, pos, ts, "tool_result", role, _result_text(block.get("content")),
            offset, tool_call_id=_text(block.get("tool_use_id")),
            is_error=is_error if type(is_error) is bool else None,
        )  # fmt: skip
    elif btype == "image":
        sink.event(sid, native, pos, ts, "image", role, "[image]", offset)
    else:
        return False
    return True
