"""Seeded, deterministic synthetic Codex CLI homes for demos, tests and benchmarks.

Everything written here is invented: projects live under ``/home/dev/...``, ids come from
a seeded :class:`random.Random`, and no real rollout or credential is involved. The same
arguments always produce byte-identical files.

Layout written under ``home``::

    .codex/sessions/YYYY/MM/DD/rollout-YYYY-MM-DDThh-mm-ss-<thread-uuid>.jsonl
    .codex/archived_sessions/rollout-YYYY-MM-DDThh-mm-ss-<thread-uuid>.jsonl
    .codex/state_5.sqlite                       (generate_codex_home only)

The records follow the Codex CLI rollout format (provider-formats §3): a
``session_meta`` header, a ``turn_context`` per turn, every prompt and reply written twice
(``event_msg`` and ``response_item``), reasoning summaries, ``exec_command`` function
calls and ``apply_patch`` custom tool calls with their outputs (exit codes in the
output header), and ``token_count`` events carrying both the cumulative
``total_token_usage`` and the turn's ``last_token_usage``.
"""

from __future__ import annotations

import random
import sqlite3
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, BinaryIO, Final

import orjson

from agentlake.demo import DemoStats, epoch_ms, iso_ms

__all__ = ["generate_codex_corpus", "generate_codex_home"]

Json = dict[str, Any]

_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_DAY_MS: Final = 86_400_000
_FLUSH_AT: Final = 1 << 20
_CLI_VERSIONS: Final = ("0.128.0", "0.130.0", "0.131.2")
_MODELS: Final = ("gpt-5-codex", "gpt-5", "gpt-5-codex-mini")
_REPLAY_MAX_LINES: Final = 600  # longest rollout a corpus fork may replay (bounded memory)
_COMPACT_AT: Final = 200_000  # context tokens after which the session is compacted


@dataclass(frozen=True)
class _Project:
    cwd: str
    branch: str
    files: tuple[str, ...]
    tasks: tuple[str, ...]
    test_cmd: str


_PROJECTS: Final = (
    _Project(
        "/home/dev/webshop",
        "main",
        ("src/cart/service.py", "src/checkout/views.py", "src/session_loader.py", "tests/test_cart.py"),
        (
            "the cart total is wrong when a coupon and a gift card are combined",
            "split the checkout view into smaller functions",
            "the session loader re-reads the cache on every request",
            "add a regression test for the coupon rounding bug",
        ),
        "pytest -q",
    ),
    _Project(
        "/home/dev/api-gateway",
        "feature/rate-limit",
        ("gateway/ratelimit.go", "gateway/router.go", "gateway/auth/jwt.go", "cmd/gateway/main.go"),
        (
            "add a burst option to the rate limiter",
            "the first request after a restart is rejected",
            "log the matched route for every request",
            "delete the unused jwt helpers",
        ),
        "go test ./...",
    ),
    _Project(
        "/home/dev/ml_pipeline.v2",
        "main",
        ("pipeline/features.py", "pipeline/train.py", "pipeline/io/parquet_reader.py", "configs/train.yaml"),
        (
            "profile the feature builder and make it faster",
            "the parquet reader leaks file handles",
            "add early stopping to the training loop",
            "make the eval report deterministic",
        ),
        "pytest -q tests",
    ),
    _Project(
        "/home/dev/notes-cli",
        "dev",
        ("src/main.rs", "src/store.rs", "src/search.rs", "Cargo.toml"),
        (
            "add a --json flag to `notes list`",
            "rename the `ls` subcommand to `list`",
            "search should ignore case by default",
            "store notes atomically",
        ),
        "cargo test -q",
    ),
)  # fmt: skip

