"""Seeded, deterministic synthetic Gemini CLI homes for demos, tests and benchmarks.

Everything written here is invented: projects live under ``/home/dev/...``, ids come
from a seeded :class:`random.Random`, and no real transcript or credential is involved.
The same arguments always produce byte-identical files.

Layout written under ``home``::

    .gemini/projects.json                                   {"projects": {"/abs/path": "slug"}}
    .gemini/tmp/<slug>/.project_root                        the project's absolute path
    .gemini/tmp/<slug>/chats/session-<stamp>-<id8>.jsonl    append-only session logs
    .gemini/tmp/<slug>/chats/<sessionId>/<subagentId>.jsonl subagent logs
    .gemini/tmp/<sha256(path)>/chats/session-<stamp>-<id8>.json   legacy documents

Logs are written the way Gemini CLI's chat recorder writes them: a metadata line, then
each message when it is recorded, the model's message written again when its token
counts arrive and again when its tool calls complete (the last copy wins), a
``{"$set": {"lastUpdated": …}}`` after every message and a ``summary`` at the end.
"""

from __future__ import annotations

import hashlib
import json
import random
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO, Final

import orjson

from .demo import DemoStats, epoch_ms, iso_ms

__all__ = ["generate_gemini_corpus", "generate_gemini_home"]

Json = dict[str, Any]

_PRO: Final = "gemini-2.5-pro"
_FLASH: Final = "gemini-2.5-flash"
_FLUSH_AT: Final = 1 << 20

_PROJECTS: Final = (
    ("/home/dev/webshop", ("src/cart.py", "src/checkout.py", "tests/test_cart.py")),
    ("/home/dev/api-gateway", ("limiter.go", "router.go", "main.go")),
    ("/home/dev/notes-app", ("notes/store.ts", "notes/sync.ts", "README.md")),
    ("/home/dev/ml_pipeline.v2", ("train.py", "features/encode.py", "configs/base.yaml")),
)
_ASKS: Final = (
    "why does {f} fail on the edge case?",
    "add a unit test for {f}",
    "refactor {f} so the error handling is explicit",
    "explain what {f} does",
    "rename the helper in {f} and update its callers",
    "speed up the hot loop in {f}",
)
_ANSWERS: Final = (
    "The failure comes from an off-by-one in {f}; I fixed the bound and added a test.",
    "{f} now returns early on empty input; the suite passes.",
    "I split {f} into two functions and kept the public signature.",
    "{f} parses the request, validates it and hands it to the store.",
    "Renamed the helper in {f} and updated 3 call sites.",
)
_THOUGHTS: Final = (
    ("Reading the code", "Open {f} first to see how the input is handled."),
    ("Planning the change", "Keep the public API stable and cover the edge case with a test."),
    ("Checking callers", "Search for usages of the helper in {f} before renaming it."),
)
_INFO: Final = ("Model switched to gemini-2.5-flash", "Memory refreshed from GEMINI.md")


def _slug(path: str) -> str:
    """Gemini CLI's project directory name: the lowercased basename, every run of
    non-alphanumerics as ``-``."""
    out, dash = [], False
    for ch in Path(path).name.lower():
        if ch.isascii() and ch.isalnum():
            out.append(ch)
            dash = False
        elif not dash:
            out.append("-")
            dash = True
    return "".join(out).strip("-") or "project"


def _hash(path: str) -> str:
    return hashlib.sha256(path.encode()).hexdigest()


# --------------------------------------------------------------------------- output


class _Out:
    """Buffered writers for the session files being written; keeps the DemoStats counts."""

    def __init__(self) -> None:
        self.files = 0
        self.lines = 0
        self.bytes = 0
        self.sessions = 0

    def log(self, path: Path) -> _Log:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.files += 1
        self.sessions += 1
        return _Log(self, path.open("wb"))

    def document(self, path: Path, obj: Json) -> None:
        data = (json.dumps(obj, indent=2, ensure_ascii=False) + "\n").encode()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        self.files += 1
        self.sessions += 1
        self.bytes += len(data)

    def small(self, path: Path, data: bytes) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        self.files += 1
        self.bytes += len(data)

    def stats(self) -> DemoStats:
        return DemoStats(
            files=self.files, lines=self.lines, bytes=self.bytes, sessions=self.sessions
        )


class _Log:
    """One open ``.jsonl`` file, written through a bounded buffer."""

    __slots__ = ("chunks", "handle", "out", "pending")

    def __init__(self, out: _Out, handle: BinaryIO) -> None:
        self.out, self.handle = out, handle
        self.chunks: list[bytes] = []
        self.pending = 0

    def write(self, record: Json) -> None:
        data = orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE)
        self.chunks.append(data)
        self.pending += len(data)
        self.out.lines += 1
        self.out.bytes += len(data)
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


