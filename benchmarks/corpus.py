"""A seeded, mixed-provider synthetic home for the benchmark.

The home is composed from the project's own corpus generators, each writing where the
real agent writes: ``generate_claude_corpus`` (``fixtures.synth``),
``generate_codex_corpus``, ``generate_gemini_corpus``, ``generate_cursor_corpus``,
``generate_copilot_corpus``, ``generate_opencode_corpus`` and
``generate_factory_corpus``. The event budget (records: JSONL lines, the unit every
generator counts, and OpenCode's database rows) is split among the chosen providers by
:data:`SHARES` — Claude Code 47 %, Codex 21 %, Gemini CLI 10 %, Cursor 7 %, Copilot CLI
6 %, OpenCode 5 %, Factory Droid 4 %, renormalized over a subset — and every provider's
sessions fall within the same 60 days from 2026-03-01. A provider's corpus is redrawn
with a derived seed (up to :data:`ATTEMPTS` times) when one long session overshoots its
share by more than :data:`OVERSHOOT`, so small runs keep the mix too.

What the generators already provide, and this module therefore leaves alone: long-tailed
(Pareto) session lengths, so many small files and a few large ones; streamed duplicate
chunks (Claude writes each content block of a reply on its own line repeating the usage,
Codex writes every message twice, Gemini re-records a model message when its tokens and
tool results arrive); tool calls with outputs; subagents, resumes, forks, compactions;
cumulative session totals (Copilot's shutdowns, Droid's settings) and multi-step
replies (OpenCode's step-finish parts).
What this module adds: from :data:`GIANT_MIN_EVENTS` events on, a few 100 MB+ Claude
transcripts (one session of :data:`GIANT_TURNS` turns whose tool outputs average
:data:`GIANT_TOOL_OUTPUT_BYTES`), taken out of Claude's share; a profile of what was
written (file-size distribution, median line size per provider, a digest); and a 1 %
append of *new* records to existing append-only transcripts (OpenCode's database is
not appended to).

Deterministic: the same plan writes byte-identical files (the digest proves it), on any
machine. :data:`GENERATOR_VERSION` changes whenever the composition does.
"""

from __future__ import annotations

import hashlib
import os
import random
import re
import shutil
from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final, Protocol

from fixtures.synth import (
    HomeStats,
    generate_claude_corpus,
    generate_claude_home,
    generate_codex_corpus,
    generate_copilot_corpus,
    generate_cursor_corpus,
    generate_factory_corpus,
    generate_gemini_corpus,
    generate_opencode_corpus,
)

from .measure import percentile

__all__ = [
    "GENERATOR_VERSION",
    "PROVIDERS",
    "SHARES",
    "AppendStats",
    "CorpusPlan",
    "CorpusProfile",
    "append_new_records",
    "generate_corpus",
    "parse_providers",
    "plan_corpus",
    "profile_corpus",
]

#: Version of the composition below; part of the benchmark artifact.
GENERATOR_VERSION: Final = "3.0"
PROVIDERS: Final = ("claude", "codex", "gemini", "cursor", "copilot", "opencode", "factory")
SHARES: Final = {"claude": 0.47, "codex": 0.21, "gemini": 0.10, "cursor": 0.07,
                 "copilot": 0.06, "opencode": 0.05, "factory": 0.04}  # fmt: skip
PROVIDER_IDS: Final = {"claude": "claude-code", "codex": "codex", "gemini": "gemini-cli",
                       "cursor": "cursor", "copilot": "copilot", "opencode": "opencode",
                       "factory": "factory"}  # fmt: skip
START: Final = datetime(2026, 3, 1, tzinfo=UTC)
DAYS: Final = 60
GIANT_MIN_EVENTS: Final = 500_000
GIANT_TURNS: Final = 3_000  # about 120 MB and 28k lines per giant transcript
GIANT_LINES: Final = 28_000
GIANT_TOOL_OUTPUT_BYTES: Final = 32 << 10
GIANT_BYTES: Final = 100 << 20  # a "100 MB+" file, for the profile's count
ATTEMPTS: Final = 8  # draws per provider to stay near its target (see _generate_provider)
OVERSHOOT: Final = 0.10
OVERSHOOT_LINES: Final = 100
_BLOCK: Final = 8 << 20

