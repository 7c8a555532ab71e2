"""Seeded, deterministic synthetic Claude Code homes for demos, tests and benchmarks.

Everything written here is invented: projects live under ``/home/dev/...``, ids come
from a seeded :class:`random.Random`, and no real transcript or credential is involved.
The same arguments always produce byte-identical files.

Layout written under ``home``::

    .claude/projects/<encoded-cwd>/<session-uuid>.jsonl
    .claude/projects/<encoded-cwd>/<session-uuid>/subagents/agent-<agentId>.jsonl
    .claude/projects/<encoded-cwd>/<session-uuid>/subagents/agent-<agentId>.meta.json

The records follow the Claude Code 2.1.x transcript format: one compact JSON object per
line, assistant replies streamed as one line per content block (all repeating the same
``message.id``, ``requestId`` and ``usage``, with ``output_tokens`` growing until the
last chunk), tool results as ``user`` lines, sidechain subagent files, compaction
boundaries, resumed sessions that re-copy earlier lines, and the metadata line types
(``summary``, ``ai-title``, ``last-prompt``, ``queue-operation``,
``file-history-snapshot``, ``custom-title``, ``mode``, ``permission-mode``, ``system``,
``attachment``, ``progress``).

``toolUseResult`` carries only metadata (Claude Code may also repeat the tool output
there); this keeps every planted string (see ``canaries``) at exactly one place per
record kind.
"""

from __future__ import annotations

import base64
import random
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, BinaryIO, Final

import orjson

__all__ = [
    "SEARCH_PHRASE",
    "DemoStats",
    "encode_cwd",
    "generate_claude_corpus",
    "generate_claude_home",
]

Json = dict[str, Any]

#: A phrase planted verbatim in a few user prompts of :func:`generate_claude_home`
#: (the first prompt of sessions 0 and 5), for search tests and demos.
SEARCH_PHRASE: Final = "fix the cache bug in the session loader"

_SONNET: Final = "claude-sonnet-4-5-20250929"
_OPUS: Final = "claude-opus-4-1-20250805"
_HAIKU: Final = "claude-haiku-4-5-20251001"
_SYNTHETIC: Final = "<synthetic>"
_VERSIONS: Final = ("2.1.37", "2.1.40", "2.1.42")
_B62: Final = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_DAY_MS: Final = 86_400_000
_FLUSH_AT: Final = 1 << 20
_COMPACT_AT_TOKENS: Final = 150_000
_CHAIN_TYPES: Final = frozenset({"user", "assistant", "system", "attachment", "progress"})


@dataclass(frozen=True)
class DemoStats:
    """What a generator wrote.

    ``files`` counts every file (transcripts and ``.meta.json`` sidecars), ``lines``
    the JSONL records, ``bytes`` the size of all files together, and ``sessions`` the
    transcript files (main sessions, resumed continuations and subagent transcripts,
    each of which is a session of its own in the catalog).
    """

    files: int
    lines: int
    bytes: int
    sessions: int


def encode_cwd(cwd: str) -> str:
    """Return Claude Code's project directory name for ``cwd``.

    Every character outside ``[A-Za-z0-9]`` becomes ``-``, without collapsing runs
    (``/home/dev/ml_pipeline.v2`` gives ``-home-dev-ml-pipeline-v2``).
    """
    return "".join(ch if ch.isascii() and ch.isalnum() else "-" for ch in cwd)


# --------------------------------------------------------------------------- content


@dataclass(frozen=True)
class _Project:
    cwd: str
    branch: str
    files: tuple[str, ...]
    topics: tuple[str, ...]


_DEMO_PROJECTS: Final = (
    _Project(
        "/home/dev/webshop",
        "main",
        (
            "src/session_loader.py",
            "src/cache.py",
            "src/cart/service.py",
            "src/checkout/views.py",
            "tests/test_cache.py",
            "tests/test_session_loader.py",
        ),
        ("the session loader", "the cart service", "the checkout flow", "the price formatter"),
    ),
    _Project(
        "/home/dev/api-gateway",
        "feature/rate-limit",
        (
            "gateway/ratelimit.go",
            "gateway/router.go",
            "gateway/auth/jwt.go",
            "cmd/gateway/main.go",
            "gateway/ratelimit_test.go",
        ),
        ("the rate limiter", "the JWT middleware", "the request router", "the health endpoint"),
    ),
    _Project(
        "/home/dev/ml_pipeline.v2",
        "main",
        (
            "pipeline/features.py",
            "pipeline/train.py",
            "pipeline/io/parquet_reader.py",
            "configs/train.yaml",
            "tests/test_features.py",
        ),
        ("the feature builder", "the parquet reader", "the training loop", "the eval report"),
    ),
    _Project(
        "/home/dev/notes-cli",
        "dev",
        (
            "src/main.rs",
            "src/store.rs",
            "src/search.rs",
            "Cargo.toml",
            "tests/cli.rs",
        ),
        ("the note store", "full-text search", "the export command", "the config parser"),
    ),
)

_EXTRA_NAMES: Final = (
    "billing",
    "inventory",
    "search-ui",
    "auth_service",
    "data.lake",
    "mobile-app",
    "infra",
    "docs-site",
    "scheduler",
    "etl-jobs",
    "chat_bot",
    "metrics",
)

_PROMPTS: Final = (
    "fix the failing test in {file}",
    "why is {topic} so slow when the cache is cold?",
    "add type hints to {file} and make the type checker happy",
    "refactor {topic} so it streams instead of loading everything at once",
    "write tests for {topic}, including the error paths",
    "explain how {topic} handles retries",
    "rename the config flag used by {topic} and update the docs",
    "the CI build fails on {file}, can you take a look?",
    "add structured logging around {topic}",
    "review my changes to {file} before I open the PR",
    "there is an off-by-one error in {topic}, find it",
    "make {topic} configurable through environment variables",
)

_THINKING: Final = (
    "The user wants a targeted change, so I should read the module before editing it.",
    "Let me check how the tests exercise this path first.",
    "The failure mentions a stale entry; the eviction check probably compares naive and "
    "aware datetimes.",
    "I should keep the public signature unchanged and only fix the internals.",
    "Running the narrow test first will be faster than the whole suite.",
    "There may be a second call site that needs the same fix; a grep will tell.",
    "The config is read once at import time, which explains why the flag is ignored.",
)

_TEXTS: Final = (
    "I'll start by reading the module to see how entries are stored.",
    "Let me run the relevant tests to reproduce the problem.",
    "Found it: the expiry timestamp is never refreshed after a reload.",
    "The fix is small; I'll update the comparison and add a regression test.",
    "All tests pass now.",
    "I also removed a duplicated helper that was masking the bug.",
    "Here is a summary of the change and why it works.",
    "The slow path comes from re-reading the whole file for every lookup.",
    "I searched for other call sites and found two more that needed the same change.",
    "Done. Let me know if you want the behaviour behind a flag instead.",
)

