"""Copilot chats the user exported (``import --file``): the ``copilot-chat-json-export``
format (provider-formats-more §1.2, §1.3), one JSON document read whole.

Three shapes, all a top-level ``requests`` list, told apart by their version fields:

* VS Code's "Chat: Export Chat…" file (``IExportableChatData``): ``initialLocation``,
  ``requests``, ``responderUsername``, optional ``requesterUsername`` and avatar URIs; no
  ``version`` and no ``sessionId``: the session is named after its first request
  (``export:<requestId>``, request ids being unique), since every such file is saved as
  ``chat.json`` by default; the file's stem only when no request has an id.
* A persisted session copied out of ``chatSessions/`` (``version`` 1–3, an integer).
* AIWG's export: ``schemaVersion`` (which wins when present) or a text ``version``; its
  major must be 1. Session fields ``sessionId``, ``creationDate``, ``lastMessageDate``
  (ISO or epoch), ``state`` (``archived``/``deleted`` → the session is archived, as is
  ``isArchived``); ``requesterUsername``/``responderUsername``, ``syncStatus`` and
  ``workspace{id, repository}`` have no column and are not imported.

Every shape maps through :meth:`.copilot_vscode.CopilotChatAdapter.map_session`, the
mapping of VS Code's own session files: each request → its prompt (``<requestId>:request``)
and, when it has a response, its reply (``<requestId>:response``), plus its tool calls.
So a session imported from its file and from an export of it (same ``sessionId``) is one
session whose events count once. No tokens: VS Code's chats record none.

A document that is not in the format (no ``requests`` list, a request that is not an
object or has no ``message`` text, a field of impossible type) raises
:class:`NotThisFormat` (the file is refused, nothing written); an unknown major version
raises :class:`FormatDrift`.
"""

from __future__ import annotations

import re
from typing import Any, Final, Literal

from ..adapter import FormatDrift, InvalidRecord, NotThisFormat, SourceContext
from ..rows import RowSink
from ..sources import RelParts, SourceFile
from .copilot_vscode import CHAT_ADAPTER, KNOWN_VERSIONS

Shape = Literal["vscode-export", "vscode-session", "aiwg"]

#: Majors of AIWG's ``copilot-chat-json-export`` schema this adapter reads.
AIWG_MAJORS: Final = frozenset({1})
_MAJOR: Final = re.compile(r"^\s*v?(\d{1,9})(?:\.|$)")
_ARCHIVED_STATES: Final = frozenset({"archived", "deleted"})

# Sniffing: a JSON string (with its escapes), optionally a key's colon, or a bracket. A
# string the head cuts off runs to its end (no rescan from each later quote: linear).
_TOKEN: Final = re.compile(rb'"(?:[^"\\]|\\.)*(?:"(\s*:)?|\\?\Z)|[{}\[\]]', re.DOTALL)
_LIST: Final = re.compile(rb"\s*\[")
# Top-level keys only this format's shapes carry beside ``requests``.
_MARKS: Final = frozenset(
    {b'"version"', b'"schemaVersion"', b'"initialLocation"', b'"responderUsername"',
     b'"requesterUsername"', b'"sessionId"'}
)  # fmt: skip
# Keys of a request (depth 3: document, requests list, request object).
_REQUEST_KEYS: Final = frozenset({b'"requestId"', b'"message"'})


def never(rel: RelParts) -> bool:
    """Never: exports are named by the user (``import --file``), not discovered."""
    return False


def sniff(head: bytes) -> bool:
    """Whether a file starting with ``head`` is a Copilot chat export: a JSON object with a
    top-level ``requests`` list beside one of this format's keys (or whose first request
    has a ``requestId`` or ``message``). Keys are read at their depth, skipping strings,
    so a document merely quoting these names (another export's tool output) is not one."""
    body = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not body.startswith(b"{"):
        return False
    depth, top, requests_at, in_request_keys = 0, set[bytes](), -1, False
    for match in _TOKEN.finditer(body):
        token = match[0]
        if token in (b"{", b"["):
            depth += 1
        elif token in (b"}", b"]"):
            depth -= 1
            if depth <= 0:
                break  # the end of the first document
        elif match[1] is not None:  # a key
            key = token[: token.index(b'"', 1) + 1]
            if depth == 1:
                top.add(key)
                requests_at = match.end() if key == b'"requests"' else requests_at
            elif depth == 3 and requests_at >= 0 and key in _REQUEST_KEYS:
                in_request_keys = True
    if b'"requests"' not in top or not _LIST.match(body, requests_at):
        return False
    return bool(top & _MARKS) or in_request_keys


