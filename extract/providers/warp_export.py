"""Warp's Markdown conversation export, ``warp-markdown-export`` (provider-formats-more §7):
a file the user names (``import --file``), read whole and re-read when it changes.

Two shapes are accepted:

* **Warp's own** (``/export-to-file``, ``/export-to-clipboard``): exchanges joined by
  blank lines, each ``USER:`` on a line of its own followed by the query, then
  ``AGENT:`` followed by the agent's output. An exchange without user input has no
  ``AGENT:`` label, so its output continues the block before it; output before the first
  label is the agent's. No title, ids, times, model or tokens.
* **AIWG's dialect**: Markdown headings ``##``–``######`` whose text is ``User``,
  ``You``, ``Human``, ``Prompt`` or ``Query`` (the user) or ``Warp``, ``Assistant``,
  ``Agent``, ``Response`` or ``Answer`` (the agent), optionally numbered or with a
  trailing colon; an optional ``# Title`` line before the first role heading; optional
  comments ``<!-- warp-conversation-export: X.Y.Z -->`` (the dialect's schema version,
  major 1) and ``<!-- warp-lifecycle: … -->`` (not imported). Other text before the first
  role heading is kept as a system line.

A file with at least one ``USER:``/``AGENT:`` label line is read as Warp's shape, and
headings in it are content (agent output is Markdown); otherwise AIWG's role headings
split it. Labels and headings inside fenced code blocks are content. A file with
neither is refused (``NotThisFormat``); an export marker of another major version is
drift.

Each block is one event: the user's text a prompt, the agent's a response (tool
results, todos and notes Warp renders into the output stay inside its text; the export
leaves reasoning out). Native ids are the block's position. Session id: neither shape
carries a conversation id (AIWG's marker is a schema version), so the session is
``warp-md:`` + the first 32 hex digits of the SHA-256 of the file's bytes — the same
export imported twice, from any path, is one session; a re-export that grew is a new one.
"""

from __future__ import annotations

import hashlib
import re
from typing import Final, Literal

from ..adapter import FormatDrift, NotThisFormat, SourceContext
from ..rows import RowSink
from ..schema import BlockType
from ..sources import RelParts, SourceFile

FORMAT: Final = "warp-markdown-export"
KNOWN_MAJORS: Final = frozenset({1})
SESSION_PREFIX: Final = "warp-md:"

Role = Literal["user", "assistant"]
Shape = Literal["warp", "aiwg"]

_LABEL: Final = re.compile(r"^(USER|AGENT):[ \t]*\r?$", re.MULTILINE)
_HEADING: Final = re.compile(
    r"^#{2,6}[ \t]+(?:\d+[.)]?[ \t]+)?"
    r"(user|you|human|prompt|query|warp|assistant|agent|response|answer)[ \t]*:?[ \t]*#*[ \t]*\r?$",
    re.MULTILINE | re.IGNORECASE,
)
_USER_WORDS: Final = frozenset({"user", "you", "human", "prompt", "query"})
_MARKER: Final = re.compile(r"^<!--[ \t]*warp-conversation-export:[ \t]*(\S+)[ \t]*-->[ \t]*$")
_LIFECYCLE: Final = re.compile(r"^<!--[ \t]*warp-lifecycle:[^>]*-->[ \t]*$")
_VERSION: Final = re.compile(r"^(\d+)(\.\d+){0,2}$")
_TITLE: Final = re.compile(r"^#[ \t]+(.+?)[ \t#]*$")
_FENCE: Final = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")


def owns(rel: RelParts) -> bool:
    """Never: exports are named by the user, not discovered."""
    return False


def sniff(head: bytes) -> bool:
    """Whether a file starting with ``head`` is a Warp export: a ``USER:``/``AGENT:``
    label line, or an AIWG role heading (JSON never has either as a line of its own)."""
    text = head.decode("utf-8", "replace")
    return _LABEL.search(text) is not None or _HEADING.search(text) is not None


def session_of(data: bytes) -> str:
    """The session id of an export whose bytes are ``data``."""
    return SESSION_PREFIX + hashlib.sha256(data).hexdigest()[:32]