_CODE: Final = (
    "import os",
    "from dataclasses import dataclass",
    "def load(path: str) -> dict[str, object]:",
    "    with open(path, encoding='utf-8') as handle:",
    "        return json.load(handle)",
    "class SessionCache:",
    "    def __init__(self, ttl: float = 300.0) -> None:",
    "        self._entries: dict[str, Entry] = {}",
    "    def get(self, key: str) -> Entry | None:",
    "        entry = self._entries.get(key)",
    "        if entry is None or entry.expired(now()):",
    "            return None",
    "        return entry",
    "func (l *Limiter) Allow(key string) bool {",
    "\tl.mu.Lock()",
    "\tdefer l.mu.Unlock()",
    "fn search(store: &Store, query: &str) -> Vec<Note> {",
    "    let terms: Vec<&str> = query.split_whitespace().collect();",
    "# note: handle the empty case",
    "    return [row for row in rows if row.valid]",
    "def test_entries_expire(tmp_path):",
    "    assert cache.get('k') is None",
)

_LOG: Final = (
    "============================= test session starts ==============================",
    "collected 42 items",
    "tests/test_cache.py ........                                             [ 19%]",
    "tests/test_session_loader.py ......F...                                  [ 42%]",
    "tests/test_features.py ................                                  [ 80%]",
    "ok  \tgithub.example/gateway\t0.412s",
    "--- PASS: TestLimiterAllow (0.00s)",
    "   Compiling notes-cli v0.4.1 (/home/dev/notes-cli)",
    "    Finished test [unoptimized + debuginfo] target(s) in 3.21s",
    "running 12 tests",
    "test store::tests::round_trip ... ok",
    "warning: unused variable: `idx`",
    "INFO  loader: reloaded 318 sessions in 0.08s",
    "DEBUG cache: miss key=session:41 ttl=300",
    "========================= 41 passed, 1 failed in 2.37s =========================",
)

_ERRORS: Final = (
    "Exit code 1\nFAILED tests/test_session_loader.py::test_reload_expires - "
    "AssertionError: entry survived reload",
    "<tool_use_error>String to replace not found in file.</tool_use_error>",
    "Exit code 2\nerror[E0425]: cannot find value `store` in this scope",
    "<tool_use_error>File has not been read yet. Read it first before writing to it."
    "</tool_use_error>",
    "Exit code 1\n--- FAIL: TestLimiterBurst (0.01s)\n"
    "    ratelimit_test.go:48: expected 5 allowed, got 6",
)

_TITLES: Final = (
    "Fix cache expiry in session loader",
    "Speed up cold cache reads",
    "Add tests for rate limiter",
    "Stream parquet reader",
    "Refactor note search",
    "Configure feature builder via env",
    "Investigate flaky CI build",
    "Add structured logging",
)

_SLUG_WORDS: Final = (
    ("quiet", "gleaming", "brave", "sunny", "misty", "rapid"),
    ("dancing", "tumbling", "sleeping", "humming", "drifting", "wandering"),
    ("otter", "ember", "falcon", "meadow", "harbor", "comet"),
)

_SUBAGENT_TASKS: Final = (
    (
        "Explore",
        "Find cache call sites",
        "Find every place that reads from or writes to the cache and report file:line for each.",
    ),
    (
        "general-purpose",
        "Audit error handling",
        "Review the error handling in the loader and list the cases that swallow exceptions.",
    ),
    (
        "Explore",
        "Map test coverage",
        "List the tests that cover the request router and what each one asserts.",
    ),
)

_COMPACT_SUMMARY: Final = (
    "This session is being continued from a previous conversation that ran out of context. "
    "The conversation is summarized below:\n"
    "Analysis:\nThe user asked for a fix and a regression test; the work is in progress.\n\n"
    "Summary:\n1. Primary Request and Intent: fix the failing behaviour and keep the API stable.\n"
    "2. Key Technical Concepts: cache expiry, timezone-aware timestamps, streaming reads.\n"
    "3. Files and Code Sections: the module under test and its tests were read and edited.\n"
    "4. Pending Tasks: run the full test suite and summarize the change."
)

_META_CAVEAT: Final = (
    "<local-command-caveat>Caveat: The messages below were generated by the user while running "
    "local commands. DO NOT respond to these messages or otherwise consider them in your response "
    "unless the user explicitly asks you to.</local-command-caveat>"
)


def iso_ms(ms: int) -> str:
    """Epoch milliseconds as ISO-8601 UTC with milliseconds and ``Z`` (how agents write)."""
    d = _EPOCH + timedelta(milliseconds=ms)
    return (
        f"{d.year:04d}-{d.month:02d}-{d.day:02d}T"
        f"{d.hour:02d}:{d.minute:02d}:{d.second:02d}.{ms % 1000:03d}Z"
    )


