"""Devin Desktop (formerly Windsurf) Cascade hook transcripts (provider-formats-more §8).

Devin Desktop keeps its Cascade history in encrypted protobuf files nobody decodes; what
can be read is the opt-in ``post_cascade_response_with_transcript`` hook's output, one
JSONL transcript per trajectory: ``~/.windsurf/transcripts/<trajectory_id>.jsonl``
(at most 100 kept, oldest evicted). The same lines, named with ``import --file``, are
AIWG's ``devin-desktop-cascade-hook-jsonl`` export (legacy name
``windsurf-cascade-hook-jsonl``). The step shapes come from secondary sources and the
vendor warns they may evolve [?]: unknown keys are ignored, unknown step types are
rejected with receipts.

Every line is a step: ``type`` and ``status`` required; ``schema_version`` (``"1.x.y"``;
another major refuses the file), ``trajectory_id``, ``execution_id``, ``event_id``,
``timestamp`` (ISO), ``model_name`` (a display name such as "Claude Sonnet 4") or
``model``, ``sensitive_content_warning``, and the step's own object:

* ``user_input`` → the user's prompt (``user_input.user_response``); its
  ``rules_applied`` ({kind: [rule file]}) → a system line naming the rules;
* ``planner_response`` → the assistant's reply (``planner_response.response``);
* ``code_action`` → a tool call named ``code_action`` whose input is the action
  (``path``, ``new_content``, …);
* a step of another type with a ``tool_info`` object → a tool call named after
  ``tool_info.name`` (else the type) with ``tool_info`` as its input, and its
  ``tool_info.response`` → the result; another type without one is UNKNOWN_RECORD.

A ``status`` of ``error``/``failed`` marks a tool result (or call) as an error. No
reasoning, no tool-call pairing ids and no tokens (the hook records none).

Identity: the session is the ``trajectory_id`` (one per file; a line of another
trajectory is invalid), else the file stem; an event is its ``event_id``, else
``<execution_id>:<offset>`` (the line's byte offset: the same file names the same
events whether discovered or exported).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import orjson

from ..adapter import FormatDrift, InvalidRecord, RecordOutcome, SourceContext, UnknownRecord
from ..rows import RowSink
from ..sources import RelParts, Root, SourceFile
from ..values import json_text, version_major

PROVIDER: Final = "devin-desktop"
ADAPTER_VERSION: Final = "1.0"
NATIVE_FORMAT: Final = "devin-desktop-hook-transcript"
EXPORT_FORMAT: Final = "devin-desktop-cascade-hook-jsonl"
LEGACY_EXPORT_FORMAT: Final = "windsurf-cascade-hook-jsonl"
KNOWN_MAJORS: Final = frozenset({1})
STEP_TYPES: Final = frozenset({"user_input", "planner_response", "code_action"})
_FAILED: Final = frozenset({"error", "errored", "failed", "failure"})


def roots(home: Path, env: Mapping[str, str]) -> list[Root]:
    """``~/.windsurf/transcripts`` (files directly in it)."""
    return [Root(PROVIDER, home / ".windsurf" / "transcripts", "default", max_depth=1)]


def owns(rel: RelParts) -> bool:
    """``<trajectory_id>.jsonl`` directly in the transcripts folder."""
    return (
        len(rel) == 1
        and rel[0].endswith(".jsonl")
        and len(rel[0]) > 6
        and not rel[0].startswith(".")
    )


def owns_nothing(rel: RelParts) -> bool:
    """Never: exports are named by the user, not discovered."""
    return False


def sniff(head: bytes) -> bool:
    """Whether a file starting with ``head`` is a hook transcript: its first line is an
    object with string ``type`` and ``status`` and a ``trajectory_id``."""
    first = head.split(b"\n", 1)[0]
    if b'"trajectory_id"' not in first:
        return False
    try:
        value = orjson.loads(first)
    except orjson.JSONDecodeError:
        return False
    return (
        isinstance(value, dict)
        and type(value.get("type")) is str
        and type(value.get("status")) is str
        and "trajectory_id" in value
    )


def _opt_str(rec: Mapping[str, Any], key: str) -> str | None:
    value = rec.get(key)
    if value is not None and type(value) is not str:
        raise InvalidRecord(f"'{key}' is not a string")
    return value or None


def _part(rec: dict[str, Any], key: str) -> dict[str, Any]:
    value = rec.get(key)
    if value is None:
        return {}
    if type(value) is not dict:
        raise InvalidRecord(f"'{key}' is not an object")
    return value


def _rules(user_input: dict[str, Any]) -> str | None:
    """``rules_applied`` as one line per kind: ``always_on: a.md, b.md``."""
    rules = user_input.get("rules_applied")
    if type(rules) is not dict or not rules:
        return None
    lines = [
        f"{kind}: {', '.join(str(r) for r in names) if type(names) is list else names}"
        for kind, names in rules.items()
    ]
    return "rules applied\n" + "\n".join(lines)


class HookTranscriptAdapter:
    """Maps the steps of one hook transcript (see the module docstring)."""

    def locate(self, source: SourceFile) -> SourceContext:
        """The file's stem: the trajectory id the hook names it after."""
        return SourceContext(source, source.path.stem)

    def map_record(
        self, record: dict[str, Any], offset: int, ctx: SourceContext, sink: RowSink
    ) -> RecordOutcome:
        """One step."""
        version = record.get("schema_version")
        if version is not None:
            major = version_major(version)
            if major is None:
                raise InvalidRecord("'schema_version' is not a version")
            if major not in KNOWN_MAJORS:
                raise FormatDrift(f"hook transcript schema_version {str(version)[:20]} is unknown")
        stype, status = record.get("type"), record.get("status")
        if stype is None:
            if status is None and "trajectory_id" not in record:
                return "unknown"
            raise InvalidRecord("a step without 'type'")
        if type(stype) is not str or type(status) is not str:
            raise InvalidRecord("a step's 'type' and 'status' must be strings")
        tool_info = _part(record, "tool_info")
        if stype not in STEP_TYPES and not tool_info:
            raise UnknownRecord(f"unknown step type {stype[:60]!r}")
        sid = self._session(record, ctx, sink)
        execution = _opt_str(record, "execution_id")
        native = _opt_str(record, "event_id") or f"{execution or 'line'}:{offset}"
        ts = _opt_str(record, "timestamp")
        model = _opt_str(record, "model_name") or _opt_str(record, "model")
        failed = status.lower() in _FAILED
        if stype == "user_input":
            part = _part(record, "user_input")
            text = _opt_str(part, "user_response")
            sink.event(sid, native, 0, ts, "text", "user", text, offset)
            if (rules := _rules(part)) is not None:
                sink.event(sid, native, 1, ts, "system", "system", rules, offset)
        elif stype == "planner_response":
            text = _opt_str(_part(record, "planner_response"), "response")
            sink.event(sid, native, 0, ts, "text", "assistant", text, offset, model=model)
        else:
            action = _part(record, "code_action") if stype == "code_action" else tool_info
            name = _opt_str(tool_info, "name") or stype
            sink.event(sid, native, 0, ts, "tool_use", "assistant", None, offset, model=model,
                       tool_name=name, tool_call_id=native, tool_input=json_text(action),
                       is_error=True if failed else None)  # fmt: skip
            response = tool_info.get("response")
            if response is not None:
                text = response if type(response) is str else json_text(response)
                sink.event(sid, native, 1, ts, "tool_result", "tool", text, offset,
                           tool_name=name, tool_call_id=native, is_error=failed)  # fmt: skip
        if model is not None:
            sink.session(sid, model=model)
        return "mapped"

    @staticmethod
    def _session(rec: dict[str, Any], ctx: SourceContext, sink: RowSink) -> str:
        """The step's trajectory, which must be the file's first one."""
        trajectory = _opt_str(rec, "trajectory_id") or ctx.session_id
        known = ctx.memo.get("trajectory")
        if known is None:
            ctx.memo["trajectory"] = trajectory
            sink.session(trajectory)
        elif trajectory != known:
            raise InvalidRecord("a step of another trajectory than the file's")
        return trajectory
