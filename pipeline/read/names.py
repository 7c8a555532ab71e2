"""What users name on the command line, checked the same way by every command: providers
(canonical ids and their aliases), event kinds, and sessions (an id or a unique prefix).
An unknown provider or kind is a usage error (exit 2) that lists the valid values, never
an empty result."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from agentlake.errors import ConfigurationError, NotFoundError

if TYPE_CHECKING:
    import duckdb

MIN_PREFIX: Final = 4  # shorter prefixes of a session id match too much to be useful
_CANDIDATES: Final = 5  # an ambiguous prefix lists at most this many sessions


def providers_json(home: Path, env: Mapping[str, str]) -> dict[str, Any]:
    """The provider registry as ``agentlake providers --json`` prints it (the conformance
    matrix): each provider's names, support state (native store, exports, or both),
    environment overrides, roots under ``home``, formats, capabilities and their
    exceptions, the modules documenting its formats, and the fixtures and tests that
    prove it."""
    from agentlake.extract.providers import REGISTRY

    rows = [
        {
            "id": p.id,
            "aliases": list(p.aliases),
            "support": p.support,
            "env": list(p.env_overrides),
            "roots": [str(r.path) for r in p.roots(home, env)],
            "formats": [
                {"name": f.name, "position_kind": f.position_kind, "origin": f.origin}
                for f in p.formats
            ],
            "capabilities": sorted(p.capabilities),
            "exceptions": list(p.exceptions),
            "adapter_version": p.adapter_version,
            "docs": list(p.docs),
            "fixtures": list(p.fixtures),
            "tests": list(p.tests),
        }
        for p in REGISTRY
    ]
    return {"providers": rows}


MATRIX_FILE: Final = "providers.json"


def matrix_text() -> str:
    """The conformance matrix as checked in (:data:`MATRIX_FILE`): the registry with
    roots under ``~`` and no environment overrides set, so it reads the same on every
    machine. A test fails when the file is stale (``make matrix`` writes it)."""
    import json

    return json.dumps(providers_json(Path("~"), {}), indent=2) + "\n"


def provider_id(name: str) -> str:
    """The canonical id of the provider called ``name`` (an id or an alias)."""
    from agentlake.extract.providers import REGISTRY, resolve

    try:
        return resolve(name).id
    except KeyError:
        valid = "; ".join(
            f"{spec.id} ({', '.join(spec.aliases)})" if spec.aliases else spec.id
            for spec in REGISTRY
        )
        raise ConfigurationError(
            f"unknown provider {name!r}; use an id or alias (in parentheses): {valid}"
        ) from None


def provider_ids(names: Sequence[str]) -> tuple[str, ...]:
    """The canonical ids of ``names``, each once, in the order first named."""
    return tuple(dict.fromkeys(provider_id(name) for name in names))


def event_kind(name: str) -> str:
    """``name`` if it is an event kind (``prompt``, ``response``…)."""
    from agentlake.extract.schema import EVENT_KINDS

    if name not in EVENT_KINDS:
        raise ConfigurationError(
            f"unknown event kind {name!r}; use one of: {', '.join(EVENT_KINDS)}"
        )
    return name


def session_named(
    con: duckdb.DuckDBPyConnection, workspace: str, ident: str, *, include_hidden: bool = True
) -> tuple[str, str]:
    """(provider, session_id) of the one session of ``workspace`` whose id is ``ident``
    or starts with it (hidden sessions only with ``include_hidden``: reads pass False
    unless asked for them). A prefix of fewer than :data:`MIN_PREFIX` characters is
    refused whether or not it matches (exit 2), as is one matching several sessions; one
    that matches none is :class:`NotFoundError` (exit 4), which says so when the id is
    a hidden session's of this workspace."""
    from agentlake import sql

    ident = ident.strip()
    if not ident:
        raise ConfigurationError(f"give a session id, or at least {MIN_PREFIX} characters of one")
    rows = con.execute(
        sql.query("sessions_resolve"),
        {"workspace": workspace, "id": ident, "limit": _CANDIDATES + 1,
         "include_hidden": include_hidden},
    ).fetchall()  # fmt: skip
    exact = [(str(r[0]), str(r[1])) for r in rows if r[2]]
    if len(exact) == 1:
        return exact[0]
    if not exact and len(ident) < MIN_PREFIX:
        raise ConfigurationError(
            f"session id prefix {ident!r} is too short; give at least {MIN_PREFIX} characters"
        )
    if not rows and not include_hidden:
        hidden = con.execute(
            sql.query("sessions_hidden_match"), {"workspace": workspace, "id": ident}
        ).fetchone()
        if hidden is not None and hidden[0]:
            raise NotFoundError(
                f"session {ident!r} is hidden in workspace {workspace!r}; pass "
                f"--include-hidden to read it, or 'agentlake sessions restore {ident}'"
            )
    if not rows:
        raise NotFoundError(
            f"no session {ident!r} in workspace {workspace!r}; 'agentlake sessions list' shows the ids"
        )
    if len(rows) == 1:
        return str(rows[0][0]), str(rows[0][1])
    matches = [f"{r[1]} ({r[0]})" for r in (exact or rows)[:_CANDIDATES]]
    more = " and more" if len(exact or rows) > _CANDIDATES else ""
    raise ConfigurationError(
        f"session id {ident!r} is ambiguous: it matches {', '.join(matches)}{more}; "
        "give more characters"
    )
