"""The copilot provider's export format ``copilot-chat-json-export`` (``import --file``):
VS Code's "Export Chat" JSON, a persisted v3 session named as a file, and AIWG's shape;
the version rule (drift), documents not in the format (refused whole), the sniffer and
``--format`` guessing, one session however many of its copies are imported, AIWG's and
Splitrail's conformance files (skipped when absent), and a fuzz of the export.

Expected figures are counted by hand from fixtures/copilot/export (its README).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentlake.errors import ConfigurationError
from agentlake.extract.adapter import FormatDrift, NotThisFormat, SourceContext
from agentlake.extract.providers import by_id, copilot, copilot_export
from agentlake.extract.rows import RowSink
from agentlake.extract.sources import SourceFile
from agentlake.ingest.files import NamedFile, guess_format, plan_files
from agentlake.ingest.run import ImportOptions, ImportResult, run_import
from tests.conftest import CONFORMANCE, FIXTURES, CliRunner
from tests.extract.catalogs import catalog_rows, import_provider
from tests.extract.test_fuzz import EXPORT_FUZZ_EXAMPLES, MUTATION_LISTS, account_export

SPEC = by_id("copilot")
FORMAT = copilot.EXPORT_FORMAT
EXPORTS = FIXTURES / "copilot" / "export"
HOME = FIXTURES / "copilot" / "contract_all_record_types"
VSCODE_EXPORT = EXPORTS / "vscode-export.chat.json"
SESSION_V3 = EXPORTS / "session-v3.chat.json"
AIWG_SHAPE = EXPORTS / "aiwg.chat.json"
SAME_SESSION = EXPORTS / "aiwg-same-session.chat.json"
S4 = "d0d0d444-2222-4333-8444-000000000004"  # the native empty-window session
AIWG = CONFORMANCE / "jmagly__ai-writing-guide/test/fixtures/sessions/copilot"
SPLITRAIL = CONFORMANCE / "Piebald-AI__splitrail/src/analyzers/tests/source_data/copilot.json"

_rows = catalog_rows


def _import(catalog: Path, *files: Path, fmt: str | None = None) -> ImportResult:
    return run_import(ImportOptions(
        catalog=catalog, workspace="default", home=Path("/nonexistent"), env={},
        build_index=False, files=tuple(NamedFile(f, fmt) for f in files),
    ))  # fmt: skip


def _kinds(catalog: Path, session: str | None = None) -> dict[str, int]:
    where = f"WHERE session_id = '{session}'" if session else ""
    return dict(_rows(catalog, f"SELECT kind, count(*) FROM events {where} GROUP BY ALL"))


def _totals(catalog: Path) -> tuple[int, int, int, int]:
    """Events, sessions, usage rows and rejects in the catalog."""
    (row,) = _rows(catalog, "SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM "
                            "sessions), (SELECT count(*) FROM usage), (SELECT count(*) FROM "
                            "rejects)")  # fmt: skip
    return row


def _write(tmp: Path, name: str, document: Any) -> Path:
    path = tmp / name
    path.write_text(json.dumps(document))
    return path


# --------------------------------------------------------------------------- registry


def test_the_export_format_row() -> None:
    fmt = SPEC.formats[-1]
    assert (fmt.name, fmt.position_kind, fmt.origin) == (FORMAT, "document", "export")
    assert fmt.adapter is copilot_export.EXPORT_ADAPTER and fmt.sniff is copilot_export.sniff
    assert not fmt.owns(("chatSessions", "x.json")) and not fmt.owns(("x.chat.json",))
    assert SPEC.support == "both" and "tokens" in SPEC.capabilities  # the CLI's
    assert any(e.startswith(f"{FORMAT}: no tokens") for e in SPEC.exceptions)


# --------------------------------------------------------------------------- the three shapes


@pytest.mark.parametrize(
    ("path", "session", "kinds"),
    [
        (VSCODE_EXPORT, "export:request_x1", {"prompt": 2, "reasoning": 1, "response": 2,
                                               "tool_call": 1, "tool_result": 1, "system": 1}),
        (SESSION_V3, S4, {"prompt": 1, "response": 2, "tool_call": 1}),
        (AIWG_SHAPE, "aiwg-copilot-0001", {"prompt": 3, "response": 3}),
    ],
)  # fmt: skip
def test_each_shape_is_guessed_and_imports(
    path: Path, session: str, kinds: dict[str, int], tmp_path: Path
) -> None:
    assert guess_format(path)[1].name == FORMAT
    catalog = tmp_path / "c.duckdb"
    result = _import(catalog, path)
    assert result.exit_code == 0 and result.refused == []
    assert _kinds(catalog) == kinds
    assert _rows(catalog, "SELECT session_id FROM sessions") == [(session,)]
    events = sum(kinds.values())
    assert _totals(catalog) == (events, 1, 0, 0)  # no tokens: VS Code chats record none


def test_vscode_export_maps_like_a_session_file(tmp_path: Path) -> None:
    """No version, no sessionId: the session is named after its first request; every
    part kind of the persisted sessions is read the same way (rounds win over invocation
    parts)."""
    catalog = tmp_path / "c.duckdb"
    _import(catalog, VSCODE_EXPORT, fmt=FORMAT)
    rows = _rows(catalog, "SELECT native_id, kind, text, tool_name, tool_input FROM events "
                          "ORDER BY seq")  # fmt: skip
    assert rows == [
        ("request_x1:request", "prompt", "Rename the helper", None, None),
        ("request_x1:response", "reasoning", "Only one call site uses it.", None, None),
        ("request_x1:response", "response", "Renaming it in `util.py` now.", None, None),
        ("request_x1:call:call_x1", "tool_call", None, "rename_symbol",
         '{"from":"helper","to":"assist"}'),
        ("request_x1:call:call_x1", "tool_result", "renamed 2 references", None, None),
        ("request_x2:request", "prompt", "Run the tests", None, None),
        ("request_x2:response", "response", "Starting the test run.", None, None),
        ("request_x2:error", "system", "Request was canceled", None, None),
    ]  # fmt: skip
    assert _rows(catalog, "SELECT session_id, model FROM sessions") == [
        ("export:request_x1", "copilot/gpt-4.1")
    ]


def test_two_default_named_exports_are_two_sessions(tmp_path: Path) -> None:
    """VS Code saves every export as ``chat.json``: two of them, in two folders, are two
    sessions (named after their first requests), not one session called ``chat``."""
    document = json.loads(VSCODE_EXPORT.read_text())
    other = {**document, "requests": [{**r, "requestId": f"other_{i}"}
                                      for i, r in enumerate(document["requests"])]}  # fmt: skip
    for folder, doc in (("a", document), ("b", other)):
        (tmp_path / folder).mkdir()
        _write(tmp_path / folder, "chat.json", doc)
    catalog = tmp_path / "c.duckdb"
    assert _import(catalog, tmp_path / "a" / "chat.json", tmp_path / "b" / "chat.json",
                   fmt=FORMAT).exit_code == 0  # fmt: skip
    assert _rows(catalog, "SELECT session_id FROM sessions ORDER BY 1") == [
        ("export:other_0",),
        ("export:request_x1",),
    ]


def test_aiwg_session_fields_and_flattened_parts(tmp_path: Path) -> None:
    catalog = tmp_path / "c.duckdb"
    _import(catalog, AIWG_SHAPE)
    assert _rows(catalog, "SELECT archived, model, CAST(started_at AS VARCHAR) FROM "
                          "sessions") == [(True, "gpt-4.1", "2026-04-06 08:00:00+00")]  # fmt: skip
    rows = _rows(catalog, "SELECT native_id, kind, text, CAST(ts AS VARCHAR) FROM events "
                          "ORDER BY seq")  # fmt: skip
    assert rows == [
        ("req-a1:request", "prompt", "Why does the cart total round down?",
         "2026-04-06 08:00:00+00"),
        ("req-a1:response", "response", "It truncates cents with int(); use Decimal rounding.",
         "2026-04-06 08:00:00+00"),
        # no requestId: its position; an epoch in seconds; a string message
        ("#1:request", "prompt", "Fix it and run the tests", "2026-04-06 08:01:00+00"),
        ("#1:response", "response", "Switched to Decimal rounding.", "2026-04-06 08:01:00+00"),
        # a part of a kind VS Code does not persist, with text: flattened, as AIWG does
        ("#1:response", "response", "pytest: 12 passed", "2026-04-06 08:01:00+00"),
        ("req-a3:request", "prompt", "Thanks", "2026-04-06 08:02:00+00"),  # no response
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("document", "shape"),
    [
        ({"requests": []}, "vscode-export"),
        ({"version": 3, "requests": []}, "vscode-session"),
        ({"version": 1, "requests": []}, "vscode-session"),  # read alike: AIWG's major too
        ({"version": "1", "requests": []}, "aiwg"),
        ({"version": 3, "schemaVersion": "1.0.0", "requests": []}, "aiwg"),  # schemaVersion wins
        ({"version": "v1.4", "requests": []}, "aiwg"),
    ],
)
def test_shape_from_the_version_fields(document: dict[str, Any], shape: str) -> None:
    assert copilot_export.shape(document) == shape


@pytest.mark.parametrize(
    "document",
    [
        {"version": 2, "schemaVersion": "2.0.0", "requests": []},
        {"version": "2", "requests": []},
        {"version": 4, "requests": []},
        {"version": 1, "schemaVersion": 2, "requests": []},
    ],
)
def test_unknown_major_is_drift_and_refused(document: dict[str, Any], tmp_path: Path) -> None:
    with pytest.raises(FormatDrift):
        copilot_export.shape(document)
    catalog = tmp_path / "c.duckdb"
    result = _import(catalog, _write(tmp_path, "x.chat.json", document), fmt=FORMAT)
    assert [s.code for s in result.refused] == ["SCHEMA_DRIFT"]
    assert _totals(catalog) == (0, 0, 0, 0)


NOT_EXPORTS = [
    {"requests": {}},
    {"sessions": []},
    {"requests": [1]},
    {"requests": [{"response": "no message"}]},
    {"requests": [{"message": {"parts": []}}]},
    {"requests": [{"message": "m", "response": 3}]},
    {"requests": [{"message": "m", "response": ["chunk"]}]},
    {"requests": [{"message": "m", "timestamp": {}}]},
    {"requests": [{"message": "m", "modelId": 4}]},
    {"version": True, "requests": []},
    {"version": 0, "requests": []},
    {"version": "next", "requests": []},
    {"sessionId": 7, "requests": []},
    {"isArchived": "yes", "requests": []},
    {"workspace": "ws", "requests": []},
]


@pytest.mark.parametrize("document", NOT_EXPORTS)
def test_a_document_not_in_the_format_is_refused_whole(
    document: dict[str, Any], tmp_path: Path
) -> None:
    with pytest.raises(NotThisFormat):
        copilot_export.EXPORT_ADAPTER.map_document(document, _ctx(tmp_path), RowSink())
    # a good request before the bad one is not written either
    if type(document.get("requests")) is list and document["requests"]:
        document = {**document, "requests": [{"message": "fine"}, *document["requests"]]}
    catalog = tmp_path / "c.duckdb"
    result = _import(catalog, _write(tmp_path, "x.chat.json", document), fmt=FORMAT)
    assert [s.code for s in result.refused] == ["SOURCE_CORRUPT"]
    assert _totals(catalog) == (0, 0, 0, 0)


def _ctx(tmp: Path) -> SourceContext:
    path = tmp / "doc.chat.json"
    source = SourceFile("copilot", path, tmp, "document", FORMAT, 0, 0, 0, 0)
    return copilot_export.EXPORT_ADAPTER.locate(source)


def test_invalid_json_is_one_reject(tmp_path: Path) -> None:
    catalog = tmp_path / "c.duckdb"
    path = tmp_path / "cut.chat.json"
    path.write_bytes(VSCODE_EXPORT.read_bytes()[:300])
    assert _import(catalog, path, fmt=FORMAT).refused == []
    assert _rows(catalog, "SELECT reason FROM rejects") == [("MALFORMED",)]
    assert _totals(catalog)[:3] == (0, 0, 0)


@pytest.mark.parametrize(
    ("fields", "archived"),
    [
        ({"state": "deleted"}, True),
        ({"state": "active"}, False),
        ({"state": "archived", "isArchived": False}, False),  # the flag wins
        ({}, None),
    ],
)
def test_archived_from_the_flag_or_the_state(
    fields: dict[str, Any], archived: bool | None, tmp_path: Path
) -> None:
    sink = RowSink()
    copilot_export.EXPORT_ADAPTER.map_document({"requests": [], **fields}, _ctx(tmp_path), sink)
    assert [s["archived"] for s in sink.build().sessions.to_pylist()] == [archived]


def test_parts_of_unknown_or_impossible_kinds(tmp_path: Path) -> None:
    """A part of a kind of impossible type is an unknown kind: its text is a reply of its
    own; progress parts stay silent whatever they hold."""
    sink = RowSink()
    document = {"requests": [{"requestId": "r", "message": "m", "response": [
        {"value": "a"}, {"kind": ["x"], "value": "b"}, {"kind": "progressMessage", "value": "c"},
        {"kind": "warning", "value": ""}, {"value": "d"}]}]}  # fmt: skip
    copilot_export.EXPORT_ADAPTER.map_document(document, _ctx(tmp_path), sink)
    events = sink.build().events.to_pylist()
    assert [(e["block_index"], e["text"]) for e in events] == [(0, "m"), (1, "a"), (2, "b"),
                                                                (5, "d")]  # fmt: skip


# --------------------------------------------------------------------------- identity


def test_a_session_file_and_its_exports_are_one_session(tmp_path: Path) -> None:
    """The native session d0d0d444 imported by discovery, then named as a copied-out file
    and as an AIWG export: one session, the same events, none counted twice."""
    catalog = tmp_path / "c.duckdb"
    assert import_provider("copilot", HOME, catalog).exit_code == 0
    ids = f"SELECT event_id FROM events WHERE session_id = '{S4}' ORDER BY event_id"
    before, totals = _rows(catalog, ids), _totals(catalog)
    assert len(before) == 4
    result = _import(catalog, SESSION_V3, SAME_SESSION)
    assert result.exit_code == 0 and result.refused == []
    assert (_rows(catalog, ids), _totals(catalog)) == (before, totals)
    # the discovered file itself, named
    native = HOME / ".config/Code/User/globalStorage/emptyWindowChatSessions" / f"{S4}.json"
    assert _import(catalog, native).refused == []
    assert (_rows(catalog, ids), _totals(catalog)) == (before, totals)
    # the exports alone give the same events as the session file
    alone = tmp_path / "alone.duckdb"
    _import(alone, SAME_SESSION)
    assert _rows(alone, ids) == before
    _import(alone, SESSION_V3)
    assert _rows(alone, ids) == before and _totals(alone)[:2] == (4, 1)


# --------------------------------------------------------------------------- guessing


def test_the_sniffer_claims_this_format_only() -> None:
    for path in (VSCODE_EXPORT, SESSION_V3, AIWG_SHAPE, SAME_SESSION):
        assert copilot_export.sniff(path.read_bytes()), path
    # a head cut short by the sniffing window still shows the shape
    assert copilot_export.sniff(VSCODE_EXPORT.read_bytes()[:700])
    assert copilot_export.sniff(b'\xef\xbb\xbf {"requests": [{"requestId": "r", "mess')
    for head in (
        b"",
        b"[]",
        b'{"requests": []}',  # no mark of the format beside it
        b'{"version": 3, "requests": {}}',
        b'{"kind": 0, "v": {"version": 3, "requests": []}}',  # VS Code's mutation log
        b'{"info": {"version": "1"}, "text": "{\\"requests\\": [], \\"version\\": 1}"}',
        b'{"a": {"requests": [], "version": 1}}',
        b'{"version": 1}\n{"requests": []}\n',
        b"{" + b'"\\' * 30_000,  # quotes that never close: read once, not once per quote
    ):
        assert not copilot_export.sniff(head), head[:80]
    # no other provider's fixture is claimed
    others = [p for p in FIXTURES.rglob("*") if p.is_file() and "copilot" not in p.parts]
    assert others
    assert not [p for p in others if copilot_export.sniff(p.read_bytes()[:65536])]


def test_other_export_formats_keep_their_files() -> None:
    """Copilot's row comes before the other providers' exports: its sniffer must leave
    their files to them."""
    exports = {
        FIXTURES / "hermes/export/sessions_export.jsonl": "hermes-export-jsonl",
        FIXTURES / "generic/all_record_shapes/laptop-export.jsonl": "aiwg.session-interchange",
    }
    for path, name in exports.items():
        assert guess_format(path)[1].name == name


def test_import_file_through_the_cli_guesses_the_format(cli: CliRunner, tmp_path: Path) -> None:
    catalog, named = tmp_path / "c.duckdb", tmp_path / "x.chat.json"
    shutil.copy(AIWG_SHAPE, named)
    proc = cli("import", "--file", named, "--catalog", catalog, "--no-index", "--json")
    assert proc.returncode == 0, proc.stderr
    receipt = json.loads(proc.stdout)
    assert receipt["guessed_formats"] == [{"path": str(named.resolve()), "format": FORMAT}]
    assert f"read as {FORMAT}, recognized from its content" in proc.stderr
    plan = plan_files({}, workspace="w", files=[NamedFile(named, FORMAT)])
    assert plan.guesses == ()
    with pytest.raises(ConfigurationError, match="no export format recognizes"):
        guess_format(_write(tmp_path, "other.json", {"requests": []}))


# --------------------------------------------------------------------------- conformance


@pytest.mark.skipif(not AIWG.is_dir(), reason="conformance data not present")
@pytest.mark.parametrize(
    ("name", "outcome"),
    [("complete", "ok"), ("archived", "ok"), ("malformed", "SOURCE_CORRUPT"),
     ("unknown-major", "SCHEMA_DRIFT")],
)  # fmt: skip
def test_conformance_aiwg_exports(name: str, outcome: str, tmp_path: Path) -> None:
    """AIWG's fixtures, guessed and imported: the good ones whole, the others refused
    with nothing of them written."""
    path = AIWG / f"{name}.chat.json"
    assert guess_format(path)[1].name == FORMAT
    catalog = tmp_path / "c.duckdb"
    result = _import(catalog, path)
    if outcome != "ok":
        assert [s.code for s in result.refused] == [outcome]
        assert _totals(catalog) == (0, 0, 0, 0)
        return
    assert result.exit_code == 0 and result.refused == []
    if name == "complete":
        assert _totals(catalog) == (3, 1, 0, 0)
        assert _rows(catalog, "SELECT native_id, kind, text FROM events ORDER BY seq") == [
            ("request-1:request", "prompt", "Decision: keep synthetic fixture evidence"),
            ("request-1:response", "response", "The synthetic decision is recorded."),
            ("request-1:response", "response", "Synthetic tool result only"),
        ]
        assert _rows(catalog, "SELECT session_id, archived, model FROM sessions") == [
            ("copilot-session-fixture", False, "synthetic-model")
        ]
    else:
        assert _totals(catalog) == (2, 1, 0, 0)
        assert _kinds(catalog) == {"prompt": 1, "response": 1}
        assert _rows(catalog, "SELECT session_id, archived, CAST(started_at AS VARCHAR) "
                              "FROM sessions") == [
            ("copilot-archived-fixture", True, "2026-07-27 10:00:00+00")
        ]  # fmt: skip


@pytest.mark.skipif(not SPLITRAIL.is_file(), reason="conformance data not present")
def test_conformance_splitrail_session_named_as_a_file(tmp_path: Path) -> None:
    """A real persisted v3 session (2 MB), named with ``--file``: guessed, and the same
    session as when discovered."""
    assert guess_format(SPLITRAIL)[1].name == FORMAT
    catalog = tmp_path / "c.duckdb"
    result = _import(catalog, SPLITRAIL)
    assert result.exit_code == 0 and result.refused == []
    kinds = _kinds(catalog)
    assert kinds["prompt"] == 3 and kinds["tool_call"] == kinds["tool_result"] == 13
    assert _rows(catalog, "SELECT session_id, title FROM sessions") == [
        ("f56f201a-672e-4cc5-ada9-4736258cc586", "Adding a debug option to the application")
    ]
    assert _totals(catalog)[2:] == (0, 0)


# --------------------------------------------------------------------------- fuzz


@settings(max_examples=EXPORT_FUZZ_EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])  # fmt: skip
@given(
    source=st.sampled_from([VSCODE_EXPORT, AIWG_SHAPE, SESSION_V3]),
    mutations=MUTATION_LISTS,
)
def test_mutated_exports_never_escape(
    source: Path, mutations: list[tuple[str, float, int]]
) -> None:
    """The export is not in the contract home (files are named, not found): the fuzz
    suite's mutations applied to each shape's file; an adapter error other than a
    classified refusal or reject fails, and whatever the sniffer says it never raises."""
    data = account_export(SPEC, FORMAT, source.read_bytes(), mutations, "export.chat.json")
    copilot_export.sniff(data[:65536])
