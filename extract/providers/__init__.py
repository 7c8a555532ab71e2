"""The one explicit provider registry (DESIGN §2).

Adding a provider = one module in this folder + one row in :data:`REGISTRY` + fixtures.
Nothing registers itself by import side effect.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ..adapter import FormatSpec
from ..sources import Root
from . import (
    claude,
    codex,
    codex_index,
    copilot,
    copilot_discovery,
    copilot_export,
    copilot_vscode,
    cursor,
    cursor_state,
    devin_desktop,
    factory,
    factory_export,
    factory_settings,
    gemini,
    generic,
    hermes,
    openclaw,
    openclaw_export,
    openclaw_store,
    opencode,
    opencode_db,
    openhuman,
    openhuman_export,
    warp,
    warp_export,
)
from .spec import Capability as Capability
from .spec import ProviderSpec as ProviderSpec
from .spec import Support as Support


def _claude_roots(home: Path, env: Mapping[str, str]) -> list[Root]:
    """``CLAUDE_CONFIG_DIR`` (comma list of dirs containing ``projects/``), else
    ``~/.claude/projects`` and ``~/.config/claude/projects``."""
    configured = [p.strip() for p in env.get("CLAUDE_CONFIG_DIR", "").split(",") if p.strip()]
    if configured:
        return [
            Root("claude-code", Path(p).expanduser() / "projects", "CLAUDE_CONFIG_DIR")
            for p in configured
        ]
    return [
        Root("claude-code", home / ".claude" / "projects", "default"),
        Root("claude-code", home / ".config" / "claude" / "projects", "default"),
    ]


REGISTRY: tuple[ProviderSpec, ...] = (
    ProviderSpec(
        id="claude-code",
        aliases=("claude",),
        env_overrides=("CLAUDE_CONFIG_DIR",),
        roots=_claude_roots,
        formats=(FormatSpec("claude-jsonl", "byte-offset", claude.owns, claude.ClaudeAdapter()),),
        capabilities=frozenset({"discover", "stream", "tokens", "subagents"}),
        adapter_version=claude.ADAPTER_VERSION,
        fixtures=("fixtures/claude",),
        tests=(
            "tests/test_contract.py",
            "tests/extract/test_claude.py",
            "tests/test_token_parity.py",
        ),
    ),
    ProviderSpec(
        id="codex",
        aliases=("codex-cli",),
        env_overrides=("CODEX_HOME",),
        roots=codex.roots,
        formats=(
            FormatSpec("codex-rollout", "byte-offset", codex.owns_rollout, codex.RolloutAdapter()),
            FormatSpec(
                "codex-state",
                "sqlite",
                codex_index.owns_state_index,
                codex_index.StateIndexAdapter(),
            ),
        ),
        capabilities=frozenset({"discover", "stream", "enrich", "tokens", "subagents"}),
        adapter_version=codex.ADAPTER_VERSION,
        fixtures=("fixtures/codex",),
        tests=(
            "tests/test_contract.py",
            "tests/extract/test_codex.py",
            "tests/test_token_parity_codex.py",
        ),
        exceptions=(
            "codex-state: a thread index read whole when it changes; it adds titles and "
            "thread token totals (never calls), no events",
        ),
    ),
    ProviderSpec(
        id=gemini.PROVIDER_ID,
        aliases=("gemini",),
        env_overrides=(),
        roots=gemini.roots,
        formats=(
            FormatSpec("gemini-json", "document", gemini.owns_document, gemini.DOCUMENT_ADAPTER),
            FormatSpec("gemini-jsonl", "byte-offset", gemini.owns_log, gemini.LOG_ADAPTER),
        ),
        capabilities=frozenset({"discover", "stream", "tokens", "subagents"}),
        adapter_version=gemini.ADAPTER_VERSION,
        fixtures=("fixtures/gemini",),
        tests=("tests/test_contract.py", "tests/extract/test_gemini.py"),
        superseded=gemini.superseded,
        exceptions=(
            "gemini-json: legacy documents are re-read whole when they change (no byte offsets)",
        ),
    ),
    ProviderSpec(
        id="cursor",
        aliases=("cursor-agent",),
        env_overrides=(),
        roots=cursor.roots,
        formats=(
            FormatSpec(
                cursor.TRANSCRIPT_FORMAT,
                "byte-offset",
                cursor.owns_transcript,
                cursor.CursorTranscriptAdapter(),
            ),
            FormatSpec(
                cursor.STATE_FORMAT,
                "sqlite",
                cursor_state.owns_state_db,
                cursor_state.CursorStateAdapter(),
            ),
        ),
        capabilities=frozenset({"discover", "stream", "enrich", "tokens", "subagents"}),
        adapter_version=cursor.ADAPTER_VERSION,
        fixtures=("fixtures/cursor",),
        tests=("tests/test_contract.py", "tests/extract/test_cursor.py"),
        superseded=cursor.superseded,
        exceptions=(
            "cursor-state: a composer store read whole when it changes; its token counts "
            "are per bubble",
        ),
    ),
    ProviderSpec(
        id=copilot.PROVIDER_ID,
        aliases=("github-copilot", "copilot-cli"),
        env_overrides=("COPILOT_HOME",),
        roots=copilot_discovery.roots,
        formats=(
            FormatSpec(
                copilot.CLI_FORMAT,
                "byte-offset",
                copilot_discovery.owns_events,
                copilot.CopilotCliAdapter(),
            ),
            FormatSpec(
                copilot.VSCODE_FORMAT,
                "document",
                copilot_vscode.owns_session,
                copilot_vscode.CHAT_ADAPTER,
            ),
            FormatSpec(
                copilot.EXPORT_FORMAT,
                "document",
                copilot_export.never,
                copilot_export.EXPORT_ADAPTER,
                origin="export",
                sniff=copilot_export.sniff,
            ),
        ),
        # No "subagents": Copilot CLI sub-agents run inline in their parent's file.
        capabilities=frozenset({"discover", "stream", "tokens"}),
        adapter_version=copilot.ADAPTER_VERSION,
        fixtures=("fixtures/copilot",),
        tests=(
            "tests/test_contract.py",
            "tests/extract/test_copilot.py",
            "tests/extract/test_copilot_export.py",
        ),
        exceptions=(
            "copilot-cli-events: tokens are the cumulative totals per session and model of "
            "the latest shutdown, not per call",
            "copilot-vscode-chat: chat documents are re-read whole when they change and "
            "record no tokens",
            "copilot-chat-json-export: no tokens (VS Code chats record none); a real "
            "'Export Chat' file has no sessionId, so it is its own session (the file's "
            "stem) unless it carries one; AIWG's usernames, syncStatus and workspace are "
            "not imported",
        ),
    ),
    ProviderSpec(
        id=factory.PROVIDER_ID,
        aliases=("droid", "factory-droid"),
        env_overrides=factory.ENV_OVERRIDES,  # peers' conventions (ccusage, codeburn)
        roots=factory.roots,
        formats=(
            FormatSpec(
                factory.SESSION_FORMAT,
                "byte-offset",
                factory.owns_session,
                factory.DroidSessionAdapter(),
            ),
            FormatSpec(
                factory.PROJECT_FORMAT,
                "byte-offset",
                factory.owns_project,
                factory.DroidSessionAdapter(),
            ),
            FormatSpec(
                factory.SETTINGS_FORMAT,
                "document",
                factory.owns_settings,
                factory_settings.DroidSettingsAdapter(),
            ),
            FormatSpec(
                factory_export.FORMAT,
                "byte-offset",
                factory_export.owns,
                factory_export.FactoryExportAdapter(),
                origin="export",
                sniff=factory_export.sniff,
            ),
        ),
        capabilities=frozenset({"discover", "stream", "tokens"}),
        adapter_version=factory.ADAPTER_VERSION,
        fixtures=("fixtures/factory",),
        tests=(
            "tests/test_contract.py",
            "tests/extract/test_factory.py",
            "tests/extract/test_factory_export.py",
        ),
        exceptions=(
            "factory-settings: a session's cumulative token totals, re-read whole when "
            "rewritten; one session-granularity row per session, no per-call counts",
            "factory-project: which Droid versions write it is unknown; records are "
            "sniffed and other formats' lines rejected with their reason",
            "factory-droid-jsonl: the store's records and AIWG's synthetic schemaVersion "
            "family (not known to be written by Droid); no tokens (Droid keeps them in "
            "the store's .settings.json); activity boundaries are system events, "
            "completion status has no column",
        ),
    ),
    ProviderSpec(
        id=openclaw.PROVIDER,
        aliases=("clawdbot",),
        env_overrides=(openclaw.STATE_ENV,),
        roots=openclaw.roots,
        formats=(
            FormatSpec(
                openclaw.TRANSCRIPT_FORMAT,
                "byte-offset",
                openclaw.owns_transcript,
                openclaw.TranscriptAdapter(),
            ),
            FormatSpec(
                openclaw.STORE_FORMAT,
                "sqlite",
                openclaw_store.owns_store,
                openclaw_store.TranscriptStoreAdapter(),
            ),
            FormatSpec(
                openclaw_export.FORMAT,
                "byte-offset",
                openclaw_export.owns_nothing,
                openclaw_export.SnapshotAdapter(),
                origin="export",
                sniff=openclaw_export.sniff,
            ),
        ),
        capabilities=frozenset({"discover", "stream", "tokens"}),
        adapter_version=openclaw.ADAPTER_VERSION,
        fixtures=("fixtures/openclaw",),
        tests=(
            "tests/test_contract.py",
            "tests/extract/test_openclaw.py",
            "tests/extract/test_openclaw_export.py",
        ),
        exceptions=(
            "openclaw-sqlite: a per-agent store read by its rowid watermark, a changed "
            "session whole; rows that are not JSON or hold impossible fields are skipped, "
            "not rejected",
            "openclaw-jsonl: .deleted./.reset. histories are read like live transcripts; "
            "records shared with another copy count once",
            "openclaw-consistent-snapshot-jsonl: AIWG's projection, not written by OpenClaw; "
            "incognito, remote-host-mismatch and inconsistent snapshots are rejected lines; "
            "lossy projections are imported and say so in each session's header event",
        ),
    ),
    ProviderSpec(
        id=opencode.PROVIDER_ID,
        aliases=("opencode-cli",),
        env_overrides=("XDG_DATA_HOME",),
        roots=opencode.roots,
        formats=(
            FormatSpec(
                opencode.SESSION_FORMAT,
                "document",
                opencode.owns_session,
                opencode.SESSION_ADAPTER,
            ),
            FormatSpec(
                opencode.MESSAGE_FORMAT,
                "document",
                opencode.owns_message,
                opencode.MESSAGE_ADAPTER,
            ),
            FormatSpec(opencode.PART_FORMAT, "document", opencode.owns_part, opencode.PART_ADAPTER),
            FormatSpec(
                opencode.DB_FORMAT, "sqlite", opencode.owns_database, opencode_db.DATABASE_ADAPTER
            ),
            FormatSpec(
                opencode.EXPORT_FORMAT,
                "document",
                opencode.never,
                opencode.EXPORT_ADAPTER,
                origin="export",
                sniff=opencode.sniff_export,
                aliases=("opencode-export-json",),  # the reference's locator class
            ),
        ),
        capabilities=frozenset({"discover", "stream", "tokens", "subagents"}),
        adapter_version=opencode.ADAPTER_VERSION,
        fixtures=("fixtures/opencode",),
        tests=("tests/test_contract.py", "tests/extract/test_opencode.py"),
        exceptions=(
            "opencode-db: read by its update-time watermark, a changed session whole; a row "
            "of impossible shape is skipped without a receipt; OpenCode 2.x "
            "session_message rows refuse it (drift)",
            "opencode-session/-message/-part: the legacy tree's records are documents, "
            "re-read whole when they change",
            "tokens: one call per step-finish part; message.tokens only for a message "
            "without steps",
        ),
    ),
    ProviderSpec(
        id=hermes.PROVIDER_ID,
        aliases=("hermes-agent",),
        env_overrides=(hermes.ENV,),
        roots=hermes.roots,
        formats=(
            FormatSpec(hermes.STATE_FORMAT, "sqlite", hermes.owns_state, hermes.StateDbAdapter()),
            FormatSpec(hermes.LOG_FORMAT, "document", hermes.owns_log, hermes.SessionLogAdapter()),
            FormatSpec(
                hermes.EXPORT_FORMAT,
                "byte-offset",
                hermes.owns_export,
                hermes.ExportAdapter(),
                origin="export",
                sniff=hermes.sniff,
            ),
        ),
        capabilities=frozenset({"discover", "stream", "tokens", "subagents"}),
        adapter_version=hermes.ADAPTER_VERSION,
        fixtures=("fixtures/hermes",),
        tests=("tests/test_contract.py", "tests/extract/test_hermes.py"),
        exceptions=(
            "hermes-state: a SQLite store read by its message-id watermark (in one read "
            "transaction), a changed session whole; tokens are cumulative per session and "
            "model, one session-granularity row each, the latest snapshot winning",
            "hermes-session-json: logs are re-read whole when they change and record no "
            "tokens; their messages carry no times",
            "hermes-export-jsonl: a line without schemaVersion is read (AIWG requires "
            "major 23; whether Hermes writes it is unverified)",
        ),
    ),
    ProviderSpec(
        id=openhuman.PROVIDER,
        aliases=("tinyhumans",),
        env_overrides=(openhuman.ENV,),
        roots=openhuman.roots,
        formats=(
            FormatSpec(
                openhuman.NATIVE_FORMAT,
                "document",
                openhuman.owns,
                openhuman.SessionRawAdapter(),
            ),
            FormatSpec(
                openhuman_export.FORMAT,
                "byte-offset",
                openhuman_export.owns,
                openhuman_export.EnrichedExportAdapter(),
                origin="export",
                sniff=openhuman_export.sniff,
            ),
        ),
        capabilities=frozenset({"discover", "tokens", "subagents"}),
        adapter_version=openhuman.ADAPTER_VERSION,
        fixtures=("fixtures/openhuman",),
        tests=("tests/test_contract.py", "tests/extract/test_openhuman.py"),
        exceptions=(
            "openhuman-session-raw: transcripts are rewritten whole on every turn (earlier "
            "messages may be dropped): re-read whole when they change, their rows replaced; "
            "tokens are the session's cumulative totals, one session-granularity row",
            "openhuman-enriched-jsonl: AIWG's wrapper, not written by OpenHuman; its token "
            "counters are read as cumulative per session",
        ),
    ),
    ProviderSpec(
        id=devin_desktop.PROVIDER,
        aliases=("windsurf",),
        env_overrides=(),
        roots=devin_desktop.roots,
        formats=(
            FormatSpec(
                devin_desktop.NATIVE_FORMAT,
                "byte-offset",
                devin_desktop.owns,
                devin_desktop.HookTranscriptAdapter(),
            ),
            FormatSpec(
                devin_desktop.EXPORT_FORMAT,
                "byte-offset",
                devin_desktop.owns_nothing,
                devin_desktop.HookTranscriptAdapter(),
                origin="export",
                sniff=devin_desktop.sniff,
                aliases=(devin_desktop.LEGACY_EXPORT_FORMAT,),
            ),
        ),
        # No "tokens": the hook records none.
        capabilities=frozenset({"discover", "stream"}),
        adapter_version=devin_desktop.ADAPTER_VERSION,
        fixtures=("fixtures/devin-desktop",),
        tests=("tests/test_contract.py", "tests/extract/test_devin.py"),
        exceptions=(
            "discover: only the opt-in transcript hook's files; the Cascade history itself "
            "is encrypted and not read",
        ),
    ),
    ProviderSpec(
        id=warp.PROVIDER_ID,
        aliases=("warp-terminal",),
        env_overrides=("XDG_STATE_HOME",),
        roots=warp.roots,
        formats=(
            FormatSpec(warp.STORE_FORMAT, "sqlite", warp.owns_store, warp.WarpStoreAdapter()),
            FormatSpec(
                warp_export.FORMAT,
                "document",
                warp_export.owns,
                warp_export.WarpMarkdownAdapter(),
                origin="export",
                sniff=warp_export.sniff,
            ),
        ),
        capabilities=frozenset({"discover", "tokens", "subagents"}),
        adapter_version=warp.ADAPTER_VERSION,
        fixtures=("fixtures/warp",),
        tests=("tests/test_contract.py", "tests/extract/test_warp.py"),
        exceptions=(
            "warp-sqlite: a live store read whole when it changes (a fork names its origin "
            "by a token held in another conversation's row); tokens are cumulative "
            "totals per conversation and model with no input/output split, stored as "
            "input and left unpriced (model 'warp:<id>'); the agent's replies (a protobuf "
            "task) are not imported, only prompts, exchange statuses and agent-run commands",
            "warp-markdown-export: re-read whole when it changes; no ids, times, models "
            "or tokens; the session id is the file's content digest",
        ),
    ),
    ProviderSpec(
        id="generic",
        aliases=("aiwg",),
        env_overrides=(),
        roots=lambda home, env: [],  # files the user names: import --file
        formats=(
            FormatSpec(
                generic.FORMAT,
                "byte-offset",
                generic.owns,
                generic.GenericAdapter(),
                origin="export",
                sniff=generic.sniff,
                aliases=("generic",),  # the provider's id: `import --format generic`
            ),
        ),
        capabilities=frozenset({"stream", "tokens"}),
        adapter_version=generic.ADAPTER_VERSION,
        fixtures=("fixtures/generic",),
        tests=("tests/test_contract.py", "tests/extract/test_generic.py"),
        exceptions=(
            "tokens: only where the exporter writes extensions.usage (agentlake's reading; "
            "the format defines no token fields)",
        ),
    ),
)


def resolve(name: str) -> ProviderSpec:
    """The provider whose id or alias is ``name``; ``KeyError`` if none."""
    for spec in REGISTRY:
        if name == spec.id or name in spec.aliases:
            return spec
    raise KeyError(name)


def by_id(provider_id: str) -> ProviderSpec:
    """The provider with canonical id ``provider_id``."""
    return resolve(provider_id)
