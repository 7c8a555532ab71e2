"""The fixed Arrow schemas every adapter's output is built into, and the closed sets
of names the extract stage uses (reject reasons, raw block types).

These are the *raw* shapes: provider-native ids and ISO timestamps as strings. The
transform stage turns them into the catalog's shapes.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

import pyarrow as pa

RejectReason = Literal[
    "OVERSIZED",  # a line above the per-line ceiling, skipped without buffering it
    "TOO_DEEP",  # JSON nested deeper than the depth ceiling
    "MALFORMED",  # not valid JSON, or valid JSON that is not an object
    "BAD_ENCODING",  # not valid UTF-8
    "UNKNOWN_RECORD",  # a JSON object of a record type the adapter does not know
    "INVALID_RECORD",  # a known record type whose fields have impossible types
    "DUPLICATE_ID",  # a record whose native id the file already gave (the first stands)
]
REJECT_REASONS: Final[tuple[str, ...]] = get_args(RejectReason)

BlockType = Literal[
    "text",  # prose: a prompt (user) or a reply (assistant)
    "thinking",  # model reasoning
    "tool_use",  # a tool call
    "tool_result",  # a tool's output
    "image",  # an image part (text is a placeholder)
    "summary",  # a compaction or session summary
    "system",  # provider/system lines: boundaries, hooks, reminders, meta prompts
]

# The kinds of the catalog's events (DESIGN §3), as the transform stage classifies them.
EventKind = Literal[
    "prompt", "response", "reasoning", "tool_call", "tool_result", "summary", "system"
]
EVENT_KINDS: Final[tuple[str, ...]] = get_args(EventKind)

RAW_EVENT_SCHEMA: Final = pa.schema(
    [
        ("session_id", pa.string()),
        ("native_id", pa.string()),  # provider's id of the line/message, else "@<offset>"
        ("block_index", pa.int32()),  # position of the block inside the native record
        ("ts", pa.string()),  # ISO-8601 as written by the provider
        ("block_type", pa.string()),  # BlockType
        ("role", pa.string()),
        ("model", pa.string()),
        ("text", pa.string()),
        ("tool_name", pa.string()),
        ("tool_call_id", pa.string()),
        ("tool_input", pa.string()),  # JSON text
        ("is_error", pa.bool_()),
        ("is_sidechain", pa.bool_()),
        ("source_offset", pa.int64()),
    ]
)

RAW_USAGE_SCHEMA: Final = pa.schema(
    [
        ("session_id", pa.string()),
        ("message_id", pa.string()),  # provider's id of the model response, if any
        ("request_id", pa.string()),
        ("native_id", pa.string()),  # fallback identity when there is no message id
        ("ts", pa.string()),
        ("model", pa.string()),
        ("input_tokens", pa.int64()),
        ("cache_write_tokens", pa.int64()),
        ("cache_write_1h_tokens", pa.int64()),
        ("cache_read_tokens", pa.int64()),
        ("output_tokens", pa.int64()),
        ("reasoning_tokens", pa.int64()),
        ("is_sidechain", pa.bool_()),
        ("source_offset", pa.int64()),
        # Which copy of a call wins (highest); null = its token total (Claude's rule:
        # streamed chunks grow). "Last copy wins" formats put a growing position here.
        ("rank", pa.int64()),
        # A session's cumulative totals per model, as an agent that keeps no per-call
        # counts records them: one row per (session, model), the latest snapshot wins.
        ("per_session", pa.bool_()),
    ]
)

RETRACTION_SCHEMA: Final = pa.schema(
    [
        ("session_id", pa.string()),
        ("native_id", pa.string()),  # every event and call of this native message goes
    ]
)

RAW_SESSION_SCHEMA: Final = pa.schema(
    [
        ("session_id", pa.string()),
        ("parent_session_id", pa.string()),
        ("project_path", pa.string()),
        ("title", pa.string()),
        ("title_rank", pa.int8()),  # higher wins: 3 user-set, 2 AI title, 1 summary
        ("git_branch", pa.string()),
        ("cli_version", pa.string()),
        ("model", pa.string()),  # the session's model as its provider records it
        ("preview", pa.string()),  # a provider's own short preview of the session
        ("archived", pa.bool_()),
        # Times a provider's index records (ISO-8601); merged with the events' times.
        ("started_at", pa.string()),
        ("updated_at", pa.string()),
        # The token total a provider's own thread index records for the session (Codex
        # threads.tokens_used): never a call, kept apart from usage.
        ("index_tokens", pa.int64()),
        # The provider a session was first imported under, when a file re-imports rows
        # agentlake exported (GIVEN_EVENT_COLUMNS); null: the source's provider.
        ("given_provider", pa.string()),
        # Whether the exported session was hidden (``sessions hide``): a session such a
        # file creates is created hidden; an existing session keeps its lifecycle.
        ("hidden", pa.bool_()),
    ]
)

# Identity a row already has, given by a file that re-imports what agentlake exported
# (``export jsonl``): the provider, the event or call id and the event's seq the row had
# in its first catalog, which the transform stage keeps instead of deriving them. Only
# the batches that carry such rows have these columns (RowSink adds them), so every
# other adapter's tables stay as they are.
GIVEN_EVENT_COLUMNS: Final = pa.schema(
    [("given_provider", pa.string()), ("given_id", pa.string()), ("given_seq", pa.int64())]
)
GIVEN_USAGE_COLUMNS: Final = pa.schema([("given_provider", pa.string()), ("given_id", pa.string())])

WindowKind = Literal["primary", "secondary"]
WINDOW_KINDS: Final[tuple[WindowKind, ...]] = get_args(WindowKind)

RAW_RATE_LIMIT_SCHEMA: Final = pa.schema(
    [
        ("session_id", pa.string()),
        ("ts", pa.string()),  # ISO-8601 time of the record that carried the snapshot
        ("limit_id", pa.string()),  # the limit measured, when the snapshot names it
        ("window_kind", pa.string()),  # WindowKind
        ("used_percent", pa.float64()),
        ("window_minutes", pa.int64()),
        ("resets_at", pa.int64()),  # epoch seconds, when written as a time
        ("resets_in", pa.int64()),  # seconds after ``ts``, when written as a countdown
        ("plan_type", pa.string()),
        ("source_offset", pa.int64()),
    ]
)

REJECT_SCHEMA: Final = pa.schema(
    [
        ("offset", pa.int64()),
        ("length", pa.int64()),
        ("reason", pa.string()),
        ("detail", pa.string()),
    ]
)