_REASONING: Final = (
    "Looking for where the behaviour is implemented",
    "Reading the tests to see what is expected",
    "The failure comes from the order of two operations",
    "Checking whether the change breaks the public API",
    "Running the tests before and after the change",
    "The helper is only used in one place; inline it",
)
_REPLIES: Final = (
    "Done. The change is small and covered by a new test.",
    "I found the cause: the value was computed before the discount was applied.",
    "Tests pass locally; I kept the public API unchanged.",
    "I refactored the function into three helpers and added type hints.",
    "The fix is in place; the remaining warning comes from a dependency.",
    "Here is a summary of what changed and why.",
)
_COMMENTARY: Final = (
    "I'll start by reading the relevant module.",
    "Let me run the tests to reproduce the failure.",
    "Now updating the implementation.",
)
_FOLLOW_UPS: Final = (
    "also add a test for it",
    "run the whole suite",
    "explain the fix in two sentences",
    "keep the old name as a deprecated alias",
    "can you make it faster?",
)
_PERMISSIONS: Final = (
    "<permissions instructions>\nFilesystem sandboxing: workspace-write. "
    "Network access is restricted. Approval policy: on-request.\n</permissions instructions>"
)


# --------------------------------------------------------------------------- output


class _Out:
    """Buffered writer of one rollout; counts lines and bytes for DemoStats."""

    __slots__ = ("bytes", "chunks", "handle", "keep", "kept", "lines", "pending")

    def __init__(self, path: Path, keep: bool) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.handle: BinaryIO = path.open("wb")
        self.chunks: list[bytes] = []
        self.pending = 0
        self.lines = 0
        self.bytes = 0
        self.keep = keep
        self.kept: list[Json] = []

    def write(self, record: Json) -> None:
        data = orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE)
        self.chunks.append(data)
        self.pending += len(data)
        self.lines += 1
        self.bytes += len(data)
        if self.keep:
            if len(self.kept) < _REPLAY_MAX_LINES:
                self.kept.append(record)
            else:
                self.keep, self.kept = False, []
        if self.pending >= _FLUSH_AT:
            self.flush()

    def flush(self) -> None:
        if self.chunks:
            self.handle.write(b"".join(self.chunks))
            self.chunks.clear()
            self.pending = 0

    def close(self) -> None:
        self.flush()
        self.handle.close()


@dataclass
class _Totals:
    files: int = 0
    lines: int = 0
    bytes: int = 0
    sessions: int = 0

    def add(self, out: _Out) -> None:
        self.files += 1
        self.sessions += 1
        self.lines += out.lines
        self.bytes += out.bytes

    def stats(self) -> DemoStats:
        return DemoStats(
            files=self.files, lines=self.lines, bytes=self.bytes, sessions=self.sessions
        )


# --------------------------------------------------------------------------- sessions


@dataclass
class _Plan:
    project: _Project
    start_ms: int
    turns: int
    model: str
    cli: str
    archived: bool = False
    model_switch_at: int | None = None  # turn index where /model switches to gpt-5
    reemit: bool = False
    info_null: bool = False
    fork_of: _Rollout | None = None


@dataclass
class _Rollout:
    """One rollout being written, with its running clock and cumulative usage."""

    sid: str
    path: Path
    out: _Out
    cwd: str
    clock: int
    model: str
    total: list[int] = field(default_factory=lambda: [0, 0, 0, 0, 0])
    context: int = 0
    calls: int = 0
    first_prompt: str = ""
    last_reply: str = ""
    updated_ms: int = 0


