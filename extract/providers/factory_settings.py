"""Factory Droid ``<session>.settings.json``: the session's model and its CUMULATIVE
token totals (provider-formats-more §2, read as ccusage reads it).

The document holds ``model`` (a display name such as ``"Claude-Sonnet-4-[Anthropic]"``
or ``"custom:…"``), ``providerLock``, ``providerLockTimestamp`` (ISO, the file's only
clock) and ``tokenUsage{inputTokens, outputTokens, cacheCreationTokens,
cacheReadTokens, thinkingTokens, totalTokens?}``; Droid rewrites it as the session grows.
Other keys (reasoning effort, autonomy mode…) are not read [?].

Token rule: the totals are one snapshot of the whole session, so they are stored as ONE
usage row of session granularity, never summed with another snapshot:

* identity: a row of session granularity (``per_session``) with no message id and the
  native id :data:`SESSION_TOTAL`, so every snapshot of a session (a rewritten file, an
  archived copy) is the same row. (A message id would make it one row across all
  sessions: the call id of a row with a message id is not scoped by session.)
* ``rank`` = the snapshot's token total, which only grows: the latest (largest)
  snapshot wins, an older copy read later changes nothing;
* ``input = inputTokens``, ``cache_write = cacheCreationTokens``, ``cache_read =
  cacheReadTokens``, ``output = outputTokens + thinkingTokens`` (thinking is billed as
  output), ``reasoning = thinkingTokens``; when ``totalTokens`` exceeds the parts, the
  missing tokens are output if ``outputTokens`` is 0, else thinking (ccusage's fallback);
  a snapshot of no tokens is no call;
* one row per session, not per model: ``tokenUsage`` is not split by model (a model
  switched mid-session would otherwise count the earlier totals twice); the row's model
  is the snapshot's, normalized as ccusage does (``custom:`` and ``[…]`` dropped, lower
  case, ``.``/spaces → ``-``) so it can be priced;
* time: ``providerLockTimestamp``, else the file's modification time (ccusage's rule).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any, Final

from ..adapter import InvalidRecord, SourceContext
from ..rows import RowSink
from ..sources import SourceFile
from ..values import token_count
from .factory import session_of

SESSION_TOTAL: Final = "session-total"
_SETTINGS: Final = ".settings.json"
_BRACKETS: Final = re.compile(r"\[[^\]]*\]")
_SEPARATORS: Final = re.compile(r"[.\s-]+")


def normalize_model(name: str) -> str | None:
    """A Droid display model name as a model id (``Claude-Sonnet-4-[Anthropic]`` →
    ``claude-sonnet-4``); ``None`` when nothing is left."""
    bare = _BRACKETS.sub("", name.removeprefix("custom:")).strip().lower()
    return _SEPARATORS.sub("-", bare).strip("-") or None


def _mtime_iso(source: SourceFile) -> str:
    moment = datetime.fromtimestamp(source.mtime_ns / 1e9, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


class DroidSettingsAdapter:
    """Maps a ``<session>.settings.json`` document (see the module docstring)."""

    def locate(self, source: SourceFile) -> SourceContext:
        """The session the file names: its name without ``.settings.json``."""
        return SourceContext(source, session_of(source, _SETTINGS))

    def map_document(self, document: Any, ctx: SourceContext, sink: RowSink) -> int:
        """The session's model and its one session-total call; returns 1. Raises
        :class:`InvalidRecord` for a document that is not a settings object."""
        if type(document) is not dict:
            raise InvalidRecord("not a Droid session settings object")
        model, usage = document.get("model"), document.get("tokenUsage")
        if model is not None and type(model) is not str:
            raise InvalidRecord("'model' is not a string")
        if usage is not None and type(usage) is not dict:
            raise InvalidRecord("'tokenUsage' is not an object")
        stamp = document.get("providerLockTimestamp")
        if stamp is not None and type(stamp) is not str:
            raise InvalidRecord("'providerLockTimestamp' is not a string")
        sid = ctx.session_id
        model_id = normalize_model(model) if model else None
        sink.session(sid, model=model_id)
        if usage is None:
            return 1
        counts = [
            token_count(usage.get(k))
            for k in ("inputTokens", "cacheCreationTokens", "cacheReadTokens", "outputTokens",
                      "thinkingTokens")
        ]  # fmt: skip
        inp, write, read, out, thinking = counts
        missing = token_count(usage.get("totalTokens")) - sum(counts)
        if missing > 0:
            if out == 0:
                out = missing
            else:
                thinking += missing
        total = inp + write + read + out + thinking
        if total == 0:
            return 1
        sink.usage(
            sid, None, None, SESSION_TOTAL, stamp or _mtime_iso(ctx.source), model_id,
            inp, write, 0, read, out + thinking, thinking, False, 0, rank=total, per_session=True,
        )  # fmt: skip
        return 1
