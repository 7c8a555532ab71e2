"""Versioned secret redaction, vectorized over polars string columns.

Every pattern is a Rust regex applied with ``str.replace_all`` to a whole column at once.
Replacements never contain quotes or backslashes and patterns never consume a
backslash, so redacting JSON text (tool inputs) keeps it valid JSON.

Changing any pattern is a policy change: bump :data:`POLICY_VERSION` so sources imported
under the old policy are refused as drift instead of silently mixing policies.
"""

from __future__ import annotations

from typing import Final

import polars as pl

POLICY_VERSION: Final = 1

# (class, pattern, replacement). Order matters: specific provider keys before the
# generic assignment and header rules, so the class names the credential precisely.
RULES: Final[tuple[tuple[str, str, str], ...]] = (
    (
        "private-key",
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?s:.*?)(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\z)",
        "[REDACTED:private-key]",
    ),
    ("anthropic-key", r"\bsk-ant-[A-Za-z0-9_\-]{8,}", "[REDACTED:anthropic-key]"),
    ("openai-key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}", "[REDACTED:openai-key]"),
    ("aws-access-key", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", "[REDACTED:aws-access-key]"),
    ("github-token", r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})", "[REDACTED:github-token]"),
    ("slack-token", r"\bxox[abposre]-[A-Za-z0-9\-]{8,}", "[REDACTED:slack-token]"),
    (
        "url-credentials",
        r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/\s:@\\\"']+:[^/\s@\\\"']+@",
        "${1}[REDACTED:url-credentials]@",
    ),
    (
        "authorization",
        r"(?i)\b((?:proxy-)?authorization\s*[:=]\s*(?:bearer|basic|token|digest)?\s*)[A-Za-z0-9._~+/=\-]{6,}",
        "${1}[REDACTED:authorization]",
    ),
    ("bearer", r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=\-]{12,}", "${1}[REDACTED:bearer]"),
    (
        "assignment",
        r"\b([A-Z0-9_]*(?:TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|APIKEY|ACCESS_KEY|PRIVATE_KEY)[A-Z0-9_]*\s*[=:]\s*)(['\"]?)[^\s'\"\\\[][^\s'\"\\]*",
        "${1}${2}[REDACTED:assignment]",
    ),
    (
        "json-secret",
        r"(?i)(\\?\"(?:password|passwd|secret|client_secret|api_key|apikey|access_token|auth_token|refresh_token)\\?\"\s*:\s*\\?\")[^\"\\\[][^\"\\]*",
        "${1}[REDACTED:json-secret]",
    ),
)

# A cheap prefilter: rows matching none of these literals cannot contain a secret.
_TRIGGERS: Final = (
    r"(?i)PRIVATE KEY|sk-|AKIA|ASIA|gh[pousr]_|github_pat_|xox|://|authorization|bearer"
    r"|TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|ACCESS_KEY"
)


def redact(column: pl.Expr) -> pl.Expr:
    """``column`` with every credential the policy knows replaced by
    ``[REDACTED:<class>]``. Nulls stay null."""
    redacted = column
    for _cls, pattern, replacement in RULES:
        redacted = redacted.str.replace_all(pattern, replacement)
    return pl.when(column.str.contains(_TRIGGERS)).then(redacted).otherwise(column)
