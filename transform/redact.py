"""Versioned secret redaction, vectorized over polars string columns.

The rules are data: ``secret_rules.toml`` beside this module lists each class of
credential (private keys, cloud, AI, payment, package-registry, chat-bot and CI tokens,
database URLs and connection strings, JWTs, headers, ``.env`` assignments) with its
pattern, its replacement, the literals that trigger it, an example and a near miss. It is
read once, the first time :func:`redact` is built; :data:`POLICY_VERSION` is a plain
constant, so importing it reads no file and loads no polars.

Every pattern is a Rust regex applied with ``str.replace_all`` to many rows at once. The
same column holds plain text and JSON text (tool inputs, sometimes JSON nested in a JSON
string), so every rule keeps JSON valid:

* replacements never contain quotes or backslashes;
* a rule removes backslashes only in whole escape sequences and never removes an
  unescaped ``"``, so no JSON string loses its end; quotes and escapes around a secret
  are captured and written back unchanged.

Where a rule would need a word boundary (``\\b``), it also accepts a JSON escape of a
newline, tab or carriage return just before the secret (``\\nghp_…`` in JSON text has no
word boundary) and writes that escape back unchanged. Rules run in the file's order,
specific formats before generic ones, so the class names the credential precisely. A
marker never reads as a secret or a secret's name (a name's closing bracket counts only
after a quote, and no value starts with ``[``), so redacting twice changes nothing.

A row runs a rule only if it holds one of the rule's trigger literals (every match of
the rule contains one), so a row pays only for the rules it may need
(:mod:`.secret_rules`).

Changing any rule is a policy change: bump :data:`POLICY_VERSION` so sources imported
under the old policy are refused as drift instead of silently mixing policies.

Version history: 2, the rules per event; 3, webhook URLs, credentials in URL query
strings, and secrets cut across the chunks of a streamed message (:mod:`.streams`); 4,
the rules as data with per-rule triggers, 67 classes (cloud, AI, payment, registry,
chat, CI and observability formats, service-account and PuTTY keys, connection strings,
JWTs, command-line flags, API key headers, string literals in code; in the existing
classes PGP key blocks, URLs with an empty user name or a driver such as cx_oracle, more
``.env`` names, JSON secrets nested twice, no redaction of a marker in a query string).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:  # polars loads with the first redaction, not with the policy
    import polars as pl

    # Read lazily through the module's __getattr__ (the streamed-chunk check uses them):
    # (class, pattern, replacement) of every rule in order, and a regex matching any
    # trigger of any rule.
    RULES: tuple[tuple[str, str, str], ...]
    TRIGGERS: str

POLICY_VERSION: Final = 4


def __getattr__(name: str) -> object:
    """``RULES`` and ``TRIGGERS``, read from the rules file on first use."""
    if name == "RULES":
        from .secret_rules import rules

        return tuple((r.cls, r.pattern, r.replacement) for r in rules())
    if name == "TRIGGERS":
        from .secret_rules import triggers

        return triggers()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def redact(column: pl.Expr) -> pl.Expr:
    """``column`` with every credential the policy knows replaced by
    ``[REDACTED:<class>]``. Nulls stay null."""
    import polars as pl

    from .secret_rules import redactor

    return column.map_batches(redactor(), return_dtype=pl.String, is_elementwise=True)