class _Block:
    """One role's text, from the byte ``offset`` of its label or heading."""

    __slots__ = ("lines", "offset", "role")

    def __init__(self, role: Role | None, offset: int) -> None:
        self.role = role
        self.offset = offset
        self.lines: list[str] = []

    def text(self) -> str:
        return "\n".join(self.lines).strip("\n")


def _split(text: str, shape: Shape) -> tuple[_Block, list[_Block], str | None]:
    """The preamble, the role blocks and the AIWG title of a document of ``shape``; a
    marker of an unknown major version is drift."""
    preamble = _Block(None, 0)
    current, blocks, title = preamble, list[_Block](), None
    fence: str | None = None
    offset = 0
    for raw in text.split("\n"):
        line = raw.rstrip("\r")
        start, offset = offset, offset + len(raw.encode()) + 1
        if fence is not None:  # inside a fenced code block: content until it closes
            if line.strip().startswith(fence):
                fence = None
            current.lines.append(line)
            continue
        if (opened := _FENCE.match(line)) is not None:
            fence = opened[1][0] * 3
            current.lines.append(line)
            continue
        role = _role(line, shape)
        if role is not None:
            current = _Block(role, start)
            blocks.append(current)
            continue
        if current is preamble and shape == "aiwg":
            if (marker := _MARKER.match(line)) is not None:
                _check_version(marker[1])
                continue
            if _LIFECYCLE.match(line):
                continue
            if title is None and (found := _TITLE.match(line)) is not None:
                title = found[1]
                continue
        current.lines.append(line)
    return preamble, blocks, title


def _role(line: str, shape: Shape) -> Role | None:
    if shape == "warp":
        if line.rstrip() == "USER:":
            return "user"
        return "assistant" if line.rstrip() == "AGENT:" else None
    found = _HEADING.match(line)
    if found is None:
        return None
    return "user" if found[1].lower() in _USER_WORDS else "assistant"


def _check_version(version: str) -> None:
    match = _VERSION.match(version)
    if match is None:
        raise NotThisFormat(f"export marker version {version[:40]!r} is not X.Y.Z")
    if int(match[1]) not in KNOWN_MAJORS:
        raise FormatDrift(
            f"Warp export marker version {version} has major {match[1]}; this adapter "
            f"knows {sorted(KNOWN_MAJORS)}"
        )


class WarpMarkdownAdapter:
    """Maps one Markdown export (see the module docstring)."""

    def locate(self, source: SourceFile) -> SourceContext:
        """A placeholder: the session id comes from the content (``map_text``)."""
        return SourceContext(source, source.path.stem)

    def map_text(self, text: str, ctx: SourceContext, sink: RowSink) -> int:
        """One event per role block; returns the blocks read. Raises
        :class:`NotThisFormat` for a file with no label or role heading and
        :class:`FormatDrift` for an export marker of an unknown major version."""
        body = text.removeprefix("\ufeff")
        if _LABEL.search(body) is not None:
            shape: Shape = "warp"
        elif _HEADING.search(body) is not None:
            shape = "aiwg"
        else:
            raise NotThisFormat("no USER:/AGENT: label line and no role heading")
        preamble, blocks, title = _split(body, shape)
        if not blocks:  # every label or heading was inside a code block
            raise NotThisFormat("no USER:/AGENT: label line and no role heading")
        sid = session_of(text.encode())
        ctx.session_id = sid
        sink.session(sid, title=title, title_rank=1)
        lead = preamble.text()
        if lead:  # Warp: output of an exchange without user input; AIWG: stray prose
            block_type: BlockType = "text" if shape == "warp" else "system"
            role = "assistant" if shape == "warp" else "system"
            sink.event(sid, "0", 0, None, block_type, role, lead, 0)
        for number, block in enumerate(blocks, 1):
            body_text = block.text()
            if body_text and block.role is not None:
                sink.event(sid, str(number), 0, None, "text", block.role, body_text,
                           block.offset)  # fmt: skip
        return len(blocks)
