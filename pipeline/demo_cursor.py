"""Seeded, deterministic synthetic Cursor homes for demos, tests and benchmarks.

Everything written here is invented: projects live under ``/home/dev/...``, ids come
from a seeded :class:`random.Random`, and no real transcript or credential is involved.
The same arguments always produce byte-identical transcripts and database rows.

Layout written under ``home``::

    .cursor/projects/<slug>/agent-transcripts/<composerId>/<composerId>.jsonl
    .cursor/projects/<slug>/agent-transcripts/<composerId>/subagents/<childId>.jsonl
    .config/Cursor/User/globalStorage/state.vscdb

Transcript lines follow Cursor's agent transcript format (provider-formats §5): user
text wrapped in ``<timestamp>``/``<user_query>``, assistant ``text``/``tool_use`` parts
without ids, models or token counts, and ``turn_ended`` markers. ``state.vscdb`` holds
the ``composer.composerHeaders`` item, one ``composerData:<id>`` row per composer
(parents and subagents) and one ``bubbleId:<composerId>:<bubbleId>`` row per model
reply with its ``tokenCount`` — the only place Cursor keeps token counts. Every file's
mtime is set to the time of its last turn, so freshness is realistic too.
"""

from __future__ import annotations

import os
import random
import sqlite3
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, BinaryIO, Final

import orjson

from agentlake.demo import DemoStats, epoch_ms, iso_ms

__all__ = ["generate_cursor_corpus", "generate_cursor_home", "slug_of"]

Json = dict[str, Any]

_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_FLUSH_AT: Final = 1 << 20
_ROWS_PER_INSERT: Final = 2_000
_MODELS: Final = ("claude-4.5-sonnet-thinking", "gpt-5", "claude-4.5-opus", "default")
_SUBAGENT_MODELS: Final = ("claude-4.5-haiku", "gpt-5-mini")
_FAILED: Final = ("error", "cancelled")
_WEEKDAYS: Final = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTHS: Final = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)  # fmt: skip


@dataclass(frozen=True)
class _Project:
    path: str
    utc_offset_min: int  # the writer's local zone, as Cursor prints it in <timestamp>
    files: tuple[str, ...]
    prompts: tuple[str, ...]


_PROJECTS: Final = (
    _Project(
        "/home/dev/webshop",
        -300,
        ("app/routes.py", "app/models.py", "app/cart.py", "tests/test_cart.py"),
        (
            "add a /health endpoint",
            "the cart total is off by one cent, find out why",
            "write tests for the discount rules",
            "refactor the checkout flow into smaller functions",
        ),
    ),
    _Project(
        "/home/dev/api-gateway",
        120,
        ("src/router.ts", "src/auth.ts", "src/limits.ts", "test/router.test.ts"),
        (
            "list the routes and their handlers",
            "rate limiting ignores the burst setting",
            "add request ids to every log line",
        ),
    ),
    _Project(
        "/home/dev/ml-pipeline",
        330,
        (
            "pipeline/train.py",
            "pipeline/features.py",
            "configs/base.yaml",
            "tests/test_features.py",
        ),
        (
            "the feature scaler leaks test data, fix it",
            "speed up the data loader",
            "explain why the validation loss spikes at epoch 3",
        ),
    ),
)

_REPLIES: Final = (
    "I'll start by reading the relevant files.",
    "Found it: the value is rounded before the discount is applied.",
    "The change is in place; running the tests now.",
    "All tests pass. Summary of the change below.",
    "Delegating the test writing to a subagent.",
)


def slug_of(path: str) -> str:
    """Cursor's project directory name for a workspace path: separators become ``-``
    and the leading one is dropped (``/home/dev/webshop`` → ``home-dev-webshop``)."""
    return path.strip("/").replace("/", "-").replace("\\", "-").replace(":", "")


def _clock(ms: int, offset_min: int) -> str:
    """The ``<timestamp>`` body Cursor writes: local time with its UTC offset."""
    local = _EPOCH + timedelta(milliseconds=ms + offset_min * 60_000)
    hour = local.hour % 12 or 12
    half = "AM" if local.hour < 12 else "PM"
    sign = "+" if offset_min >= 0 else "-"
    h, m = divmod(abs(offset_min), 60)
    zone = f"UTC{sign}{h}" + (f":{m:02d}" if m else "")
    return (
        f"{_WEEKDAYS[local.weekday()]}, {_MONTHS[local.month - 1]} {local.day}, {local.year}, "
        f"{hour}:{local.minute:02d} {half} ({zone})"
    )


# --------------------------------------------------------------------------- output


