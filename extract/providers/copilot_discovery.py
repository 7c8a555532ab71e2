"""Where the copilot provider's native files are (provider-formats-more §1.1, §1.2): the
Copilot CLI's ``session-state`` and VS Code's chat session folders. Exports are named by
the user, never discovered (:mod:`.copilot_export`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Final

from ..sources import RelParts, Root
from .copilot import CLI_FORMAT, PROVIDER_ID, VSCODE_FORMAT

#: VS Code builds whose user data directory may hold Copilot Chat sessions.
VSCODE_BUILDS: Final = ("Code", "Code - Insiders", "VSCodium")


def roots(home: Path, env: Mapping[str, str]) -> list[Root]:
    """``$COPILOT_HOME/session-state`` when ``COPILOT_HOME`` is absolute, else
    ``~/.copilot/session-state``; then each VS Code build's ``workspaceStorage`` and
    ``globalStorage/emptyWindowChatSessions`` (Linux, macOS, Windows; all relative to
    ``home`` so ``--home`` applies)."""
    configured = env.get("COPILOT_HOME", "").strip()
    if configured and Path(configured).is_absolute():
        base, origin, warning = Path(configured), "COPILOT_HOME", None
    else:
        base = home / ".copilot"
        origin = (
            f"default (relative COPILOT_HOME {configured!r} ignored)" if configured else "default"
        )
        warning = (
            f"COPILOT_HOME={configured!r} is relative and was ignored; set it to an absolute path"
            if configured
            else None
        )
    found = [
        Root(PROVIDER_ID, base / "session-state", origin, (CLI_FORMAT,), 2, warning),
    ]
    for data_dir in (
        home / ".config",
        home / "Library" / "Application Support",
        home / "AppData" / "Roaming",
    ):
        for build in VSCODE_BUILDS:
            user = data_dir / build / "User"
            found.append(
                Root(PROVIDER_ID, user / "workspaceStorage", "default", (VSCODE_FORMAT,), 3)
            )
            found.append(
                Root(
                    PROVIDER_ID,
                    user / "globalStorage" / "emptyWindowChatSessions",
                    "default",
                    (VSCODE_FORMAT,),
                    1,
                )
            )
    return found


def owns_events(rel: RelParts) -> bool:
    """``<session>/events.jsonl`` or a flat ``<session>.jsonl`` in ``session-state``."""
    if len(rel) == 2:
        return rel[1] == "events.jsonl"
    return len(rel) == 1 and rel[0].endswith(".jsonl") and len(rel[0]) > len(".jsonl")