Generator = Callable[..., HomeStats]
_GENERATORS: Final[dict[str, Generator]] = {
    "claude": generate_claude_corpus,
    "codex": generate_codex_corpus,
    "gemini": generate_gemini_corpus,
    "cursor": generate_cursor_corpus,
    "copilot": generate_copilot_corpus,
    "opencode": generate_opencode_corpus,
    "factory": generate_factory_corpus,
}
# How each provider's sessions vary beyond the generators' defaults: a share of short
# sessions (1-3 turns) for many small files per project, more Codex forks, more Gemini
# legacy documents and rewinds, a few OpenCode sessions in its legacy storage/ tree.
SHAPES: Final[dict[str, dict[str, float]]] = {
    "claude": {"short_share": 0.4},
    "codex": {"short_share": 0.4, "fork_share": 0.10},
    "gemini": {"short_share": 0.5, "legacy_share": 0.10, "rewind_share": 0.15},
    "cursor": {"short_share": 0.4},
    "copilot": {"short_share": 0.4},
    "opencode": {"short_share": 0.4, "legacy_share": 0.05},
    "factory": {"short_share": 0.4},
}
_ROOTS: Final = {"claude": ".claude", "codex": ".codex", "gemini": ".gemini", "cursor": ".cursor",
                 "copilot": ".copilot", "opencode": ".local", "factory": ".factory"}  # fmt: skip
_ALIASES: Final = {"claude-code": "claude", "gemini-cli": "gemini"}