class _Lines:
    """Buffered JSONL writer for one file at a time; counts what it wrote."""

    __slots__ = ("_chunks", "_handle", "_pending", "bytes", "lines")

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._handle: BinaryIO = path.open("wb")
        self._chunks: list[bytes] = []
        self._pending = 0
        self.lines = 0
        self.bytes = 0

    def write(self, record: Json) -> None:
        data = orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE)
        self._chunks.append(data)
        self._pending += len(data)
        self.lines += 1
        self.bytes += len(data)
        if self._pending >= _FLUSH_AT:
            self._flush()

    def _flush(self) -> None:
        self._handle.write(b"".join(self._chunks))
        self._chunks.clear()
        self._pending = 0

    def close(self) -> None:
        self._flush()
        self._handle.close()


class _StateDb:
    """``state.vscdb`` with Cursor's key/value tables, filled in bounded batches."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.unlink(missing_ok=True)
        self.path = path
        self.con = sqlite3.connect(path)
        self.con.execute("CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
        self.con.execute(
            "CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)"
        )
        self.rows: list[tuple[str, str]] = []
        self.headers: list[Json] = []

    def put(self, key: str, value: Json) -> None:
        self.rows.append((key, orjson.dumps(value).decode()))
        if len(self.rows) >= _ROWS_PER_INSERT:
            self.flush()

    def flush(self) -> None:
        self.con.executemany("INSERT INTO cursorDiskKV VALUES (?, ?)", self.rows)
        self.rows.clear()

    def close(self, mtime_ms: int) -> int:
        self.flush()
        headers = orjson.dumps({"allComposers": self.headers}).decode()
        self.con.execute("INSERT INTO ItemTable VALUES ('composer.composerHeaders', ?)", (headers,))
        self.con.commit()
        self.con.close()
        _touch(self.path, mtime_ms)
        return self.path.stat().st_size


def _touch(path: Path, ms: int) -> None:
    ns = ms * 1_000_000
    os.utime(path, ns=(ns, ns))


# --------------------------------------------------------------------------- sessions


@dataclass
class _Session:
    composer: str
    project: _Project
    model: str
    start_ms: int
    turns: int
    subagent_at: int | None = None  # the turn that delegates to a subagent
    failed_turn: int | None = None
    name: str = ""
    max_steps: int = 3  # assistant lines (tool calls) per turn, at most


class _Writer:
    """Writes composers: transcript lines, their subagents and their database rows."""

    def __init__(self, home: Path, rng: random.Random) -> None:
        self.projects = home / ".cursor" / "projects"
        self.rng = rng
        self.db = _StateDb(home / ".config" / "Cursor" / "User" / "globalStorage" / "state.vscdb")
        self.files = 0
        self.lines = 0
        self.bytes = 0
        self.sessions = 0
        self.last_ms = 0

    def uuid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def _open(self, path: Path) -> _Lines:
        self.files += 1
        self.sessions += 1
        return _Lines(path)

    def _close(self, out: _Lines, path: Path, ms: int) -> None:
        out.close()
        _touch(path, ms)
        self.lines += out.lines
        self.bytes += out.bytes
        self.last_ms = max(self.last_ms, ms)

    def _user(self, text: str, ms: int, project: _Project) -> Json:
        body = f"<timestamp>{_clock(ms, project.utc_offset_min)}</timestamp>\n<user_query>\n{text}\n</user_query>"
        return {"role": "user", "message": {"content": [{"type": "text", "text": body}]}}

    def _tool(self, project: _Project) -> Json:
        rng = self.rng
        file = f"{project.path}/{rng.choice(project.files)}"
        roll = rng.randrange(5)
        args: Json
        if roll == 0:
            name, args = (
                "Shell",
                {
                    "command": "make test",
                    "working_directory": project.path,
                    "description": "run the tests",
                },
            )
        elif roll == 1:
            name, args = "Read", {"path": file}
        elif roll == 2:
            name, args = (
                "StrReplace",
                {
                    "path": file,
                    "old_string": "total = round(total)",
                    "new_string": "total = round(total, 2)",
                },
            )
        elif roll == 3:
            name, args = "Grep", {"pattern": "def ", "path": project.path}
        else:
            name, args = "ReadLints", {"paths": [file]}
        return {"type": "tool_use", "name": name, "input": args}

    def _bubble(self, composer: str, ms: int, model: str | None, scale: int) -> None:
        rng = self.rng
        value: Json = {
            "_v": 3,
            "bubbleId": self.uuid(),
            "type": 2,
            "text": rng.choice(_REPLIES),
            "createdAt": iso_ms(ms),
            "tokenCount": {
                "inputTokens": rng.randint(2, 12) * scale,
                "outputTokens": rng.randint(20, 400),
            },
        }
        if model is not None:
            value["modelInfo"] = {"modelName": model}
        self.db.put(f"bubbleId:{composer}:{value['bubbleId']}", value)

    def _composer_row(
        self,
        composer: str,
        name: str,
        model: str,
        project: _Project,
        start_ms: int,
        end_ms: int,
        bubbles: int,
    ) -> None:
        self.db.put(
            f"composerData:{composer}",
            {
                "_v": 10,
                "composerId": composer,
                "name": name,
                "createdAt": start_ms,
                "lastUpdatedAt": end_ms,
                "modelConfig": {"modelName": model, "maxMode": False},
                "workspaceIdentifier": {
                    "id": slug_of(project.path),
                    "uri": {"fsPath": project.path, "scheme": "file"},
                },
                "fullConversationHeadersOnly": [
                    {"bubbleId": f"h{i}", "type": 1 + i % 2} for i in range(bubbles)
                ],
            },
        )
        self.db.headers.append(
            {
                "composerId": composer,
                "name": name,
                "createdAt": start_ms,
                "lastUpdatedAt": end_ms,
                "unifiedMode": "agent",
            }
        )

    def session(self, plan: _Session, *, slug: str | None = None, indexed: bool = True) -> Path:
        """Write one parent composer (and its subagent); returns its transcript path.
        ``indexed=False`` writes the transcript only (a copy of a composer that the
        database already describes)."""
        rng = self.rng
        project = plan.project
        base = self.projects / (slug or slug_of(project.path)) / "agent-transcripts"
        path = base / plan.composer / f"{plan.composer}.jsonl"
        out = self._open(path)
        ms = plan.start_ms
        bubbles = 0
        pinned = None if plan.model == "default" else plan.model
        for turn in range(plan.turns):
            prompt = project.prompts[(turn + plan.start_ms) % len(project.prompts)]
            out.write(self._user(prompt, ms, project))
            ms += rng.randint(5_000, 40_000)
            steps = rng.randint(1, plan.max_steps)
            for step in range(steps):
                blocks: list[Json] = []
                if step == 0:
                    blocks.append({"type": "text", "text": rng.choice(_REPLIES)})
                if plan.subagent_at == turn and step == 0:
                    child = self._subagent(plan, base, ms)
                    blocks.append(
                        {
                            "type": "tool_use",
                            "name": "Task",
                            "input": {
                                "description": "Write tests",
                                "prompt": child,
                                "subagent_type": "generalPurpose",
                            },
                        }
                    )
                blocks.append(self._tool(project))
                out.write({"role": "assistant", "message": {"content": blocks}})
                if indexed:
                    self._bubble(plan.composer, ms, pinned or "claude-4.5-sonnet", 1_000)
                bubbles += 2
                ms += rng.randint(3_000, 30_000)
            status = _FAILED[turn % 2] if plan.failed_turn == turn else "success"
            out.write({"type": "turn_ended", "status": status})
            ms += rng.randint(60_000, 20 * 60_000)
        self._close(out, path, ms)
        if indexed:
            self._composer_row(
                plan.composer, plan.name, plan.model, project, plan.start_ms, ms, bubbles
            )
        return path

    def _subagent(self, plan: _Session, base: Path, ms: int) -> str:
        """A delegated run: its own composer, file and bubbles; returns its prompt."""
        rng = self.rng
        child = self.uuid()
        prompt = f"write the tests for {plan.name.lower()}"
        path = base / plan.composer / "subagents" / f"{child}.jsonl"
        out = self._open(path)
        out.write({"role": "user", "message": {"content": [{"type": "text", "text": prompt}]}})
        model = rng.choice(_SUBAGENT_MODELS)
        start = ms
        for _ in range(rng.randint(2, 4)):
            ms += rng.randint(2_000, 15_000)
            out.write({"role": "assistant", "message": {"content": [self._tool(plan.project)]}})
            self._bubble(child, ms, model, 400)
        out.write(
            {
                "role": "assistant",
                "message": {"content": [{"type": "text", "text": "Tests written and passing."}]},
            }
        )
        out.write({"type": "turn_ended", "status": "success"})
        self._close(out, path, ms)
        self._composer_row(child, "Write tests", "default", plan.project, start, ms, 4)
        return prompt

    def empty_composer(self, ms: int) -> None:
        """The composer Cursor creates for every new window and that is never used."""
        composer = self.uuid()
        self.db.put(
            f"composerData:{composer}",
            {"_v": 10, "composerId": composer, "fullConversationHeadersOnly": []},
        )
        self.db.headers.append(
            {"composerId": composer, "name": "New Chat", "createdAt": ms, "lastUpdatedAt": ms}
        )

    def stats(self) -> DemoStats:
        return DemoStats(
            files=self.files, lines=self.lines, bytes=self.bytes, sessions=self.sessions
        )

    def close(self) -> None:
        size = self.db.close(self.last_ms)
        self.files += 1
        self.bytes += size


def _names(rng: random.Random) -> Iterator[str]:
    words = (
        "Health endpoint",
        "Cart rounding",
        "Route listing",
        "Loader speed-up",
        "Discount tests",
        "Request ids",
        "Scaler leak",
        "Checkout refactor",
    )
    while True:
        yield rng.choice(words)


def generate_cursor_home(home: Path, *, seed: int = 7, sessions: int = 6) -> DemoStats:
    """Write a small, realistic synthetic Cursor home under ``home``.

    ``sessions`` parent composers start about every nine hours from 2026-05-01 14:00Z
    across three projects (local zones UTC-5, UTC+2 and UTC+5:30, as the
    ``<timestamp>`` wrappers show), so the defaults span three UTC days. Session
    ``i % 3 == 0`` delegates one turn to a subagent (its own file, composer and bubbles),
    ``i % 4 == 1`` has one turn that ends with ``error`` or ``cancelled``, ``i % 4 == 3``
    uses Cursor's ``default`` (auto) model, so its bubbles carry the model. Session 1 is
    also present, shorter and older, under ``empty-window`` (a duplicate composer stem
    that discovery leaves out), and the database holds one never-used "New Chat".

    ``sessions`` in the result counts transcript files (parents, subagents and the
    duplicate copy). The output is identical for identical arguments.
    """
    if sessions < 1:
        raise ValueError("sessions must be >= 1")
    rng = random.Random(seed)
    writer = _Writer(home, rng)
    names = _names(rng)
    start = epoch_ms(datetime(2026, 5, 1, 14, tzinfo=UTC))
    try:
        for index in range(sessions):
            plan = _Session(
                composer=writer.uuid(),
                project=_PROJECTS[index % len(_PROJECTS)],
                model=_MODELS[index % len(_MODELS)],
                start_ms=start + index * 9 * 3_600_000 + rng.randint(0, 30) * 60_000,
                turns=rng.randint(3, 5),
                subagent_at=1 if index % 3 == 0 else None,
                failed_turn=2 if index % 4 == 1 else None,
                name=next(names),
            )
            writer.session(plan)
            if index == 1:
                older = _Session(
                    plan.composer,
                    plan.project,
                    plan.model,
                    plan.start_ms - 86_400_000,
                    1,
                    name=plan.name,
                )
                copy = writer.session(older, slug="empty-window", indexed=False)
                _touch(copy, plan.start_ms - 86_400_000)
        writer.empty_composer(start)
    finally:
        writer.close()
    return writer.stats()


def generate_cursor_corpus(
    home: Path,
    *,
    seed: int,
    target_lines: int,
    start: datetime = datetime(2026, 1, 5, tzinfo=UTC),
    days: int = 60,
) -> DemoStats:
    """Write a large synthetic Cursor home with at least ``target_lines`` transcript
    lines, for benchmarks.

    Session sizes are long-tailed (Pareto: many short composers, a few very long ones,
    each capped at about 1/150 of the target), with up to 3, 6 or 12 tool calls per
    turn; about one in ten delegates a turn to a
    subagent and one in twenty has a failed turn. Every reply has its bubble with a
    token count in ``state.vscdb``. Files are written one at a time through bounded
    buffers and database rows are inserted in batches, so memory does not grow with
    the corpus. Deterministic for identical arguments.
    """
    if target_lines < 0 or days < 1:
        raise ValueError("target_lines must be >= 0 and days >= 1")
    rng = random.Random(seed)
    writer = _Writer(home, rng)
    names = _names(rng)
    start_ms = epoch_ms(start)
    cap = max(4, target_lines // 1000)  # turns; a turn averages about 6 lines
    try:
        while writer.lines < target_lines:
            turns = min(cap, max(1, int(rng.paretovariate(1.3) * 2)))
            plan = _Session(
                composer=writer.uuid(),
                project=rng.choice(_PROJECTS),
                model=rng.choice(_MODELS),
                start_ms=start_ms + rng.randrange(days * 86_400_000),
                turns=turns,
                subagent_at=rng.randrange(turns) if rng.random() < 0.1 else None,
                failed_turn=rng.randrange(turns) if rng.random() < 0.05 else None,
                name=next(names),
                max_steps=rng.choice((3, 6, 12)),
            )
            writer.session(plan)
    finally:
        writer.close()
    return writer.stats()