# --------------------------------------------------------------------------- sessions


@dataclass
class _Plan:
    """What one session will show."""

    project: str
    files: tuple[str, ...]
    start_ms: int
    turns: int
    model: str
    legacy: bool = False  # written as a legacy .json document
    rewind_at: int | None = None  # turn whose prompt is rewound (and retyped)
    subagent_at: int | None = None  # turn that delegates to a subagent
    edit_prompt_at: int | None = None  # turn whose prompt is re-recorded with new text
    history_sync: bool = False  # writes a {"$set": {"messages": [...]}} history record


@dataclass
class _Session:
    """A session being recorded: its file (or document), clock and messages."""

    sid: str
    log: _Log | None
    now: int
    messages: list[Json] = field(default_factory=list)
    context: int = 0  # prompt tokens the next call sends

    def write(self, record: Json) -> None:
        if self.log is not None:
            self.log.write(record)

    def push(self, msg: Json) -> None:
        """Record (or re-record) a message: append its full copy; in memory the last
        copy replaces the earlier one in place."""
        self.write(msg)
        for i, old in enumerate(self.messages):
            if old["id"] == msg["id"]:
                self.messages[i] = msg
                break
        else:
            self.messages.append(msg)
        self.write({"$set": {"lastUpdated": iso_ms(self.now)}})