class _Generator:
    def __init__(self, home: Path, rng: random.Random) -> None:
        self.codex = home / ".codex"
        self.rng = rng
        self.totals = _Totals()
        self.threads: list[tuple[_Rollout, _Plan]] = []

    # -- ids and time ----------------------------------------------------------------
    def uuid7(self, ms: int) -> str:
        h = f"{ms:012x}"
        r = self.rng.getrandbits(62)
        return f"{h[:8]}-{h[8:12]}-7{r & 0xFFF:03x}-{8 + (r >> 12 & 3):x}{r >> 14 & 0xFFF:03x}-{r >> 26 & 0xFFFFFFFFFFFF:012x}"

    def tick(self, ro: _Rollout, low: int, high: int) -> str:
        ro.clock += self.rng.randint(low, high)
        return iso_ms(ro.clock)

    def rec(self, ro: _Rollout, kind: str, payload: Json, low: int = 1, high: int = 5) -> None:
        ro.out.write({"timestamp": self.tick(ro, low, high), "type": kind, "payload": payload})

    # -- records ---------------------------------------------------------------------
    def open(self, plan: _Plan, parent: str | None) -> _Rollout:
        sid = self.uuid7(plan.start_ms)
        stamp = (_EPOCH + timedelta(milliseconds=plan.start_ms)).strftime("%Y-%m-%dT%H-%M-%S")
        name = f"rollout-{stamp}-{sid}.jsonl"
        if plan.archived:
            path = self.codex / "archived_sessions" / name
        else:
            day = (_EPOCH + timedelta(milliseconds=plan.start_ms)).strftime("%Y/%m/%d")
            path = self.codex / "sessions" / day / name
        keep = plan.fork_of is None
        ro = _Rollout(sid, path, _Out(path, keep), plan.project.cwd, plan.start_ms, plan.model)
        meta: Json = {"id": sid}
        if parent is not None:
            meta["forked_from_id"] = parent
        meta.update(
            {
                "timestamp": iso_ms(plan.start_ms),
                "cwd": plan.project.cwd,
                "originator": "codex_cli_rs",
                "cli_version": plan.cli,
                "source": "cli",
                "model_provider": "openai",
                "git": {
                    "commit_hash": f"{self.rng.getrandbits(160):040x}",
                    "branch": plan.project.branch,
                    "repository_url": "https://git.example/"
                    + plan.project.cwd.rsplit("/", 1)[-1]
                    + ".git",
                },
            }
        )
        ro.out.write({"timestamp": iso_ms(plan.start_ms), "type": "session_meta", "payload": meta})
        return ro

    def replay(self, ro: _Rollout, parent: _Rollout) -> None:
        """Copy the parent's history, stamped within the fork's first second."""
        base = ro.clock
        last = base - base % 1000 + 999  # Codex stamps the whole replay at the fork's second
        for i, record in enumerate(parent.out.kept):
            ro.out.write({**record, "timestamp": iso_ms(min(base + 1 + i // 4, last))})
        ro.clock = base + 1000 + self.rng.randint(2000, 9000)
        ro.total = list(parent.total)
        ro.context = parent.context

    def turn_context(self, ro: _Rollout, model: str) -> str:
        turn_id = self.uuid7(ro.clock + 300)
        self.rec(
            ro,
            "turn_context",
            {
                "turn_id": turn_id,
                "cwd": ro.cwd,
                "approval_policy": "on-request",
                "sandbox_policy": {"type": "workspace-write", "network_access": False},
                "model": model,
                "effort": self.rng.choice(("low", "medium", "medium", "high")),
                "summary": "auto",
            },
            200,
            400,
        )
        ro.model = model
        return turn_id

    def context_messages(self, ro: _Rollout) -> None:
        self.rec(
            ro,
            "response_item",
            {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": _PERMISSIONS}]},
        )  # fmt: skip
        env = (
            f"<environment_context>\n  <cwd>{ro.cwd}</cwd>\n  <approval_policy>on-request"
            "</approval_policy>\n  <sandbox_mode>workspace-write</sandbox_mode>\n"
            "  <network_access>restricted</network_access>\n  <shell>bash</shell>\n"
            "</environment_context>"
        )
        self.rec(
            ro,
            "response_item",
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": env}]},
        )
        ro.context += 2400

    def dual(self, ro: _Rollout, role: str, text: str, phase: str | None = None) -> None:
        """A prompt or reply, written as Codex does: event_msg and response_item."""
        if role == "user":
            event: Json = {"type": "user_message", "message": text, "images": []}
            item: Json = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}  # fmt: skip
        else:
            event = {"type": "agent_message", "message": text, "phase": phase}
            item = {"type": "message", "role": "assistant", "phase": phase,
                    "content": [{"type": "output_text", "text": text}]}  # fmt: skip
        pair = [("event_msg", event), ("response_item", item)]
        if self.rng.random() < 0.3:  # both orders occur in real rollouts
            pair.reverse()
        self.rec(ro, pair[0][0], pair[0][1], 800, 4000)
        self.rec(ro, pair[1][0], pair[1][1], 1, 2)

    def reasoning(self, ro: _Rollout) -> None:
        summary = self.rng.sample(_REASONING, self.rng.randint(1, 2))
        self.rec(
            ro,
            "response_item",
            {
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": s} for s in summary],
                "content": None,
                "encrypted_content": "gAAAAAB" + f"{self.rng.getrandbits(240):060x}" + "==",
            },
            900,
            6000,
        )
        for s in summary:
            self.rec(ro, "event_msg", {"type": "agent_reasoning", "text": s}, 1, 2)

    def tool(self, ro: _Rollout, project: _Project) -> None:
        ro.calls += 1
        call_id = f"call_{self.rng.getrandbits(96):024x}"
        path = self.rng.choice(project.files)
        roll = self.rng.random()
        if roll < 0.3:
            patch = (
                f"*** Begin Patch\n*** Update File: {path}\n@@\n-    return value\n"
                f"+    return normalize(value)\n*** End Patch\n"
            )
            self.rec(ro, "response_item", {"type": "custom_tool_call", "status": "completed",
                     "call_id": call_id, "name": "apply_patch", "input": patch}, 600, 3000)  # fmt: skip
            output = f"Success. Updated the following files:\nM {path}\n"
            self.rec(ro, "response_item", {"type": "custom_tool_call_output", "call_id": call_id,
                     "output": output}, 100, 600)  # fmt: skip
            return
        if roll < 0.6:
            cmd, code = project.test_cmd, 0 if self.rng.random() < 0.7 else 1
            body = "12 passed in 1.4s\n" if code == 0 else "1 failed, 11 passed\n"
        elif roll < 0.9:
            cmd, code = f"sed -n 1,120p {path}", 0
            body = "".join(
                f"{i:4d}  line {i} of {path}\n" for i in range(1, self.rng.randint(4, 14))
            )
        else:
            cmd, code = f"rg -n retry {path.rsplit('/', 1)[0]}", 1
            body = ""
        args = orjson.dumps({"cmd": cmd, "workdir": ro.cwd, "yield_time_ms": 10000}).decode()
        self.rec(ro, "response_item", {"type": "function_call", "name": "exec_command",
                 "arguments": args, "call_id": call_id}, 600, 3000)  # fmt: skip
        output = (
            f"Chunk ID: {self.rng.getrandbits(16):04x}\nWall time: {self.rng.uniform(0.05, 3):.2f} "
            f"seconds\nProcess exited with code {code}\nOriginal token count: {len(body) // 4}\n"
            f"Output:\n{body}"
        )
        self.rec(ro, "response_item", {"type": "function_call_output", "call_id": call_id,
                 "output": output}, 200, 5000)  # fmt: skip
        ro.context += 150 + len(body) // 3

    def tokens(self, ro: _Rollout) -> Json:
        """One model call: the whole context is input, most of it cached."""
        fresh = self.rng.randint(300, 4000)
        inp = ro.context + fresh
        cached = ro.context - ro.context % 256 if ro.context else 0
        out = self.rng.randint(40, 1600)
        reasoning = self.rng.randint(0, out // 2) // 64 * 64
        ro.context = inp + out
        t = ro.total
        t[0] += inp
        t[1] += cached
        t[2] += out
        t[3] += reasoning
        t[4] += inp + out
        payload: Json = {
            "type": "token_count",
            "info": {
                "total_token_usage": _usage(t),
                "last_token_usage": _usage([inp, cached, out, reasoning, inp + out]),
                "model_context_window": 272000,
            },
            "rate_limits": {
                "primary": {"used_percent": round(self.rng.uniform(1, 60), 1), "window_minutes": 300, "resets_at": ro.clock // 1000 + 9000},
                "secondary": {"used_percent": round(self.rng.uniform(1, 30), 1), "window_minutes": 10080, "resets_at": ro.clock // 1000 + 400000},
            },
        }  # fmt: skip
        self.rec(ro, "event_msg", payload, 300, 2500)
        if ro.context > _COMPACT_AT:
            summary = "Summary of the work so far: " + self.rng.choice(_REPLIES)
            self.rec(ro, "compacted", {"message": summary, "replacement_history": []}, 500, 3000)
            self.rec(ro, "event_msg", {"type": "context_compacted"}, 1, 3)
            ro.context = 12_000
        return payload

    def turn(self, ro: _Rollout, plan: _Plan, index: int, prompt: str) -> None:
        project = plan.project
        model = ro.model
        if plan.model_switch_at is not None and index == plan.model_switch_at:
            model = "gpt-5"
        elif plan.model_switch_at is not None and index == plan.model_switch_at + 1:
            model = plan.model
        turn_id = self.turn_context(ro, model)
        self.dual(ro, "user", prompt)
        ro.context += len(prompt) // 3 + 20
        self.rec(ro, "event_msg", {"type": "task_started", "turn_id": turn_id,
                 "started_at": ro.clock // 1000, "model_context_window": 272000}, 5, 30)  # fmt: skip
        if plan.info_null and index == 0:
            self.rec(ro, "event_msg", {"type": "token_count", "info": None, "rate_limits": {
                "primary": {"used_percent": 0.0, "window_minutes": 300, "resets_at": ro.clock // 1000 + 18000}}}, 50, 200)  # fmt: skip
        for step in range(self.rng.randint(1, 3)):
            self.reasoning(ro)
            if step == 0 and self.rng.random() < 0.5:
                self.dual(ro, "assistant", self.rng.choice(_COMMENTARY), "commentary")
            for _ in range(self.rng.randint(1, 3)):
                self.tool(ro, project)
            payload = self.tokens(ro)
            if plan.reemit and index == 0 and step == 0:
                self.rec(ro, "event_msg", payload, 1, 4)  # the same cumulative total again
        reply = self.rng.choice(_REPLIES)
        self.dual(ro, "assistant", reply, "final_answer")
        self.tokens(ro)
        self.rec(ro, "event_msg", {"type": "task_complete", "turn_id": turn_id,
                 "last_agent_message": reply}, 20, 200)  # fmt: skip
        ro.last_reply = reply

    def session(self, plan: _Plan) -> _Rollout:
        parent = plan.fork_of
        ro = self.open(plan, parent.sid if parent else None)
        if parent is not None:
            self.replay(ro, parent)
        else:
            self.turn_context(ro, plan.model)
            self.context_messages(ro)
        project = plan.project
        first = self.rng.choice(project.tasks)
        if parent is not None:
            first = "try a different approach: " + first
        ro.first_prompt = first
        for index in range(plan.turns):
            prompt = first if index == 0 else self.rng.choice(_FOLLOW_UPS)
            self.turn(ro, plan, index, prompt)
        ro.updated_ms = ro.clock
        ro.out.close()
        self.totals.add(ro.out)
        return ro

    # -- thread index ------------------------------------------------------------------
    def write_state_index(self) -> None:
        path = self.codex / "state_5.sqlite"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.unlink(missing_ok=True)
        con = sqlite3.connect(path)
        try:
            con.execute(
                "CREATE TABLE threads (id TEXT PRIMARY KEY, rollout_path TEXT NOT NULL, "
                "created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, source TEXT NOT NULL, "
                "model_provider TEXT NOT NULL, cwd TEXT NOT NULL, title TEXT NOT NULL, "
                "tokens_used INTEGER NOT NULL DEFAULT 0, archived INTEGER NOT NULL DEFAULT 0, "
                "cli_version TEXT NOT NULL DEFAULT '', model TEXT, created_at_ms INTEGER, "
                "updated_at_ms INTEGER, preview TEXT NOT NULL DEFAULT '')"
            )
            con.execute(
                "CREATE TABLE thread_spawn_edges (parent_thread_id TEXT NOT NULL, "
                "child_thread_id TEXT NOT NULL PRIMARY KEY, status TEXT NOT NULL)"
            )
            for ro, plan in self.threads:
                rollout_path = "/home/dev/.codex/" + ro.path.relative_to(self.codex).as_posix()
                con.execute(
                    "INSERT INTO threads VALUES (?, ?, ?, ?, 'cli', 'openai', ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (ro.sid, rollout_path, plan.start_ms // 1000, ro.updated_ms // 1000, ro.cwd,
                     ro.first_prompt[:60], ro.total[4], int(plan.archived), plan.cli, ro.model,
                     plan.start_ms, ro.updated_ms, ro.first_prompt),
                )  # fmt: skip
            con.commit()
        finally:
            con.close()
        self.totals.files += 1
        self.totals.bytes += path.stat().st_size


def _usage(v: list[int]) -> Json:
    return {
        "input_tokens": v[0],
        "cached_input_tokens": v[1],
        "output_tokens": v[2],
        "reasoning_output_tokens": v[3],
        "total_tokens": v[4],
    }


def generate_codex_home(
    home: Path,
    *,
    seed: int = 7,
    sessions: int = 6,
    start: datetime = datetime(2026, 5, 1, 9, tzinfo=UTC),
) -> DemoStats:
    """Write a small, realistic synthetic Codex home under ``home``.

    Sessions start every 14 hours from ``start`` (UTC) across four projects, so the
    defaults span four UTC days, with 2 to 4 turns each (reasoning, ``exec_command`` and
    ``apply_patch`` calls with their outputs, some failing, one ``token_count`` per model
    call). By session index: 0 switches to ``gpt-5`` for one turn and back (``/model``),
    1 starts with an ``info: null`` token count and re-emits its first call's token
    count, 2 is archived (``archived_sessions/``), and 3 is a fork of session 0
    (``forked_from_id``) that first replays session 0's history. ``state_5.sqlite`` lists
    every thread (title, preview, model, times, archived flag).

    The output is byte-for-byte identical for identical arguments. Existing files with
    the same names are overwritten. Returns what was written.
    """
    if sessions < 0:
        raise ValueError("sessions must be >= 0")
    rng = random.Random(seed)
    gen = _Generator(home, rng)
    start_ms = epoch_ms(start)
    written: list[_Rollout] = []
    for i in range(sessions):
        plan = _Plan(
            project=_PROJECTS[i % len(_PROJECTS)],
            start_ms=start_ms + i * 14 * 3_600_000 + rng.randint(0, 600_000),
            turns=rng.randint(2, 4),
            model=_MODELS[0] if i % 3 != 2 else _MODELS[2],
            cli=_CLI_VERSIONS[i % len(_CLI_VERSIONS)],
            archived=i == 2,
            model_switch_at=1 if i == 0 else None,
            reemit=i == 1,
            info_null=i == 1,
            fork_of=written[0] if i == 3 and written else None,
        )
        if plan.fork_of is not None:
            plan.project = next(p for p in _PROJECTS if p.cwd == plan.fork_of.cwd)
        ro = gen.session(plan)
        written.append(ro)
        gen.threads.append((ro, plan))
    if sessions:
        gen.write_state_index()
    return gen.totals.stats()


def generate_codex_corpus(
    home: Path,
    *,
    seed: int,
    target_lines: int,
    start: datetime = datetime(2026, 3, 1, tzinfo=UTC),
    days: int = 60,
) -> DemoStats:
    """Write a large synthetic Codex home with at least ``target_lines`` lines.

    Uses the same record generator as :func:`generate_codex_home`, with session sizes
    drawn from a long-tailed (Pareto) distribution, capped at about 1/200 of
    ``target_lines`` turns. Sessions start at random moments within ``days`` days of
    ``start``; about 5% are archived, 10% switch models for a turn, and 3% fork the
    previous session (replaying its history when it is short enough to keep).

    Files are written one session at a time through bounded buffers, so memory does not
    grow with the corpus. Deterministic for identical arguments.
    """
    if target_lines < 0 or days < 1:
        raise ValueError("target_lines must be >= 0, days >= 1")
    rng = random.Random(seed)
    gen = _Generator(home, rng)
    start_ms = epoch_ms(start)
    cap = max(4, target_lines // 200 // 12)
    previous: _Rollout | None = None
    while gen.totals.lines < target_lines:
        fork = previous is not None and bool(previous.out.kept) and rng.random() < 0.03
        plan = _Plan(
            project=rng.choice(_PROJECTS),
            start_ms=start_ms + rng.randrange(days * _DAY_MS),
            turns=min(cap, max(1, int(rng.paretovariate(1.3)))),
            model=rng.choices(_MODELS, weights=(6, 3, 1))[0],
            cli=rng.choice(_CLI_VERSIONS),
            archived=rng.random() < 0.05,
            model_switch_at=0 if rng.random() < 0.1 else None,
            reemit=rng.random() < 0.1,
            info_null=rng.random() < 0.2,
            fork_of=previous if fork else None,
        )
        if plan.fork_of is not None:
            plan.project = next(p for p in _PROJECTS if p.cwd == plan.fork_of.cwd)
            plan.start_ms = max(plan.start_ms, plan.fork_of.updated_ms + 60_000)
        written = gen.session(plan)
        if previous is not None:
            previous.out.kept = []  # only the latest session is kept for a fork
        previous = written
    return gen.totals.stats()