def _fail(what: str) -> NotThisFormat:
    return NotThisFormat(f"not a Copilot chat export: {what}")


def shape(document: dict[str, Any]) -> Shape:
    """Which shape ``document`` is, from its version fields. Raises :class:`FormatDrift`
    for an unknown major and :class:`NotThisFormat` for a version of impossible type."""
    schema, version = document.get("schemaVersion"), document.get("version")
    declared = schema if schema is not None else version
    if declared is None:
        return "vscode-export"
    if type(declared) is int and declared >= 1:
        major = declared
    elif type(declared) is str and (found := _MAJOR.match(declared)):
        major = int(found[1])
    else:
        raise _fail(f"version {declared!r} is neither a number ≥ 1 nor a version string")
    if schema is None and type(version) is int:
        # A persisted session's own version (1 is also AIWG's major).
        if major not in KNOWN_VERSIONS:
            raise FormatDrift(
                f"VS Code chat session version {major} is unknown "
                f"(known: {', '.join(map(str, sorted(KNOWN_VERSIONS)))})"
            )
        return "vscode-session"
    if major not in AIWG_MAJORS:
        raise FormatDrift(
            f"Copilot chat export version {declared!r} has an unknown major (known: 1)"
        )
    return "aiwg"


def _check_request(request: Any, index: int) -> None:
    """A request as every shape writes it: an object whose ``message`` is text or an
    object with ``text``, the optional fields of their types."""
    if type(request) is not dict:
        raise _fail(f"request {index} is not an object")
    message = request.get("message")
    if type(message) is dict:
        message = message.get("text")
    if type(message) is not str:
        raise _fail(f"request {index} has no message text")
    response = request.get("response")
    if response is not None and type(response) not in (str, list):
        raise _fail(f"the response of request {index} is neither text nor a list")
    if type(response) is list and any(type(part) is not dict for part in response):
        raise _fail(f"a response part of request {index} is not an object")
    for key in ("requestId", "modelId"):
        if request.get(key) is not None and type(request[key]) is not str:
            raise _fail(f"'{key}' of request {index} is not text")
    stamp = request.get("timestamp")
    if stamp is not None and type(stamp) not in (str, int, float):
        raise _fail(f"the timestamp of request {index} is neither ISO text nor epoch")


def _check_session(document: dict[str, Any]) -> None:
    """The session fields' types (each optional)."""
    for key, types in (
        ("sessionId", (str,)),
        ("creationDate", (str, int, float)),
        ("lastMessageDate", (str, int, float)),
        ("state", (str,)),
        ("isArchived", (bool,)),
        ("workspace", (dict,)),
        ("customTitle", (str,)),
    ):
        if document.get(key) is not None and type(document[key]) not in types:
            raise _fail(f"'{key}' is of type {type(document[key]).__name__}")


def _archived(document: dict[str, Any]) -> bool | None:
    """AIWG's archive state: ``isArchived``, else whether ``state`` is archived/deleted."""
    flag = document.get("isArchived")
    if type(flag) is bool:
        return flag
    state = document.get("state")
    return state in _ARCHIVED_STATES if type(state) is str else None


class CopilotExportAdapter:
    """Maps one exported Copilot chat document (see the module docstring)."""

    def locate(self, source: SourceFile) -> SourceContext:
        """The file's stem, replaced by the session named inside (module docstring)."""
        return SourceContext(source, source.path.stem)

    def map_document(self, document: Any, ctx: SourceContext, sink: RowSink) -> int:
        """The session's fields and the events of every request; returns the number of
        requests. Raises :class:`NotThisFormat` and :class:`FormatDrift` (module
        docstring); nothing is emitted before the whole document is checked."""
        if type(document) is not dict or type(document.get("requests")) is not list:
            raise _fail("no top-level 'requests' list")
        shape(document)
        _check_session(document)
        for index, request in enumerate(document["requests"]):
            _check_request(request, index)
        if type(document.get("sessionId")) is not str:
            first = next((r["requestId"] for r in document["requests"]
                          if type(r.get("requestId")) is str and r["requestId"]), None)  # fmt: skip
            if first is not None:
                ctx.session_id = f"export:{first}"
        try:
            count = CHAT_ADAPTER.map_session(document, ctx, sink, None)
        except InvalidRecord as exc:  # checked above: a shape this module does not know
            raise _fail(str(exc)) from None
        # AIWG's fields, read from any shape (VS Code's own do not carry them).
        sink.session(ctx.session_id, archived=_archived(document))
        return count


#: The adapter registered for the ``copilot-chat-json-export`` format.
EXPORT_ADAPTER: Final = CopilotExportAdapter()