class _Generator:
    def __init__(self, home: Path, rng: random.Random, out: _Out) -> None:
        self.home, self.rng, self.out = home, rng, out
        self.tmp = home / ".gemini" / "tmp"

    def uuid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def tick(self, s: _Session, low: int, high: int) -> str:
        s.now += self.rng.randint(low, high)
        return iso_ms(s.now)

    def fmt(self, pool: tuple[str, ...], files: tuple[str, ...]) -> str:
        return self.rng.choice(pool).format(f=self.rng.choice(files))

    def tokens(self, s: _Session, model: str, tool_calls: int) -> Json:
        """A ``TokensSummary``: ``input`` includes ``cached`` (the previous context)."""
        rng = self.rng
        prompt = s.context + rng.randint(200, 1_500) + (8_000 if not s.context else 0)
        cached = (s.context // 1024) * 1024 if s.context and rng.random() < 0.85 else 0
        output = rng.randint(40, 700)
        thoughts = rng.randint(0, 900) if model == _PRO else rng.randint(0, 200)
        tool = rng.randint(10, 120) * tool_calls
        s.context = prompt + output
        return {"input": prompt, "output": output, "cached": cached, "thoughts": thoughts,
                "tool": tool, "total": prompt + output + thoughts + tool}  # fmt: skip

    def tool_call(self, s: _Session, plan: _Plan) -> Json:
        rng = self.rng
        target = rng.choice(plan.files)
        path = f"{plan.project}/{target}"
        kind = rng.random()
        if kind < 0.45:
            name, args, output = (
                "read_file",
                {"absolute_path": path},
                f"# {target}\n" + "x = 1\n" * 8,
            )
        elif kind < 0.75:
            name = "run_shell_command"
            args = {"command": f"pytest -q {target}" if target.endswith(".py") else "make test"}
            output = f"{rng.randint(1, 60)} passed in {rng.randint(1, 9)}.{rng.randint(0, 99):02d}s"
        else:
            name = "replace"
            args = {"file_path": path, "old_string": "x = 1", "new_string": "x = 2"}
            output = f"Successfully modified file: {path} (1 replacements)."
        call_id = f"{name}-{s.now}-{rng.getrandbits(32):08x}"
        failed = rng.random() < 0.06
        response = {"error": "Tool execution was cancelled."} if failed else {"output": output}
        return {
            "id": call_id, "name": name, "args": args,
            "result": [{"functionResponse": {"id": call_id, "name": name, "response": response}}],
            "status": "cancelled" if failed else "success",
            "timestamp": self.tick(s, 300, 4_000), "displayName": name,
            "renderOutputAsMarkdown": name != "run_shell_command",
        }  # fmt: skip

    def model_turn(self, s: _Session, plan: _Plan, model: str, calls: list[Json]) -> None:
        """One model response, recorded in the recorder's three steps: the message with
        its thoughts, the same message again with its tokens, and again with its tool
        calls once they completed."""
        subject, description = self.rng.choice(_THOUGHTS)
        f = self.rng.choice(plan.files)
        ts = self.tick(s, 1_500, 20_000)
        msg: Json = {
            "id": self.uuid(), "timestamp": ts, "type": "gemini",
            "content": "" if calls else self.fmt(_ANSWERS, plan.files),
            "thoughts": [{"subject": subject, "description": description.format(f=f),
                          "timestamp": ts}],
            "tokens": None, "model": model,
        }  # fmt: skip
        s.push(msg)
        msg = {**msg, "tokens": self.tokens(s, model, len(calls))}
        s.push(msg)
        if calls:
            s.push({**msg, "toolCalls": calls})

    def turn(self, s: _Session, plan: _Plan, index: int) -> None:
        rng = self.rng
        prompt: Json = {
            "id": self.uuid(), "timestamp": self.tick(s, 20_000, 240_000), "type": "user",
            "content": [{"text": self.fmt(_ASKS, plan.files)}],
        }  # fmt: skip
        s.push(prompt)
        model = plan.model if rng.random() < 0.8 else _FLASH
        if index == plan.subagent_at:
            call = self.subagent(s, plan)
            self.model_turn(s, plan, model, [call])
        else:
            for _ in range(rng.choice((0, 1, 1, 2))):
                self.model_turn(s, plan, model, [self.tool_call(s, plan)])
        self.model_turn(s, plan, model, [])
        if index == plan.edit_prompt_at:
            # The prompt recorded again with the text the user finally sent.
            s.push(
                {**prompt, "content": [{"text": prompt["content"][0]["text"] + " (keep it small)"}]}
            )
        if rng.random() < 0.1:
            s.push({"id": self.uuid(), "timestamp": self.tick(s, 100, 900), "type": "info",
                    "content": rng.choice(_INFO)})  # fmt: skip
        if index == plan.rewind_at:
            # The user rewinds to this turn's prompt and types it again differently.
            kept = next(i for i, m in enumerate(s.messages) if m["id"] == prompt["id"])
            s.write({"$rewindTo": prompt["id"]})
            del s.messages[kept:]
            s.context = max(0, s.context - 4_000)
            self.turn(s, plan, -1)

    def subagent(self, s: _Session, plan: _Plan) -> Json:
        """A ``codebase_investigator`` call whose work is its own session file."""
        sub_id = self.uuid()
        path = self.tmp / _slug(plan.project) / "chats" / s.sid / f"{sub_id}.jsonl"
        sub = _Session(sub_id, self.out.log(path), s.now)
        objective = f"Find where {self.rng.choice(plan.files)} handles errors"
        start = iso_ms(sub.now)
        sub.write({"sessionId": sub_id, "projectHash": _hash(plan.project), "startTime": start,
                   "lastUpdated": start, "kind": "subagent", "directories": [plan.project]})  # fmt: skip
        sub.push({"id": self.uuid(), "timestamp": start, "type": "user",
                  "content": [{"text": f"Objective: {objective}"}]})  # fmt: skip
        for _ in range(self.rng.randint(1, 3)):
            self.model_turn(sub, plan, _FLASH, [self.tool_call(sub, plan)])
        self.model_turn(sub, plan, _FLASH, [])
        assert sub.log is not None
        sub.log.close()
        s.now = sub.now
        call_id = f"codebase_investigator-{s.now}"
        return {
            "id": call_id, "name": "codebase_investigator", "args": {"objective": objective},
            "result": [{"functionResponse": {"id": call_id, "name": "codebase_investigator",
                        "response": {"output": f"Subagent {sub_id} finished: see its report."}}}],
            "status": "success", "timestamp": iso_ms(s.now), "displayName": "Codebase Investigator",
        }  # fmt: skip

    def session(self, plan: _Plan) -> None:
        sid = self.uuid()
        stamp = iso_ms(plan.start_ms)[:16].replace(":", "-")
        name = f"session-{stamp}-{sid[:8]}"
        start = iso_ms(plan.start_ms)
        if plan.legacy:
            s = _Session(sid, None, plan.start_ms)
        else:
            chats = self.tmp / _slug(plan.project) / "chats"
            s = _Session(sid, self.out.log(chats / f"{name}.jsonl"), plan.start_ms)
            s.write({"sessionId": sid, "projectHash": _hash(plan.project), "startTime": start,
                     "lastUpdated": start, "kind": "main"})  # fmt: skip
        for index in range(plan.turns):
            self.turn(s, plan, index)
            if plan.history_sync and index == plan.turns // 2:
                s.write({"$set": {"messages": s.messages, "lastUpdated": iso_ms(s.now)}})
        summary = self.fmt(_ASKS, plan.files).capitalize()
        if plan.legacy:
            self.out.document(
                self.tmp / _hash(plan.project) / "chats" / f"{name}.json",
                {"sessionId": sid, "projectHash": _hash(plan.project), "startTime": start,
                 "lastUpdated": iso_ms(s.now), "messages": s.messages, "summary": summary},
            )  # fmt: skip
        else:
            s.write({"$set": {"summary": summary, "lastUpdated": iso_ms(s.now)}})
            assert s.log is not None
            s.log.close()

    def project_files(self, projects: list[str]) -> None:
        """``projects.json`` and every slug directory's ``.project_root``."""
        mapping = {p: _slug(p) for p in projects}
        self.out.small(
            self.home / ".gemini" / "projects.json",
            (json.dumps({"projects": mapping}, indent=2) + "\n").encode(),
        )
        for path, slug in mapping.items():
            self.out.small(self.tmp / slug / ".project_root", path.encode())


def generate_gemini_home(home: Path, *, seed: int = 7, sessions: int = 6) -> DemoStats:
    """Write a small, realistic synthetic Gemini CLI home under ``home``.

    Sessions start every nine hours from 2026-05-01T09:00Z across four projects, so the
    defaults span three UTC days. By session index: ``0`` is a legacy ``.json``
    document in a SHA-256 project directory (resolved through ``projects.json``);
    ``1`` rewinds its second turn (``$rewindTo`` its prompt, then a retyped prompt);
    ``2`` delegates its first turn to a subagent (its own ``chats/<sessionId>/`` log);
    ``3`` re-records a prompt with new text after the reply (a re-appended id whose
    earlier copy is no longer the latest message); ``4`` writes a ``$set`` history
    record (``messages``). Every model message is written three times (thoughts,
    tokens, tool calls), as Gemini CLI's recorder does.

    The output is byte-for-byte identical for identical arguments. Existing files with
    the same names are overwritten. Returns what was written.
    """
    if sessions < 0:
        raise ValueError("sessions must be >= 0")
    rng = random.Random(seed)
    out = _Out()
    gen = _Generator(home, rng, out)
    gen.project_files([p for p, _ in _PROJECTS])
    start = epoch_ms(datetime(2026, 5, 1, 9, tzinfo=UTC))
    for i in range(sessions):
        project, files = _PROJECTS[i % len(_PROJECTS)]
        gen.session(
            _Plan(
                project=project,
                files=files,
                start_ms=start + i * 9 * 3_600_000,
                turns=4 + i % 3,
                model=_PRO if i % 2 == 0 else _FLASH,
                legacy=i == 0,
                rewind_at=1 if i == 1 else None,
                subagent_at=0 if i == 2 else None,
                edit_prompt_at=1 if i == 3 else None,
                history_sync=i == 4,
            )
        )
    return out.stats()


def _corpus_plans(rng: random.Random, start_ms: int, days: int) -> Iterator[_Plan]:
    projects = [(f"/home/dev/{name}-{n}", files) for n in range(12) for name, files in
                ((Path(p).name, f) for p, f in _PROJECTS)]  # fmt: skip
    while True:
        project, files = rng.choice(projects)
        turns = max(1, min(400, int(rng.paretovariate(1.3) * 3)))
        roll = rng.random()
        yield _Plan(
            project=project,
            files=files,
            start_ms=start_ms + rng.randrange(days * 86_400_000),
            turns=turns,
            model=rng.choice((_PRO, _FLASH)),
            legacy=roll < 0.03,
            rewind_at=turns // 2 if 0.03 <= roll < 0.06 and turns > 2 else None,
            subagent_at=0 if 0.06 <= roll < 0.11 else None,
            edit_prompt_at=0 if 0.11 <= roll < 0.13 else None,
            history_sync=0.13 <= roll < 0.14 and turns < 40,
        )


def generate_gemini_corpus(
    home: Path,
    *,
    seed: int,
    target_lines: int,
    start: datetime = datetime(2026, 3, 1, tzinfo=UTC),
    days: int = 30,
) -> DemoStats:
    """Write a large synthetic Gemini CLI home with at least ``target_lines`` JSONL lines.

    Uses the same recorder as :func:`generate_gemini_home`, with session lengths from a
    long-tailed (Pareto) distribution capped at 400 turns, over 48 projects and
    ``days`` days from ``start``: about 3% legacy ``.json`` documents, 3% rewinds, 5%
    subagents, 2% re-recorded prompts. Sessions are written one at a time through
    bounded buffers, so memory does not grow with the corpus. Deterministic for
    identical arguments.
    """
    if target_lines < 0 or days < 1:
        raise ValueError("target_lines must be >= 0 and days >= 1")
    rng = random.Random(seed)
    out = _Out()
    gen = _Generator(home, rng, out)
    plans = _corpus_plans(rng, epoch_ms(start), days)
    seen: set[str] = set()
    while out.lines < target_lines:
        plan = next(plans)
        seen.add(plan.project)
        gen.session(plan)
    gen.project_files(sorted(seen))
    return out.stats()