def derive_seed(seed: int, *labels: str) -> int:
    """A 63-bit seed derived from ``seed`` and ``labels`` (stable across Python runs,
    unlike ``hash``)."""
    digest = hashlib.sha256(":".join((str(seed), *labels)).encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def parse_providers(text: str) -> tuple[str, ...]:
    """``claude,codex`` (ids or aliases) as short names in :data:`PROVIDERS` order;
    raises ValueError for an unknown or empty list."""
    names = {_ALIASES.get(p.strip(), p.strip()) for p in text.split(",") if p.strip()}
    unknown = names - set(PROVIDERS)
    if unknown or not names:
        raise ValueError(
            f"unknown provider(s): {', '.join(sorted(unknown)) or '(none given)'}; "
            f"choose from {', '.join(PROVIDERS)}"
        )
    return tuple(p for p in PROVIDERS if p in names)


# --------------------------------------------------------------------------- plan


@dataclass(frozen=True)
class CorpusPlan:
    """What :func:`generate_corpus` writes: per provider a target line count and seed,
    and how many giant Claude transcripts (counted in Claude's target)."""

    seed: int
    events: int
    providers: tuple[str, ...]
    targets: dict[str, int]
    seeds: dict[str, int]
    giants: int

    def shares(self) -> dict[str, float]:
        """The planned share of each provider."""
        return {p: self.targets[p] / self.events if self.events else 0.0 for p in self.providers}


def _giant_count(events: int, claude_target: int) -> int:
    if events < GIANT_MIN_EVENTS or claude_target <= 0:
        return 0
    # Keep the giants within about a fifth of Claude's share.
    return max(0, min(2 + events // 1_000_000, claude_target // (4 * GIANT_LINES)))


def plan_corpus(events: int, seed: int, providers: Sequence[str] = PROVIDERS) -> CorpusPlan:
    """Split ``events`` among ``providers`` by :data:`SHARES` (renormalized); the
    largest share takes the rounding remainder."""
    if events < 0:
        raise ValueError("events must be >= 0")
    chosen = parse_providers(",".join(providers))
    weight = sum(SHARES[p] for p in chosen)
    targets = {p: int(events * SHARES[p] / weight) for p in chosen}
    largest = max(chosen, key=lambda p: SHARES[p])
    targets[largest] += events - sum(targets.values())
    return CorpusPlan(
        seed=seed,
        events=events,
        providers=chosen,
        targets=targets,
        seeds={p: derive_seed(seed, "corpus", p) for p in chosen},
        giants=_giant_count(events, targets.get("claude", 0)),
    )


# --------------------------------------------------------------------------- generate


def _generate_giants(home: Path, plan: CorpusPlan) -> HomeStats:
    """The giant Claude transcripts: each one session (plus its subagent file)."""
    rng = random.Random(derive_seed(plan.seed, "giants"))
    files = lines = size = sessions = 0
    for index in range(plan.giants):
        stats = generate_claude_home(
            home,
            seed=derive_seed(plan.seed, "giant", str(index)),
            sessions=1,
            turns_per_session=GIANT_TURNS,
            start=START + timedelta(minutes=rng.randrange((DAYS - 3) * 24 * 60)),
            tool_output_bytes=GIANT_TOOL_OUTPUT_BYTES,
        )
        files, lines = files + stats.files, lines + stats.lines
        size, sessions = size + stats.bytes, sessions + stats.sessions
    return HomeStats(files=files, lines=lines, bytes=size, sessions=sessions)


def _plus(a: HomeStats, b: HomeStats) -> HomeStats:
    return HomeStats(a.files + b.files, a.lines + b.lines, a.bytes + b.bytes,
                     a.sessions + b.sessions)  # fmt: skip


def _merge_tree(src: Path, dst: Path) -> None:
    """Move everything under ``src`` into ``dst`` (renames; directories present in both
    are merged)."""
    dst.mkdir(parents=True, exist_ok=True)
    for entry in sorted(src.iterdir()):
        target = dst / entry.name
        if not target.exists():
            entry.rename(target)
        elif entry.is_dir() and target.is_dir():
            _merge_tree(entry, target)
        else:
            raise FileExistsError(f"{target} exists already")
    src.rmdir()


@dataclass(frozen=True)
class _Draw:
    out: Path
    attempt: int
    stats: HomeStats


def _generate_provider(trials: Path, provider: str, target: int, seed: int) -> _Draw:
    """Generate ``provider``'s corpus under ``trials``: the first draw whose lines stay
    within :data:`OVERSHOOT` of ``target``, else the closest of :data:`ATTEMPTS` draws
    (a single long session can overshoot a small target many times over)."""
    best: _Draw | None = None
    for attempt in range(ATTEMPTS):
        out = trials / f"{provider}-{attempt}"
        stats = _GENERATORS[provider](
            out, seed=derive_seed(seed, str(attempt)) if attempt else seed,
            target_lines=target, start=START, days=DAYS, **SHAPES[provider],
        )  # fmt: skip
        if best is None or stats.lines < best.stats.lines:
            if best is not None:
                shutil.rmtree(best.out)
            best = _Draw(out, attempt, stats)
        else:
            shutil.rmtree(out)
        if stats.lines - target <= max(OVERSHOOT * target, OVERSHOOT_LINES):
            break
    assert best is not None
    return best


def generate_corpus(home: Path, plan: CorpusPlan) -> dict[str, HomeStats]:
    """Write ``plan``'s home under ``home`` (which should not exist or be empty);
    returns what was written per provider. Each provider is generated in a scratch
    directory next to ``home`` and moved in (see :func:`_generate_provider`)."""
    trials = home.with_name(f".{home.name}.generating")
    shutil.rmtree(trials, ignore_errors=True)
    written: dict[str, HomeStats] = {}
    try:
        for provider in plan.providers:
            target = plan.targets[provider]
            extra = HomeStats(0, 0, 0, 0)
            if provider == "claude" and plan.giants:
                extra = _generate_giants(trials / "giants", plan)
                _merge_tree(trials / "giants", home)
                target = max(0, target - extra.lines)
            draw = _generate_provider(trials, provider, target, plan.seeds[provider])
            _merge_tree(draw.out, home)
            written[provider] = _plus(draw.stats, extra)
    finally:
        shutil.rmtree(trials, ignore_errors=True)
    return written


# --------------------------------------------------------------------------- profile


@dataclass(frozen=True)
class ProviderProfile:
    """Files, bytes and JSONL lines of one provider's part of the home."""

    files: int
    bytes: int
    lines: int
    median_line_bytes: float
    mean_line_bytes: float


@dataclass(frozen=True)
class CorpusProfile:
    """What a home holds: sizes, line lengths and a digest of every file's path and
    bytes (identical digests mean identical homes)."""

    files: int
    bytes: int
    lines: int
    median_line_bytes: float
    mean_line_bytes: float
    file_bytes: dict[str, float]
    files_over_100mib: int
    largest: list[dict[str, Any]]
    providers: dict[str, ProviderProfile]
    digest: str

    def as_json(self) -> dict[str, Any]:
        """A JSON-able dict."""
        doc = dict(self.__dict__)
        doc["providers"] = {p: dict(v.__dict__) for p, v in self.providers.items()}
        return doc


def _files(home: Path) -> Iterator[Path]:
    """Every regular file under ``home``, in a stable order."""
    for root, dirs, names in os.walk(home):
        dirs.sort()
        for name in sorted(names):
            yield Path(root, name)


class _Hasher(Protocol):
    def update(self, data: bytes, /) -> None: ...


def _scan(path: Path, hasher: _Hasher, lengths: array[int] | None) -> None:
    """Feed ``path``'s bytes to ``hasher`` and, for JSONL, the length of each line
    (without its newline) to ``lengths``."""
    carry = 0
    with path.open("rb") as fh:
        while block := fh.read(_BLOCK):
            hasher.update(block)
            if lengths is None:
                continue
            pieces = block.split(b"\n")
            if len(pieces) == 1:
                carry += len(block)
                continue
            lengths.append(carry + len(pieces[0]))
            lengths.extend(map(len, pieces[1:-1]))
            carry = len(pieces[-1])
    if lengths is not None and carry:
        lengths.append(carry)


def _median(values: array[int]) -> float:
    return percentile(sorted(values), 50) if values else 0.0


def _provider_of(rel: Path) -> str:
    root = rel.parts[0] if rel.parts else ""
    for name, prefix in _ROOTS.items():
        if root == prefix:
            return name
    return "cursor" if root == ".config" else "other"


def profile_corpus(home: Path) -> CorpusProfile:
    """Scan ``home`` once: file-size distribution, JSONL line lengths per provider and
    a SHA-256 over every file's relative path and content."""
    digest = hashlib.sha256()
    sizes: list[tuple[int, str, str]] = []
    per: dict[str, tuple[list[int], array[int]]] = {}
    for path in _files(home):
        rel = path.relative_to(home)
        provider = _provider_of(rel)
        counts, lengths = per.setdefault(provider, ([0, 0], array("q")))
        size = path.stat().st_size
        counts[0] += 1
        counts[1] += size
        sizes.append((size, provider, rel.as_posix()))
        digest.update(rel.as_posix().encode() + b"\0")
        _scan(path, digest, lengths if path.suffix == ".jsonl" else None)
    everything: array[int] = array("q")
    providers: dict[str, ProviderProfile] = {}
    for provider, (counts, lengths) in sorted(per.items()):
        everything.extend(lengths)
        providers[provider] = ProviderProfile(
            files=counts[0], bytes=counts[1], lines=len(lengths),
            median_line_bytes=_median(lengths),
            mean_line_bytes=sum(lengths) / len(lengths) if lengths else 0.0,
        )  # fmt: skip
    byte_sizes = [float(s) for s, _, _ in sizes] or [0.0]
    sizes.sort(reverse=True)
    return CorpusProfile(
        files=len(sizes),
        bytes=sum(s for s, _, _ in sizes),
        lines=len(everything),
        median_line_bytes=_median(everything),
        mean_line_bytes=sum(everything) / len(everything) if everything else 0.0,
        file_bytes={f"p{q}": percentile(byte_sizes, q) for q in (50, 90, 99, 100)},
        files_over_100mib=sum(1 for s, _, _ in sizes if s >= GIANT_BYTES),
        largest=[{"provider": p, "path": r, "bytes": s} for s, p, r in sizes[:5]],
        providers=providers,
        digest=digest.hexdigest(),
    )


# --------------------------------------------------------------------------- append


@dataclass(frozen=True)
class _AppendRule:
    """How a donor transcript's lines continue a host transcript of the same provider."""

    hosts: str  # glob, relative to the home, of the provider's append-only main transcripts
    header: re.Pattern[bytes] | None  # lines only a new session writes: dropped
    refuse: re.Pattern[bytes] | None  # a donor with this is not a plain continuation
    session_field: bool  # the lines name their session (``"sessionId"``): rewrite it


def _lines(pattern: bytes) -> re.Pattern[bytes]:
    """Whole lines that start with ``pattern``."""
    return re.compile(rb"^" + pattern + rb"[^\n]*\n", re.MULTILINE)


_RULES: Final = {
    "claude": _AppendRule(".claude/projects/*/*.jsonl",
                          _lines(rb'\{"type":"(?:mode|permission-mode|ai-title)"'), None, True),
    "codex": _AppendRule(".codex/sessions/*/*/*/rollout-*.jsonl",
                         _lines(rb'\{"timestamp":"[^"]*","type":"session_meta"'),
                         re.compile(rb'"forked_from_id"'), False),
    "gemini": _AppendRule(".gemini/tmp/*/chats/session-*.jsonl",
                          _lines(rb'\{"sessionId":"[^"]*","projectHash"'),
                          re.compile(rb'"\$set":\{"messages"'), False),
    "cursor": _AppendRule(".cursor/projects/*/agent-transcripts/*/*.jsonl", None, None, False),
    "copilot": _AppendRule(".copilot/session-state/*/events.jsonl",
                           _lines(rb'\{"type":"session\.start"'), None, False),
    "factory": _AppendRule(".factory/sessions/*/*.jsonl", _lines(rb'\{"type":"session_start"'),
                           None, False),
}  # fmt: skip
_UUID: Final = re.compile(rb'"uuid":"([0-9a-f-]{36})"')
_SESSION_ID: Final = re.compile(rb'"sessionId":"([^"]+)"')


@dataclass(frozen=True)
class AppendStats:
    """What :func:`append_new_records` appended: lines, bytes and host files."""

    lines: int
    bytes: int
    files: int
    providers: dict[str, dict[str, int]] = field(default_factory=dict)


def _hosts(home: Path, rule: _AppendRule, rng: random.Random) -> list[Path]:
    """The provider's main transcripts: the largest first, the rest shuffled."""
    found = sorted(p for p in home.glob(rule.hosts) if p.parent.name != "subagents")
    if rule is _RULES["cursor"]:
        found = [p for p in found if p.parent.name == p.stem]
    if not found:
        return []
    largest = max(found, key=lambda p: (p.stat().st_size, p.as_posix()))
    rest = [p for p in found if p != largest]
    rng.shuffle(rest)
    return [largest, *rest]


def _continuation(donor: bytes, host: Path, rule: _AppendRule, seen: set[bytes]) -> bytes | None:
    """The donor's lines as a continuation of ``host``, or None when the donor must be
    skipped (a fork, a history rewrite, or lines another donor already carried)."""
    if rule.refuse is not None and rule.refuse.search(donor):
        return None
    body = rule.header.sub(b"", donor) if rule.header is not None else donor
    if rule.session_field:
        uuids = set(_UUID.findall(body))
        if uuids & seen:
            return None  # a resumed session re-copies another donor's lines
        seen |= uuids
        body = _SESSION_ID.sub(b'"sessionId":"' + host.stem.encode() + b'"', body)
    return body if body.endswith(b"\n") else None


def append_new_records(
    home: Path, scratch: Path, plan: CorpusPlan, lines: dict[str, int], fraction: float = 0.01
) -> AppendStats:
    """Append about ``fraction`` of each provider's ``lines`` as new records to existing
    append-only transcripts in ``home``, the way a session that goes on grows its file.

    The new lines come from a fresh corpus (another seed, dated just after the home's
    window) written under ``scratch``: each donor session's lines, less those only a
    new session writes (Claude's ``mode``, ``permission-mode`` and ``ai-title`` lines,
    Codex's ``session_meta``, Gemini's metadata line, Copilot's ``session.start``, Droid's
    ``session_start``), are appended to one host transcript — the provider's largest
    first, then others in a seeded order — with Claude's ``sessionId`` set to the host's.
    Donors that fork, rewrite history or re-copy another donor are skipped, so every
    appended line is a record the catalog has not seen. Deterministic for a plan."""
    shutil.rmtree(scratch, ignore_errors=True)
    providers: dict[str, dict[str, int]] = {}
    for provider in plan.providers:
        rule = _RULES.get(provider)
        if rule is None:  # a database (OpenCode): nothing is appended to a file
            continue
        want = max(1, round(lines.get(provider, 0) * fraction))
        hosts = _hosts(home, rule, random.Random(derive_seed(plan.seed, "hosts", provider)))
        donor_home = scratch / provider
        _GENERATORS[provider](
            donor_home, seed=derive_seed(plan.seed, "append", provider), target_lines=want,
            start=START + timedelta(days=DAYS), days=1,
        )  # fmt: skip
        added = size = used = 0
        seen: set[bytes] = set()
        for donor in sorted(donor_home.glob(rule.hosts)):
            if added >= want or used >= len(hosts):
                break
            body = _continuation(donor.read_bytes(), hosts[used], rule, seen)
            if not body:
                continue
            with hosts[used].open("ab") as fh:
                fh.write(body)
            added, size, used = added + body.count(b"\n"), size + len(body), used + 1
        providers[provider] = {"lines": added, "bytes": size, "files": used, "target": want}
    shutil.rmtree(scratch, ignore_errors=True)
    return AppendStats(
        lines=sum(v["lines"] for v in providers.values()),
        bytes=sum(v["bytes"] for v in providers.values()),
        files=sum(v["files"] for v in providers.values()),
        providers=providers,
    )