def epoch_ms(moment: datetime) -> int:
    """A datetime (naive = UTC) as epoch milliseconds."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return (moment - _EPOCH) // timedelta(milliseconds=1)


# --------------------------------------------------------------------------- output


class _OpenFile:
    __slots__ = ("chunks", "handle", "pending")

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.handle: BinaryIO = path.open("wb")
        self.chunks: list[bytes] = []
        self.pending = 0

    def flush(self) -> None:
        if self.chunks:
            self.handle.write(b"".join(self.chunks))
            self.chunks.clear()
            self.pending = 0


class _Sink:
    """Buffered JSONL writer over a few open files; keeps the counts for DemoStats."""

    def __init__(self) -> None:
        self._open: dict[Path, _OpenFile] = {}
        self.files = 0
        self.lines = 0
        self.bytes = 0
        self.sessions = 0

    def line(self, path: Path, record: Json) -> None:
        data = orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE)
        out = self._open.get(path)
        if out is None:
            out = _OpenFile(path)
            self._open[path] = out
            self.files += 1
            self.sessions += 1
        out.chunks.append(data)
        out.pending += len(data)
        self.lines += 1
        self.bytes += len(data)
        if out.pending >= _FLUSH_AT:
            out.flush()

    def document(self, path: Path, obj: Json) -> None:
        data = orjson.dumps(obj, option=orjson.OPT_APPEND_NEWLINE)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        self.files += 1
        self.bytes += len(data)

    def close(self, path: Path) -> None:
        out = self._open.pop(path, None)
        if out is not None:
            out.flush()
            out.handle.close()

    def close_all(self) -> None:
        for path in list(self._open):
            self.close(path)

    def stats(self) -> DemoStats:
        return DemoStats(
            files=self.files, lines=self.lines, bytes=self.bytes, sessions=self.sessions
        )


# --------------------------------------------------------------------------- model


@dataclass
class _Plan:
    session_id: str
    project: _Project
    model: str
    version: str
    start_ms: int
    turns: int
    cache_mode: str = "5m"
    subagent_tool: str | None = None
    compact_at: int | None = None
    resume: bool = False
    canaries: tuple[str, ...] = ()
    secret_urls: tuple[str, ...] = ()
    split_canaries: tuple[str, ...] = ()
    meta_commands: bool = False
    interrupt_at: int | None = None
    custom_title: str | None = None
    prompt_ids: bool = True
    first_prompt: str | None = None
    summary_line: bool = False
    permission_mode: str = "default"


@dataclass
class _Thread:
    """One transcript being written: a main session, a continuation or a subagent."""

    path: Path
    session_id: str
    cwd: str
    branch: str
    version: str
    slug: str
    model: str
    cache_mode: str
    clock: int
    agent_id: str | None = None
    parent: str | None = None
    ctx: int = 0
    fresh: int = 0
    cold: bool = False
    copies: list[Json] | None = None
    last_prompt: str = ""
    permission_mode: str = "default"
    tool_calls: int = 0
    tokens: int = 0
    last_usage: Json = field(default_factory=dict)


@dataclass
class _ToolCall:
    name: str
    input: Json
    output: str
    is_error: bool
    result_meta: Any
    runtime_ms: int


class _Generator:
    def __init__(self, home: Path, rng: random.Random, tool_output_bytes: int) -> None:
        self.projects_dir = home / ".claude" / "projects"
        self.rng = rng
        self.tool_output_bytes = tool_output_bytes
        self.sink = _Sink()

    # ----------------------------------------------------------------- ids, text

    def uuid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def token(self, n: int) -> str:
        return "".join(self.rng.choices(_B62, k=n))

    def pick(self, items: Sequence[str]) -> str:
        return items[int(self.rng.random() * len(items))]

    def sentences(self, pool: Sequence[str], low: int, high: int) -> str:
        return " ".join(self.pick(pool) for _ in range(self.rng.randint(low, high)))

    def fill(self, pool: Sequence[str], target: int, numbered: bool = False) -> list[str]:
        lines: list[str] = []
        size = 0
        while size < target:
            text = self.pick(pool)
            if numbered:
                text = f"{len(lines) + 1:>6}\u2192{text}"
            lines.append(text)
            size += len(text) + 1
        return lines

    def output_size(self) -> int:
        return int(self.tool_output_bytes * (0.5 + self.rng.random()))

    def slug(self) -> str:
        return "-".join(self.pick(words) for words in _SLUG_WORDS)

    def prompt_text(self, project: _Project) -> str:
        template = self.pick(_PROMPTS)
        return template.format(file=self.pick(project.files), topic=self.pick(project.topics))

    # ----------------------------------------------------------------- records

    def base(self, th: _Thread, kind: str, parent: str | None) -> Json:
        rec: Json = {
            "parentUuid": parent,
            "isSidechain": th.agent_id is not None,
            "userType": "external",
            "cwd": th.cwd,
            "sessionId": th.session_id,
            "version": th.version,
            "gitBranch": th.branch,
        }
        if th.agent_id is not None:
            rec["agentId"] = th.agent_id
        rec["slug"] = th.slug
        rec["type"] = kind
        return rec

    def emit(self, th: _Thread, rec: Json, chain: bool = True) -> None:
        self.sink.line(th.path, rec)
        if th.copies is not None and "uuid" in rec and rec.get("type") in _CHAIN_TYPES:
            th.copies.append(rec)
        if chain and "uuid" in rec:
            th.parent = rec["uuid"]

    def tick(self, th: _Thread, low_ms: int, high_ms: int) -> str:
        th.clock += self.rng.randint(low_ms, high_ms)
        return iso_ms(th.clock)

    def user_text(
        self,
        th: _Thread,
        content: str | list[Json],
        *,
        prompt_id: str | None = None,
        extra: Json | None = None,
        gap: tuple[int, int] = (800, 2500),
        uid: str | None = None,
    ) -> str:
        rec = self.base(th, "user", th.parent)
        rec["message"] = {"role": "user", "content": content}
        if extra:
            rec.update(extra)
        if prompt_id is not None:
            rec["promptId"] = prompt_id
        uid = uid or self.uuid()
        rec["uuid"] = uid
        rec["timestamp"] = self.tick(th, *gap)
        if th.agent_id is None and prompt_id is not None:
            rec["permissionMode"] = th.permission_mode
        self.emit(th, rec)
        return uid

    def usage(self, th: _Thread, output: int) -> Json:
        rng = self.rng
        fresh = th.fresh + rng.randint(20, 400)
        if th.ctx == 0:
            read = rng.randint(11_000, 16_000) if rng.random() < 0.7 else 0
            creation = rng.randint(2_500, 9_000) + fresh
        elif th.cold:
            read = 0
            creation = th.ctx + fresh
        else:
            read = th.ctx
            creation = fresh
        th.cold = False
        th.ctx = read + creation
        th.fresh = output
        if th.cache_mode == "1h":
            five, hour = 0, creation
        elif th.cache_mode == "mixed":
            hour = creation * rng.randint(2, 8) // 10
            five = creation - hour
        else:
            five, hour = creation, 0
        inp = rng.randint(1, 12)
        th.tokens += inp + output + creation + read
        return {
            "input_tokens": inp,
            "cache_creation_input_tokens": creation,
            "cache_read_input_tokens": read,
            "cache_creation": {
                "ephemeral_5m_input_tokens": five,
                "ephemeral_1h_input_tokens": hour,
            },
            "output_tokens": output,
            "service_tier": "standard",
        }

    def reply(self, th: _Thread, blocks: list[Json], stop_reason: str) -> list[str]:
        """Write one API response as streamed chunks; return the uuid of each chunk."""
        rng = self.rng
        n = len(blocks)
        final = max(rng.randint(30, 1_400), n + 1)
        usage = self.usage(th, final)
        message_id = "msg_01" + self.token(22)
        request_id = "req_011C" + self.token(20)
        th.clock += rng.randint(1_500, 9_000)
        uuids: list[str] = []
        produced = 0
        for index, block in enumerate(blocks):
            last = index == n - 1
            produced = final if last else max(produced + 1, final * (index + 1) // (n + 1))
            rec = self.base(th, "assistant", th.parent)
            del rec["type"]
            rec["message"] = {
                "model": th.model,
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "content": [block],
                "stop_reason": stop_reason if last else None,
                "stop_sequence": None,
                "usage": {**usage, "output_tokens": produced},
            }
            rec["requestId"] = request_id
            rec["type"] = "assistant"
            uid = self.uuid()
            rec["uuid"] = uid
            rec["timestamp"] = self.tick(th, 40, 900)
            self.emit(th, rec)
            uuids.append(uid)
        th.last_usage = usage
        return uuids

    def thinking(self) -> Json:
        sig = base64.b64encode(self.rng.randbytes(self.rng.randint(180, 360))).decode("ascii")
        return {"type": "thinking", "thinking": self.sentences(_THINKING, 1, 4), "signature": sig}

    def text(self, low: int = 1, high: int = 4) -> Json:
        return {"type": "text", "text": self.sentences(_TEXTS, low, high)}

    def tool_use(self, call: _ToolCall) -> tuple[str, Json]:
        call_id = "toolu_01" + self.token(22)
        return call_id, {"type": "tool_use", "id": call_id, "name": call.name, "input": call.input}

    def tool_result(self, th: _Thread, call_id: str, assistant_uuid: str, call: _ToolCall) -> str:
        rec = self.base(th, "user", assistant_uuid)
        rec["message"] = {
            "role": "user",
            "content": [
                {
                    "tool_use_id": call_id,
                    "type": "tool_result",
                    "content": call.output,
                    "is_error": call.is_error,
                }
            ],
        }
        uid = self.uuid()
        rec["uuid"] = uid
        th.clock += call.runtime_ms
        rec["timestamp"] = self.tick(th, 20, 400)
        rec["toolUseResult"] = call.result_meta
        rec["sourceToolAssistantUUID"] = assistant_uuid
        self.emit(th, rec)
        th.fresh += len(call.output) // 4 + 20
        th.tool_calls += 1
        return uid

    def progress(self, th: _Thread, call_id: str, assistant_uuid: str, data: Json) -> None:
        rec = self.base(th, "progress", assistant_uuid)
        rec["data"] = data
        rec["toolUseID"] = f"{data['type']}-{self.token(8)}"
        rec["parentToolUseID"] = call_id
        rec["uuid"] = self.uuid()
        rec["timestamp"] = self.tick(th, 200, 2_000)
        self.emit(th, rec, chain=False)

    def system(self, th: _Thread, subtype: str, fields: Json, parent: str | None) -> str:
        rec = self.base(th, "system", parent)
        rec["subtype"] = subtype
        rec.update(fields)
        uid = self.uuid()
        rec["uuid"] = uid
        rec["timestamp"] = self.tick(th, 100, 900)
        self.emit(th, rec)
        return uid

    def attachment(self, th: _Thread, project: _Project) -> None:
        rng = self.rng
        roll = rng.random()
        if roll < 0.4:
            att: Json = {
                "type": "edited_text_file",
                "filename": f"{th.cwd}/{self.pick(project.files)}",
                "snippet": "\n".join(self.fill(_CODE, 160, numbered=True)),
            }
        elif roll < 0.7:
            att = {
                "type": "todo_reminder",
                "content": [
                    {
                        "content": self.pick(_TITLES),
                        "status": "in_progress",
                        "activeForm": "Working",
                    }
                ],
                "itemCount": 1,
            }
        else:
            att = {
                "type": "hook_additional_context",
                "content": ["Project rules: run the linter before committing."],
                "hookName": "UserPromptSubmit",
                "toolUseID": f"hook-{self.token(10)}",
                "hookEvent": "UserPromptSubmit",
            }
        rec = self.base(th, "attachment", th.parent)
        rec["attachment"] = att
        rec["uuid"] = self.uuid()
        rec["timestamp"] = self.tick(th, 5, 60)
        self.emit(th, rec)

    def meta(self, th: _Thread, rec: Json) -> None:
        self.emit(th, rec, chain=False)

    # ----------------------------------------------------------------- tools

    def make_tool(self, th: _Thread, project: _Project) -> _ToolCall:
        rng = self.rng
        rel = self.pick(project.files)
        path = f"{th.cwd}/{rel}"
        roll = rng.random()
        runtime = rng.randint(30, 800)
        if roll < 0.32:
            lines = self.fill(_CODE, self.output_size(), numbered=True)
            return _ToolCall(
                "Read",
                {"file_path": path},
                "\n".join(lines),
                False,
                {
                    "type": "text",
                    "file": {
                        "filePath": path,
                        "numLines": len(lines),
                        "startLine": 1,
                        "totalLines": len(lines) + rng.randint(0, 300),
                    },
                },
                runtime,
            )
        if roll < 0.56:
            command = self.pick(
                (
                    "python -m pytest -q",
                    "go test ./...",
                    "cargo test",
                    "git status --short",
                    "git diff --stat",
                    "ruff check .",
                )
            )
            if rng.random() < 0.14:
                text = self.pick(_ERRORS[0::2])
                return _ToolCall(
                    "Bash",
                    {"command": command, "description": "Run the checks"},
                    text,
                    True,
                    f"Error: {text}",
                    runtime * 8,
                )
            return _ToolCall(
                "Bash",
                {"command": command, "description": "Run the checks"},
                "\n".join(self.fill(_LOG, self.output_size())),
                False,
                {"interrupted": False, "isImage": False, "exitCode": 0},
                runtime * 8,
            )
        if roll < 0.70:
            pattern = self.pick(("cache", "expires_at", "def load", "Allow(", "NOTE", "retry"))
            hits = [
                f"{th.cwd}/{self.pick(project.files)}:{rng.randint(1, 400)}:{self.pick(_CODE)}"
                for _ in range(rng.randint(1, 8))
            ]
            return _ToolCall(
                "Grep",
                {"pattern": pattern, "path": th.cwd, "output_mode": "content", "-n": True},
                "\n".join(hits),
                False,
                {"mode": "content", "numFiles": len(hits), "numLines": len(hits)},
                runtime,
            )
        if roll < 0.86:
            old = self.pick(_CODE)
            new = old.replace("None", "MISSING") if "None" in old else old + "  # checked"
            if rng.random() < 0.1:
                text = self.pick(_ERRORS[1::2])
                return _ToolCall(
                    "Edit",
                    {"file_path": path, "old_string": old, "new_string": new},
                    text,
                    True,
                    f"Error: {text}",
                    runtime,
                )
            snippet = "\n".join(self.fill(_CODE, self.output_size() // 2, numbered=True))
            text = (
                f"The file {path} has been updated. Here's the result of running `cat -n` "
                f"on a snippet of the edited file:\n{snippet}"
            )
            return _ToolCall(
                "Edit",
                {"file_path": path, "old_string": old, "new_string": new},
                text,
                False,
                {
                    "filePath": path,
                    "oldString": old,
                    "newString": new,
                    "replaceAll": False,
                    "userModified": False,
                },
                runtime,
            )
        if roll < 0.94:
            ext = rel.rsplit(".", 1)[-1]
            found = [f"{th.cwd}/{self.pick(project.files)}" for _ in range(rng.randint(1, 6))]
            return _ToolCall(
                "Glob",
                {"pattern": f"**/*.{ext}"},
                "\n".join(found),
                False,
                {
                    "filenames": len(found),
                    "durationMs": rng.randint(2, 40),
                    "numFiles": len(found),
                    "truncated": False,
                },
                runtime,
            )
        todos = [
            {
                "content": self.pick(_TITLES),
                "status": self.pick(("pending", "in_progress", "completed")),
                "activeForm": "Working on it",
            }
            for _ in range(rng.randint(2, 4))
        ]
        return _ToolCall(
            "TodoWrite",
            {"todos": todos},
            "Todos have been modified successfully. Ensure that you continue to use the todo "
            "list to track your progress.",
            False,
            {"oldTodos": [], "newTodos": todos},
            runtime,
        )

    def run_tools(
        self, th: _Thread, project: _Project, calls: list[_ToolCall], lead: list[Json]
    ) -> None:
        """One assistant response that uses ``calls``, then their results."""
        ids: list[str] = []
        blocks = list(lead)
        for call in calls:
            call_id, block = self.tool_use(call)
            ids.append(call_id)
            blocks.append(block)
        uuids = self.reply(th, blocks, "tool_use")
        tool_uuids = uuids[len(lead) :]
        for call_id, assistant_uuid, call in zip(ids, tool_uuids, calls, strict=True):
            if call.name == "Bash" and self.rng.random() < 0.5:
                self.progress(
                    th,
                    call_id,
                    assistant_uuid,
                    {
                        "type": "bash_progress",
                        "output": self.pick(_LOG),
                        "fullOutput": self.pick(_LOG),
                        "elapsedTimeSeconds": self.rng.randint(1, 9),
                        "totalLines": self.rng.randint(2, 60),
                    },
                )
            if call.name == "Edit" and not call.is_error and self.rng.random() < 0.6:
                self.progress(
                    th,
                    call_id,
                    assistant_uuid,
                    {
                        "type": "hook_progress",
                        "hookEvent": "PostToolUse",
                        "hookName": "PostToolUse:Edit",
                        "command": "ruff format --quiet",
                    },
                )
            self.tool_result(th, call_id, assistant_uuid, call)

    # ----------------------------------------------------------------- turns

    def lead_blocks(self, with_text: float) -> list[Json]:
        lead: list[Json] = []
        if self.rng.random() < 0.5:
            lead.append(self.thinking())
        if self.rng.random() < with_text:
            lead.append(self.text(1, 2))
        return lead

    def file_snapshot(self, th: _Thread, message_id: str, project: _Project) -> None:
        backups: Json = {}
        if self.rng.random() < 0.5:
            rel = self.pick(project.files)
            backups[rel] = {
                "backupFileName": f"{self.token(16).lower()}@v1",
                "version": 1,
                "backupTime": iso_ms(th.clock),
            }
        self.meta(
            th,
            {
                "type": "file-history-snapshot",
                "messageId": message_id,
                "snapshot": {
                    "messageId": message_id,
                    "trackedFileBackups": backups,
                    "timestamp": iso_ms(th.clock),
                },
                "isSnapshotUpdate": False,
            },
        )

    def queue(self, th: _Thread, operation: str, content: str | None) -> None:
        rec: Json = {
            "type": "queue-operation",
            "operation": operation,
            "timestamp": iso_ms(th.clock),
            "sessionId": th.session_id,
        }
        if content is not None:
            rec["content"] = content
        self.meta(th, rec)

    def prompt(self, th: _Thread, plan: _Plan, text: str, planted: bool = False) -> None:
        rng = self.rng
        th.clock += rng.randint(60_000, 240_000)
        # A planted prompt must occur once: no queue copy, no last-prompt copy.
        roll = 1.0 if planted else rng.random()
        if roll < 0.08:
            self.queue(th, "enqueue", text)
            th.clock += rng.randint(2_000, 30_000)
            self.queue(th, "dequeue", None)
        elif roll < 0.11:
            dropped = self.prompt_text(plan.project)
            self.queue(th, "enqueue", dropped)
            self.queue(th, "remove", dropped)
        elif roll < 0.13:
            self.queue(th, "enqueue", text)
            self.queue(th, "popAll", text)
        prompt_id = self.uuid() if plan.prompt_ids else None
        prompt_uuid = self.uuid()
        self.file_snapshot(th, prompt_uuid, plan.project)
        self.user_text(th, text, prompt_id=prompt_id, uid=prompt_uuid)
        if not planted:
            th.last_prompt = text
        th.fresh += len(text) // 4 + 8
        roll = rng.random()
        if roll < 0.15:
            self.attachment(th, plan.project)
        elif roll < 0.22:
            reminder = (
                "<system-reminder>\nThe user opened the file "
                f"{th.cwd}/{self.pick(plan.project.files)} in the IDE. This may or may not be "
                "related to the current task.\n</system-reminder>"
            )
            self.user_text(
                th, [{"type": "text", "text": reminder}], extra={"isMeta": True}, gap=(5, 50)
            )

    def turn(
        self, th: _Thread, plan: _Plan, text: str, forced: list[_ToolCall] | None = None
    ) -> None:
        rng = self.rng
        self.prompt(th, plan, text, planted=forced is not None)
        if forced is not None:
            self.run_tools(th, plan.project, forced, [self.text(1, 1)])
        else:
            for _ in range(rng.choice((0, 1, 1, 1, 2, 2, 3))):
                calls = [
                    self.make_tool(th, plan.project) for _ in range(2 if rng.random() < 0.15 else 1)
                ]
                self.run_tools(th, plan.project, calls, self.lead_blocks(0.6))
        final: list[Json] = []
        if rng.random() < 0.3:
            final.append(self.thinking())
        final.append(self.text(1, 4))
        self.reply(th, final, "end_turn")
        if rng.random() < 0.25:
            self.system(
                th,
                "stop_hook_summary",
                {
                    "hookCount": 1,
                    "hookInfos": [{"command": "npm run lint --silent"}],
                    "hookErrors": [],
                    "preventedContinuation": False,
                    "stopReason": "",
                    "hasOutput": False,
                    "level": "suggestion",
                    "toolUseID": self.uuid(),
                },
                th.parent,
            )
        if th.ctx > _COMPACT_AT_TOKENS:
            self.compact(th, "auto")

    def meta_commands(self, th: _Thread) -> None:
        self.user_text(th, _META_CAVEAT, extra={"isMeta": True}, gap=(0, 10))
        self.user_text(
            th,
            "<command-name>/model</command-name>\n<command-message>model</command-message>\n<command-args></command-args>",
            gap=(5, 50),
        )
        self.user_text(
            th,
            "<local-command-stdout>Set model to Default (recommended)</local-command-stdout>",
            gap=(5, 50),
        )

    def interrupted_turn(self, th: _Thread, plan: _Plan) -> None:
        self.prompt(th, plan, self.prompt_text(plan.project))
        call = _ToolCall(
            "Bash",
            {"command": "rm -rf build && make", "description": "Rebuild from scratch"},
            "The user doesn't want to proceed with this tool use. The tool use was rejected "
            "(eg. if it was a file edit, the new_string was NOT written to the file). STOP what "
            "you are doing and wait for the user to tell you how to proceed.",
            True,
            "Error: The user doesn't want to proceed with this tool use.",
            0,
        )
        self.run_tools(th, plan.project, [call], [])
        self.user_text(
            th,
            [{"type": "text", "text": "[Request interrupted by user for tool use]"}],
            gap=(50, 400),
        )
        rec = self.base(th, "assistant", th.parent)
        del rec["type"]
        rec["message"] = {
            "id": self.uuid(),
            "container": None,
            "model": _SYNTHETIC,
            "role": "assistant",
            "stop_reason": "stop_sequence",
            "stop_sequence": "",
            "type": "message",
            "usage": {
                "input_tokens": 0,
                "output_tokens": 0,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
                "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
                "service_tier": None,
                "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 0},
            },
            "content": [{"type": "text", "text": "No response requested."}],
        }
        rec["type"] = "assistant"
        rec["uuid"] = self.uuid()
        rec["timestamp"] = self.tick(th, 10, 100)
        rec["isApiErrorMessage"] = False
        self.emit(th, rec)

    def compact(self, th: _Thread, trigger: str) -> None:
        th.clock += self.rng.randint(20_000, 90_000)
        boundary = self.base(th, "system", None)
        boundary["logicalParentUuid"] = th.parent
        boundary["subtype"] = "compact_boundary"
        boundary["content"] = "Conversation compacted"
        boundary["isMeta"] = False
        boundary["level"] = "info"
        boundary["compactMetadata"] = {"trigger": trigger, "preTokens": th.ctx}
        boundary["uuid"] = self.uuid()
        boundary["timestamp"] = iso_ms(th.clock)
        self.emit(th, boundary)
        self.user_text(
            th,
            _COMPACT_SUMMARY,
            extra={"isVisibleInTranscriptOnly": True, "isCompactSummary": True},
            gap=(20, 200),
        )
        th.ctx = self.rng.randint(11_000, 16_000)
        th.fresh = len(_COMPACT_SUMMARY) // 4
        th.cold = True

    def subagent_turn(self, th: _Thread, plan: _Plan, tool_name: str, project_dir: Path) -> None:
        rng = self.rng
        self.prompt(th, plan, self.prompt_text(plan.project))
        agent_type, description, task = _SUBAGENT_TASKS[rng.randrange(len(_SUBAGENT_TASKS))]
        call_id = "toolu_01" + self.token(22)
        block = {
            "type": "tool_use",
            "id": call_id,
            "name": tool_name,
            "input": {"description": description, "prompt": task, "subagent_type": agent_type},
        }
        assistant_uuid = self.reply(th, [self.text(1, 1), block], "tool_use")[-1]
        agent_id = "a" + f"{rng.getrandbits(64):016x}"
        sub = _Thread(
            path=project_dir / th.session_id / "subagents" / f"agent-{agent_id}.jsonl",
            session_id=th.session_id,
            cwd=th.cwd,
            branch=th.branch,
            version=th.version,
            slug=th.slug,
            model=_HAIKU if agent_type == "Explore" else th.model,
            cache_mode="5m",
            clock=th.clock,
            agent_id=agent_id,
        )
        self.user_text(sub, task, gap=(100, 600))
        sub.fresh = len(task) // 4
        for _ in range(rng.randint(1, 3)):
            self.run_tools(
                sub, plan.project, [self.make_tool(sub, plan.project)], self.lead_blocks(0.3)
            )
        report = self.sentences(_TEXTS, 2, 5)
        self.reply(sub, [{"type": "text", "text": report}], "end_turn")
        self.sink.close(sub.path)
        self.sink.document(
            sub.path.with_name(f"agent-{agent_id}.meta.json"),
            {"agentType": agent_type, "description": description, "toolUseId": call_id},
        )
        duration = sub.clock - th.clock
        th.clock = sub.clock
        rec = self.base(th, "user", assistant_uuid)
        rec["message"] = {
            "role": "user",
            "content": [
                {
                    "tool_use_id": call_id,
                    "type": "tool_result",
                    "content": [{"type": "text", "text": report}],
                }
            ],
        }
        rec["uuid"] = self.uuid()
        rec["timestamp"] = self.tick(th, 50, 500)
        rec["toolUseResult"] = {
            "status": "completed",
            "prompt": task,
            "agentId": agent_id,
            "content": [{"type": "text", "text": report}],
            "totalDurationMs": duration,
            "totalTokens": sub.tokens,
            "totalToolUseCount": sub.tool_calls,
            "usage": sub.last_usage,
        }
        rec["sourceToolAssistantUUID"] = assistant_uuid
        self.emit(th, rec)
        th.fresh += len(report) // 4 + 20
        th.tool_calls += 1
        self.reply(th, [self.text(2, 4)], "end_turn")

    def canary_turn(self, th: _Thread, plan: _Plan, canary: str) -> None:
        """Plant ``canary`` once in every text-bearing record kind: a prompt, a tool
        call's input and its output, the reply's reasoning and text, a system line, a
        summary line and a custom title."""
        prompt = (
            f"use the staging key {canary} to call the payments sandbox and check that the "
            "webhook answers"
        )
        command = f'export API_KEY={canary} && curl -s -H "X-Api-Key: $API_KEY" https://payments.example.test/v1/ping'
        output_lines = [
            "> GET /v1/ping HTTP/1.1",
            "> Host: payments.example.test",
            f"> X-Api-Key: {canary}",
            "< HTTP/1.1 200 OK",
            "< content-type: application/json",
        ]
        output_lines.extend(self.fill(_LOG, max(0, self.output_size() - 160)))
        call = _ToolCall(
            "Bash",
            {"command": command, "description": "Ping the payments sandbox"},
            "\n".join(output_lines),
            False,
            {"interrupted": False, "isImage": False, "exitCode": 0},
            self.rng.randint(300, 2_000),
        )
        self.prompt(th, plan, prompt, planted=True)
        self.run_tools(th, plan.project, [call], [self.text(1, 1)])
        thought = f"The sandbox accepted {canary}; it should be rotated after the check."
        sig = base64.b64encode(self.rng.randbytes(200)).decode("ascii")
        answer = f"The sandbox answered 200 with the key {canary}. Rotate it when done."
        self.reply(
            th,
            [{"type": "thinking", "thinking": thought, "signature": sig},
             {"type": "text", "text": answer}],
            "end_turn",
        )  # fmt: skip
        self.system(
            th,
            "local_command",
            {"content": f"<local-command-stdout>API_KEY={canary}</local-command-stdout>",
             "level": "info"},
            th.parent,
        )  # fmt: skip
        self.meta(th, {"type": "summary", "summary": f"Ping the sandbox with {canary}",
                       "leafUuid": th.parent})  # fmt: skip
        self.meta(th, {"type": "custom-title", "customTitle": f"sandbox key {canary}",
                       "sessionId": th.session_id})  # fmt: skip

    def url_turn(self, th: _Thread, plan: _Plan, url: str) -> None:
        """Plant a URL carrying a secret in a prompt, a command and its output."""
        call = _ToolCall(
            "Bash",
            {"command": f"curl -fsS '{url}'", "description": "Call the endpoint"},
            f"* Trying {url}\n< HTTP/1.1 200 OK\nok",
            False,
            {"interrupted": False, "isImage": False, "exitCode": 0},
            self.rng.randint(300, 2_000),
        )
        self.turn(th, plan, f"check that {url} still answers", forced=[call])

    def split_turn(self, th: _Thread, plan: _Plan, canary: str) -> None:
        """A reply streamed as two text chunks that cut ``canary`` after its first two
        characters, so neither chunk holds a recognizable credential alone."""
        self.prompt(th, plan, "which token did the deploy job use?", planted=True)
        first = {"type": "text", "text": f"The deploy job used the token {canary[:2]}"}
        second = {"type": "text", "text": f"{canary[2:]} from the CI settings."}
        self.reply(th, [first, second], "end_turn")

    # ----------------------------------------------------------------- sessions

    def session(self, plan: _Plan) -> None:
        project_dir = self.projects_dir / encode_cwd(plan.project.cwd)
        th = _Thread(
            path=project_dir / f"{plan.session_id}.jsonl",
            session_id=plan.session_id,
            cwd=plan.project.cwd,
            branch=plan.project.branch,
            version=plan.version,
            slug=self.slug(),
            model=plan.model,
            cache_mode=plan.cache_mode,
            clock=plan.start_ms,
            copies=[] if plan.resume else None,
            permission_mode=plan.permission_mode,
        )
        self.meta(th, {"type": "mode", "mode": "normal", "sessionId": th.session_id})
        if plan.permission_mode != "default":
            self.meta(
                th,
                {
                    "type": "permission-mode",
                    "permissionMode": plan.permission_mode,
                    "sessionId": th.session_id,
                },
            )
        if plan.meta_commands:
            self.meta_commands(th)
        subagent_at = min(1, plan.turns - 1) if plan.subagent_tool else None
        for index in range(plan.turns):
            if plan.compact_at is not None and index == plan.compact_at:
                self.compact(th, "manual")
            if index == plan.interrupt_at:
                self.interrupted_turn(th, plan)
            if index == subagent_at and plan.subagent_tool is not None:
                self.subagent_turn(th, plan, plan.subagent_tool, project_dir)
            text = (
                plan.first_prompt
                if index == 0 and plan.first_prompt
                else self.prompt_text(plan.project)
            )
            self.turn(th, plan, text)
            if index == 0:
                self.meta(
                    th,
                    {"type": "ai-title", "aiTitle": self.pick(_TITLES), "sessionId": th.session_id},
                )
                for canary in plan.canaries:
                    self.canary_turn(th, plan, canary)
                for url in plan.secret_urls:
                    self.url_turn(th, plan, url)
                for canary in plan.split_canaries:
                    self.split_turn(th, plan, canary)
        if plan.custom_title is not None:
            self.meta(
                th,
                {
                    "type": "custom-title",
                    "customTitle": plan.custom_title,
                    "sessionId": th.session_id,
                },
            )
        self.meta(
            th, {"type": "last-prompt", "lastPrompt": th.last_prompt, "sessionId": th.session_id}
        )
        if plan.summary_line and th.parent is not None:
            self.meta(th, {"type": "summary", "summary": self.pick(_TITLES), "leafUuid": th.parent})
        self.sink.close(th.path)
        if plan.resume and th.copies is not None:
            self.resume(plan, th, project_dir)

    def resume(self, plan: _Plan, original: _Thread, project_dir: Path) -> None:
        """Write a ``--resume`` continuation: re-copy the earlier lines, then continue."""
        rng = self.rng
        new_id = self.uuid()
        th = _Thread(
            path=project_dir / f"{new_id}.jsonl",
            session_id=new_id,
            cwd=original.cwd,
            branch=original.branch,
            version=original.version,
            slug=original.slug,
            model=original.model,
            cache_mode=original.cache_mode,
            clock=original.clock + rng.randint(3_600_000, 5 * 3_600_000),
            ctx=original.ctx,
            cold=True,
        )
        for rec in original.copies or ():
            copied = dict(rec)
            copied["sessionId"] = new_id
            self.sink.line(th.path, copied)
            th.parent = copied["uuid"]
        for _ in range(max(1, plan.turns // 2)):
            self.turn(th, plan, self.prompt_text(plan.project))
        self.meta(
            th, {"type": "last-prompt", "lastPrompt": th.last_prompt, "sessionId": th.session_id}
        )
        self.sink.close(th.path)


def _demo_plans(
    gen: _Generator,
    sessions: int,
    turns: int,
    start_ms: int,
    canaries: Sequence[str],
    secret_urls: Sequence[str] = (),
    split_canaries: Sequence[str] = (),
) -> list[_Plan]:
    rng = gen.rng
    plans: list[_Plan] = []
    for index in range(sessions):
        project = _DEMO_PROJECTS[index % len(_DEMO_PROJECTS)]
        model = (_SONNET, _OPUS, _SONNET, _HAIKU, _SONNET, _OPUS)[index % 6]
        begin = start_ms + index * 6 * 3_600_000 + rng.randint(0, 40) * 60_000
        if index % 4 == 3:
            # Start just before midnight UTC so that the session crosses into the next day.
            begin = begin - begin % _DAY_MS + _DAY_MS - rng.randint(5 * 60_000, 9 * 60_000)
        cache_mode = "1h" if model == _OPUS else ("mixed" if index % 5 == 2 else "5m")
        plans.append(
            _Plan(
                session_id=gen.uuid(),
                project=project,
                model=model,
                version=_VERSIONS[index % len(_VERSIONS)],
                start_ms=begin,
                turns=turns,
                cache_mode=cache_mode,
                subagent_tool=("Task", "Agent")[(index // 4) % 2] if index % 4 == 0 else None,
                compact_at=turns // 2 if index % 6 == 1 and turns >= 2 else None,
                resume=index % 6 == 2,
                meta_commands=index % 3 == 0,
                interrupt_at=min(2, turns - 1) if index % 5 == 3 else None,
                custom_title=_TITLES[index % len(_TITLES)] if index % 5 == 0 else None,
                prompt_ids=index % 4 != 1,
                first_prompt=(
                    f"{SEARCH_PHRASE}: entries never expire after a reload"
                    if index in (0, 5)
                    else None
                ),
                summary_line=index % 3 == 0,
                permission_mode="acceptEdits" if index % 4 == 2 else "default",
            )
        )
    hosts = [plan for plan in plans if not plan.resume]
    for number, canary in enumerate(canaries):
        host = hosts[number % len(hosts)]
        host.canaries = (*host.canaries, canary)
    for number, url in enumerate(secret_urls):
        host = hosts[number % len(hosts)]
        host.secret_urls = (*host.secret_urls, url)
    for number, canary in enumerate(split_canaries):
        host = hosts[number % len(hosts)]
        host.split_canaries = (*host.split_canaries, canary)
    return plans


def generate_claude_home(
    home: Path,
    *,
    seed: int = 7,
    sessions: int = 12,
    turns_per_session: int = 8,
    start: datetime = datetime(2026, 5, 1, 9, tzinfo=UTC),
    tool_output_bytes: int = 600,
    canaries: Sequence[str] = (),
    secret_urls: Sequence[str] = (),
    split_canaries: Sequence[str] = (),
) -> DemoStats:
    """Write a small, realistic synthetic Claude Code home under ``home``.

    Sessions start every six hours from ``start`` (UTC) across four projects, so the
    defaults span five UTC days; every fourth session (index 3, 7, ...) starts a few
    minutes before midnight UTC and crosses it. By session index: ``i % 4 == 0`` spawns
    a subagent (``Task`` or ``Agent`` tool, sidechain file plus ``.meta.json``),
    ``i % 6 == 1`` is compacted half-way, ``i % 6 == 2`` is resumed into a second file
    that re-copies its lines under a new session id, ``i % 5 == 3`` has an interrupted
    tool call followed by a ``<synthetic>`` reply, opus sessions write 1-hour cache
    entries and ``i % 5 == 2`` sessions split writes between 5-minute and 1-hour.
    The first prompt of sessions 0 and 5 contains :data:`SEARCH_PHRASE`.

    Each string in ``canaries`` is planted exactly once in a user prompt, once in a
    ``Bash`` tool_use input (``export API_KEY=<canary> && curl ...``), once in a
    tool_result output, and once each in a reply's thinking and text, a ``system`` line, a
    ``summary`` line and a ``custom-title``, in a session that is never re-copied by a
    resume. Each URL in ``secret_urls`` is planted in a prompt, a ``curl`` command and its
    output; each string in ``split_canaries`` is cut in two across the two text chunks of
    one streamed reply.

    The output is byte-for-byte identical for identical arguments. Existing files with
    the same names are overwritten. Returns what was written.
    """
    if sessions < 0 or turns_per_session < 1 or tool_output_bytes < 0:
        raise ValueError("sessions must be >= 0, turns_per_session >= 1, tool_output_bytes >= 0")
    if canaries and sessions < 1:
        raise ValueError("canaries need at least one session")
    gen = _Generator(home, random.Random(seed), tool_output_bytes)
    try:
        plans = _demo_plans(
            gen, sessions, turns_per_session, epoch_ms(start), canaries, secret_urls, split_canaries
        )
        for plan in plans:
            gen.session(plan)
    finally:
        gen.sink.close_all()
    return gen.sink.stats()


def _corpus_projects(rng: random.Random) -> list[_Project]:
    projects = list(_DEMO_PROJECTS)
    for name in _EXTRA_NAMES:
        template = _DEMO_PROJECTS[rng.randrange(len(_DEMO_PROJECTS))]
        projects.append(
            _Project(
                f"/home/dev/{name}",
                rng.choice(("main", "dev", f"feature/{name}-v2")),
                template.files,
                template.topics,
            )
        )
    return projects


def generate_claude_corpus(
    home: Path,
    *,
    seed: int,
    target_lines: int,
    start: datetime = datetime(2026, 3, 1, tzinfo=UTC),
    days: int = 60,
    tool_output_bytes: int = 600,
) -> DemoStats:
    """Write a large synthetic Claude Code home with at least ``target_lines`` lines.

    Uses the same record generator as :func:`generate_claude_home`, with session
    sizes drawn from a long-tailed (Pareto) distribution: many small files and a few
    very large ones (a single file is capped at about 1/200 of ``target_lines`` turns,
    roughly 4% of the lines). Sessions start at random moments within ``days`` days of
    ``start``; long sessions are compacted when their context passes 150k tokens.
    About 8% of sessions spawn a subagent and 4% of the small ones are resumed.

    Files are written one session at a time through bounded buffers, so memory does
    not grow with the corpus. Deterministic for identical arguments.
    """
    if target_lines < 0 or days < 1 or tool_output_bytes < 0:
        raise ValueError("target_lines must be >= 0, days >= 1, tool_output_bytes >= 0")
    rng = random.Random(seed)
    gen = _Generator(home, rng, tool_output_bytes)
    projects = _corpus_projects(rng)
    start_ms = epoch_ms(start)
    cap = max(20, target_lines // 200)
    try:
        while gen.sink.lines < target_lines:
            turns = min(cap, int(rng.paretovariate(1.2) * 2))
            model = rng.choices((_SONNET, _OPUS, _HAIKU), weights=(6, 3, 1))[0]
            roll = rng.random()
            plan = _Plan(
                session_id=gen.uuid(),
                project=rng.choice(projects),
                model=model,
                version=rng.choice(_VERSIONS),
                start_ms=start_ms + rng.randrange(days * _DAY_MS),
                turns=turns,
                cache_mode="1h" if model == _OPUS else ("mixed" if roll < 0.1 else "5m"),
                subagent_tool=rng.choice(("Task", "Agent")) if rng.random() < 0.08 else None,
                resume=turns <= 12 and rng.random() < 0.04,
                meta_commands=rng.random() < 0.1,
                interrupt_at=min(2, turns - 1) if rng.random() < 0.05 else None,
                custom_title=rng.choice(_TITLES) if rng.random() < 0.05 else None,
                prompt_ids=rng.random() < 0.8,
                summary_line=rng.random() < 0.2,
                permission_mode="acceptEdits" if rng.random() < 0.1 else "default",
            )
            gen.session(plan)
    finally:
        gen.sink.close_all()
    return gen.sink.stats()


def generate_demo_home(home: Path, *, seed: int = 7) -> dict[str, DemoStats]:
    """A synthetic home with every supported provider — Claude Code, Codex CLI, Gemini
    CLI and Cursor — each laid out where the real agent writes it. Returns what was
    written, per provider id."""
    from .demo_codex import generate_codex_home
    from .demo_cursor import generate_cursor_home
    from .demo_gemini import generate_gemini_home

    return {
        "claude-code": generate_claude_home(home, seed=seed),
        "codex": generate_codex_home(home, seed=seed),
        "gemini-cli": generate_gemini_home(home, seed=seed),
        "cursor": generate_cursor_home(home, seed=seed),
    }
