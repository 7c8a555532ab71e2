"""VS Code Copilot Chat's persisted sessions: ``chatSessions/<id>.json`` (provider-formats-more
§1.2), a ``document`` source re-read whole when it changes.

Where: ``<user dir>/workspaceStorage/<hash>/chatSessions/<id>.json`` (the folder of the
window is in ``<hash>/workspace.json``) and ``<user dir>/globalStorage/
emptyWindowChatSessions/<id>.json`` (windows without a folder). The newer ``.jsonl``
mutation log is not read: it is replaced by a fresh file after 512 entries, and the
reference gives its operations but not enough of its state's shape across builds to
replay it safely.

Document: ``version`` (1–3 known; absent is accepted, as in exports), ``sessionId``,
``creationDate``/``lastMessageDate`` (epoch ms), ``customTitle`` and ``requests[]``. Each
request becomes events under its ``requestId``:

* ``message.text`` (or a plain string ``message``) → the user's prompt;
* ``response[]`` → runs of Markdown chunks (parts without ``kind``, and
  ``markdownContent``) joined into one assistant text per run, ``inlineReference`` parts
  rendered as the file's name inside the run; ``thinking`` parts → reasoning [?]; a part
  of another kind with a text ``value`` (AIWG's flattened parts) → an assistant text of
  its own; a plain string ``response`` (exports) → one assistant text;
* tool calls: ``result.metadata.toolCallRounds[].toolCalls[]`` (name, id, arguments) →
  ``tool_use``, with ``result.metadata.toolCallResults[<id>]`` → ``tool_result``; when a
  request has no rounds, its ``toolInvocationSerialized`` parts → ``tool_use`` (no input);
* ``result.errorDetails.message`` → a system event with ``is_error``.

No token counts are persisted (provider-formats-more §1.2): this format emits no usage.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final
from urllib.parse import unquote, urlsplit

import orjson

from ..adapter import FormatDrift, InvalidRecord, SourceContext
from ..rows import RowSink
from ..sources import RelParts, SourceFile, rel_parts
from .copilot_fields import tool_input
from .cursor_fields import instant

KNOWN_VERSIONS: Final = frozenset({1, 2, 3})
_MARKDOWN_KINDS: Final = frozenset({None, "markdownContent", "markdownVuln"})
# VS Code's parts that are progress or UI state, never a reply, whatever they hold.
_SILENT_KINDS: Final = frozenset(
    {"mcpServersStarting", "progressTaskSerialized", "progressMessage", "undoStop",
     "prepareToolInvocation", "codeblockUri", "textEditGroup", "notebookEditGroup"}
)  # fmt: skip
# Positions: each request's events sit at source_offset = index × _SPAN, so their
# ``seq`` orders requests first, then blocks (fewer than _SPAN × 1000 per request).
_SPAN: Final = 100
_LAST_BLOCK: Final = _SPAN * 1000 - 1  # a request's error, after its other events
_TEXT_NODE: Final = 2  # a prompt-tsx text leaf in a serialized tool result


def owns_session(rel: RelParts) -> bool:
    """``<hash>/chatSessions/<id>.json`` under ``workspaceStorage``, or ``<id>.json``
    directly under ``emptyWindowChatSessions``."""
    if len(rel) == 3:
        return rel[1] == "chatSessions" and rel[2].endswith(".json") and len(rel[2]) > 5
    return len(rel) == 1 and rel[0].endswith(".json") and len(rel[0]) > 5


def _text(value: Any) -> str | None:
    return value if type(value) is str else None


def _markdown(value: Any) -> str | None:
    """A Markdown string, or the ``value`` of an ``IMarkdownString``."""
    if type(value) is dict:
        value = value.get("value")
    return value if type(value) is str else None


def _folder(path: Path) -> str | None:
    """The folder a workspace hash names (``workspace.json``): a ``file:`` URI as a
    path, another URI (remote, workspace file) as written."""
    try:
        doc = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    uri = doc.get("folder") or doc.get("workspace") if type(doc) is dict else None
    if type(uri) is not str or not uri:
        return None
    parts = urlsplit(uri)
    if parts.scheme == "file":
        return unquote(parts.path)
    return uri


def _leaf_text(node: Any, out: list[str], depth: int = 0) -> None:
    """Collect the text leaves of a serialized prompt-tsx tree (tool results)."""
    if depth > 60 or type(node) is not dict:
        return
    if node.get("type") == _TEXT_NODE and type(node.get("text")) is str:
        if node.get("lineBreakBefore") and out:
            out.append("\n")
        out.append(node["text"])
        return
    for child in node.get("children") or ():
        _leaf_text(child, out, depth + 1)


def result_text(result: Any) -> str | None:
    """The text of one ``toolCallResults`` entry: its ``content`` parts' string values
    and the text leaves of prompt-tsx trees, in order."""
    if type(result) is not dict or type(result.get("content")) is not list:
        return None
    out: list[str] = []
    for part in result["content"]:
        value = part.get("value") if type(part) is dict else None
        if type(value) is str:
            out.append(value)
        elif type(value) is dict:
            _leaf_text(value.get("node"), out)
    return "".join(out) if out else None


class CopilotChatAdapter:
    """Maps one persisted VS Code Copilot Chat session document."""

    def locate(self, source: SourceFile) -> SourceContext:
        """Session id from the path (the file stem), replaced by the ``sessionId``
        written inside the document."""
        return SourceContext(source, source.path.stem)

    def map_document(self, document: Any, ctx: SourceContext, sink: RowSink) -> int:
        """Events of every request; returns the number of requests. Raises
        :class:`InvalidRecord` for a document that is not a chat session and
        :class:`FormatDrift` for an unknown ``version``."""
        if type(document) is not dict or type(document.get("requests")) is not list:
            raise InvalidRecord("not a VS Code chat session (no 'requests' list)")
        version = document.get("version")
        if version is not None:
            if type(version) is not int:
                raise InvalidRecord("'version' is not an integer")
            if version not in KNOWN_VERSIONS:
                raise FormatDrift(
                    f"VS Code chat session version {version} is unknown "
                    f"(known: {', '.join(map(str, sorted(KNOWN_VERSIONS)))})"
                )
        if any(type(r) is not dict for r in document["requests"]):
            raise InvalidRecord("a request of the chat session is not an object")
        parts = rel_parts(ctx.source)
        project = (
            _folder(ctx.source.path.parent.parent / "workspace.json") if len(parts) == 3 else None
        )
        return self.map_session(document, ctx, sink, project)

    def map_session(
        self, document: dict[str, Any], ctx: SourceContext, sink: RowSink, project: str | None
    ) -> int:
        """Map a checked session document (``requests`` a list of objects, its version
        known): the session's fields, then every request's events; returns the number of
        requests. Exports of a session map through here too, so a session read from its
        file and from an export has the same ids."""
        requests = document["requests"]
        sid = document.get("sessionId")
        if type(sid) is str and sid:
            ctx.session_id = sid
        sid = ctx.session_id
        title = _text(document.get("customTitle")) or _text(document.get("computedTitle"))
        sink.session(
            sid,
            project_path=project,
            title=title or None,
            title_rank=3 if document.get("customTitle") else 2,
            started_at=instant(document.get("creationDate")),
            updated_at=instant(document.get("lastMessageDate")),
        )
        model = None
        for index, request in enumerate(requests):
            model = self._request(request, index, sid, sink) or model
        if model is not None:
            sink.session(sid, model=model)
        return len(requests)

    def _request(self, request: dict[str, Any], index: int, sid: str, sink: RowSink) -> str | None:
        """Emit one request's events; returns its model."""
        rid = _text(request.get("requestId")) or f"#{index}"
        ts = instant(request.get("timestamp"))
        model = _text(request.get("modelId")) or None
        offset = index * _SPAN
        message = request.get("message")
        prompt = _text(message.get("text")) if type(message) is dict else _text(message)
        if prompt is not None:
            sink.event(sid, f"{rid}:request", 0, ts, "text", "user", prompt, offset)
        result = request.get("result")
        result = result if type(result) is dict else {}
        metadata = result.get("metadata")
        metadata = metadata if type(metadata) is dict else {}
        rounds = metadata.get("toolCallRounds")
        has_rounds = type(rounds) is list and bool(rounds)
        response = request.get("response")
        self._response(response, rid, ts, model, offset, has_rounds, sid, sink)
        if has_rounds:
            assert isinstance(rounds, list)
            results = metadata.get("toolCallResults")
            first = len(response) + 1 if type(response) is list else 2
            self._rounds(rounds, results if type(results) is dict else {}, rid, ts, model,
                         offset, first, sid, sink)  # fmt: skip
        details = result.get("errorDetails")
        if type(details) is dict and type(details.get("message")) is str:
            sink.event(sid, f"{rid}:error", _LAST_BLOCK, ts, "system", "system", details["message"],
                       offset, model=model, is_error=True)  # fmt: skip
        return model

    @staticmethod
    def _response(
        response: Any, rid: str, ts: str | None, model: str | None, offset: int,
        has_rounds: bool, sid: str, sink: RowSink,
    ) -> None:  # fmt: skip
        """Markdown runs, thinking parts and (without rounds) tool invocations, each at
        block 1 + the index of its first part in ``response`` (block 0 is the prompt)."""
        if type(response) is str:  # exported sessions may hold the reply as one string
            response = [{"value": response}]
        if type(response) is not list:
            return
        native = f"{rid}:response"
        run: list[str] = []
        run_start = 0

        def flush() -> None:
            text = "".join(run)
            if text.strip():
                sink.event(sid, native, run_start + 1, ts, "text", "assistant", text, offset,
                           model=model)  # fmt: skip
            run.clear()

        for i, part in enumerate(response):
            if type(part) is not dict:
                continue
            kind = part.get("kind")
            if kind is not None and type(kind) is not str:
                kind = ""  # a kind of impossible type: an unknown kind
            if kind in _MARKDOWN_KINDS:
                # VS Code nests a markdownContent's text in ``content``; AIWG's exports
                # put it in ``value``.
                value = _markdown(part.get("content", part) if kind == "markdownContent" else part)
                if value is not None:
                    run_start = i if not run else run_start
                    run.append(value)
            elif kind == "inlineReference":
                ref = part.get("inlineReference")
                name = part.get("name")
                if type(name) is not str and type(ref) is dict:
                    path = ref.get("path") or ref.get("fsPath")
                    name = Path(path).name if type(path) is str else None
                if type(name) is str and run:
                    run.append(f"`{name}`")
            elif kind == "thinking":
                flush()
                value = part.get("value")
                if type(value) is list:
                    value = "".join(v for v in value if type(v) is str)
                if type(value) is str and value:
                    sink.event(sid, native, i + 1, ts, "thinking", "assistant", value, offset,
                               model=model)  # fmt: skip
            elif kind == "toolInvocationSerialized":
                flush()
                if not has_rounds:
                    call_id = _text(part.get("toolCallId"))
                    sink.event(
                        sid, native, i + 1, ts, "tool_use", "assistant",
                        _markdown(part.get("invocationMessage")), offset, model=model,
                        tool_name=_text(part.get("toolId")), tool_call_id=call_id,
                    )  # fmt: skip
            elif kind not in _SILENT_KINDS and type(part.get("value")) is str and part["value"]:
                # A part of a kind not known here that carries text: its own reply, as
                # AIWG flattens them (VS Code's own other kinds carry no ``value`` text).
                flush()
                sink.event(sid, native, i + 1, ts, "text", "assistant", part["value"], offset,
                           model=model)  # fmt: skip
        flush()

    @staticmethod
    def _rounds(
        rounds: list[Any], results: dict[str, Any], rid: str, ts: str | None,
        model: str | None, offset: int, block: int, sid: str, sink: RowSink,
    ) -> None:  # fmt: skip
        """A ``tool_use`` per call of every round and the ``tool_result`` recorded for it,
        at blocks after the response's (``block`` on), under the call's own native id."""
        for r, round_ in enumerate(rounds):
            calls = round_.get("toolCalls") if type(round_) is dict else None
            if type(calls) is not list:
                continue
            for k, call in enumerate(calls):
                if type(call) is not dict:
                    continue
                call_id = _text(call.get("id"))
                native = f"{rid}:call:{call_id}" if call_id else f"{rid}:round:{r}:{k}"
                sink.event(
                    sid, native, block, ts, "tool_use", "assistant", None, offset, model=model,
                    tool_name=_text(call.get("name")), tool_call_id=call_id,
                    tool_input=tool_input(call.get("arguments")),
                )  # fmt: skip
                if call_id is not None and call_id in results:
                    sink.event(sid, native, block + 1, ts, "tool_result", "tool",
                               result_text(results[call_id]), offset,
                               tool_call_id=call_id)  # fmt: skip
                block += 2


#: The adapter registered for the ``copilot-vscode-chat`` format.
CHAT_ADAPTER: Final = CopilotChatAdapter()
