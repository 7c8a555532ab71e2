"""Versioned secret redaction, vectorized over polars string columns.

Every pattern is a Rust regex applied with ``str.replace_all`` to a whole column at once.
The same column holds plain text and JSON text (tool inputs, sometimes JSON nested in a
JSON string), so every rule keeps JSON valid:

* replacements never contain quotes or backslashes;
* a rule removes backslashes only in whole escape sequences and never removes an
  unescaped ``"``, so no JSON string loses its end; quotes and escapes around a secret
  are captured and written back unchanged.

Where a rule would need a word boundary (``\\b``), it also accepts a JSON escape of a
newline, tab or carriage return just before the secret (``\\nghp_…`` in JSON text has no
word boundary) and writes that escape back unchanged.

Changing any pattern is a policy change: bump :data:`POLICY_VERSION` so sources imported
under the old policy are refused as drift instead of silently mixing policies.

Version history: 2, the rules per event; 3, webhook URLs, credentials in URL query
strings, and secrets cut across the chunks of a streamed message (:mod:`.streams`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:  # polars loads with the first redaction, not with the policy
    import polars as pl

POLICY_VERSION: Final = 3

# A word boundary, or a JSON-escaped newline/tab/CR captured as group 1 to write back.
_B: Final = r"(?:\b|(\\[nrt]))"

# A name/value separator: ``:`` or ``=``, allowing the closing quote of a JSON/Python key
# and an index bracket before it, and an opening quote after. A quote may be escaped at
# any depth of JSON nesting (``\"``, ``\\\"``); it is captured and written back whole.
_Q: Final = r"(?:(?:\\\\)*\\?[\"'])?"
_SEP: Final = _Q + r"\]?\s*[:=]\s*" + _Q

# Characters of an HTTP credential (token68, base64, JWT).
_CRED: Final = r"[A-Za-z0-9._~+/=\-]"

# One escape sequence of JSON nested in a JSON string: ``\\\\`` or ``\\\"`` (an escaped
# backslash or quote of the nested JSON), ``\\n`` (a nested escape), ``\n`` (an outer one).
# Read this way, plain JSON text is cut only between whole escape sequences too.
_NESTED_ESCAPE: Final = r"\\\\\\[\\\"]|\\\\[^\\\"]|\\[^\\\"]"

# JSON keys whose string value is a secret.
_SECRET_KEYS: Final = (
    r"(?:password|passwd|secret|client_secret|api_key|apikey|access_token|auth_token"
    r"|refresh_token)"
)

# (class, pattern, replacement). Order matters: specific provider keys before the
# generic assignment and header rules, so the class names the credential precisely.
RULES: Final[tuple[tuple[str, str, str], ...]] = (
    (
        # The body ends at its END line, at any other run of five dashes, at a quote
        # (the end of a JSON string, ``\"`` in JSON nested in a JSON string) or at the
        # end of the text, so a key cut short in JSON text stops at its string's end.
        "private-key",
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----"
        r"(?:-{0,4}(?:[^\"\\\-]|" + _NESTED_ESCAPE + "))*"
        r"(?:-----END [A-Z0-9 ]*PRIVATE KEY-----)?",
        "[REDACTED:private-key]",
    ),
    ("anthropic-key", _B + r"sk-ant-[A-Za-z0-9_\-]{8,}", "${1}[REDACTED:anthropic-key]"),
    (
        "openai-key",
        _B + r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}",
        "${1}[REDACTED:openai-key]",
    ),
    ("aws-access-key", _B + r"(?:AKIA|ASIA)[0-9A-Z]{16}\b", "${1}[REDACTED:aws-access-key]"),
    # Prefixes distinctive enough to need no word boundary at all.
    (
        "github-token",
        r"(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})",
        "[REDACTED:github-token]",
    ),
    ("slack-token", r"xox[abposre]-[A-Za-z0-9\-]{8,}", "[REDACTED:slack-token]"),
    (
        # user:password@ up to the last '@' of the authority, so a password holding
        # an '@' is redacted whole; the URL ends at '/', '?', '#', space, quote, '\'.
        "url-credentials",
        r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/?#\s:\\\"']+:[^/?#\s\\\"']+@",
        "${1}[REDACTED:url-credentials]@",
    ),
    (
        # A webhook's secret lives in its URL path (Slack, Discord, a Telegram bot token):
        # the path after the fixed prefix, up to a space, quote, backslash, '?' or '#'.
        "webhook-url",
        r"(?i)(https?://(?:hooks\.slack\.com/(?:services|workflows|triggers)/"
        r"|(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/|api\.telegram\.org/bot))"
        r"[A-Za-z0-9_:/\-]+",
        "${1}[REDACTED:webhook-url]",
    ),
    (
        # A credential passed in a URL's query string (?access_token=, &key=, a signed
        # URL's signature): the value up to '&', '#', a space, quote or backslash.
        "url-query-secret",
        r"(?i)([?&](?:access_token|auth_token|id_token|refresh_token|token|api_key|apikey"
        r"|key|secret|client_secret|password|passwd|sig|signature|x-amz-signature"
        r"|x-amz-security-token|x-amz-credential|x-goog-signature|x-goog-credential)=)"
        r"[^&#\s\\\"']+",
        "${1}[REDACTED:url-query-secret]",
    ),
    (
        # Header name, separator (plain, JSON, escaped JSON, Python), then either a
        # scheme word and its credential, or a bare credential long enough never to be
        # a scheme word — so "Bearer" itself is never taken for the credential.
        "authorization",
        r"(?i)((?:proxy-)?authorization"
        + _SEP
        + ")"
        + r"(?:((?:bearer|basic|token|digest|negotiate|ntlm)\s+)"
        + _CRED
        + "+"
        + "|"
        + _CRED
        + "{10,})",
        "${1}${2}[REDACTED:authorization]",
    ),
    ("bearer", r"(?i)((?:\b|\\[nrt])bearer\s+)" + _CRED + "{12,}", "${1}[REDACTED:bearer]"),
    (
        # NAME=value where NAME ends in a secret word: the match starts at that word,
        # which must be followed by the separator (MAX_TOKENS, TOKEN_COUNT are not
        # secrets). The name may be a JSON key; the value may sit in quotes, JSON-escaped
        # quotes included, and ends at a space, quote or backslash.
        "assignment",
        r"((?:TOKEN|SECRET(?:_KEY)?|PASSWORD|PASSWD|API_?KEY|ACCESS_KEY|PRIVATE_KEY)"
        + _SEP
        + r")[^\s'\"\\\[][^\s'\"\\]*",
        "${1}[REDACTED:assignment]",
    ),
    (
        # A secret-named JSON string value, redacted whole up to its closing quote.
        # Second form: JSON nested in a JSON string, where the quotes are escaped (\")
        # and the nested escapes are doubled (\\\" is an escaped quote inside the value).
        "json-secret",
        r"(?i)(\""
        + _SECRET_KEYS
        + r"\"\s*:\s*\")(?:[^\"\\\[]|\\.)(?:[^\"\\]|\\.)*"
        + r"|(\\\""
        + _SECRET_KEYS
        + r"\\\"\s*:\s*\\\")"
        + r"(?:[^\"\\\[]|"
        + _NESTED_ESCAPE
        + r")(?:[^\"\\]|"
        + _NESTED_ESCAPE
        + ")*",
        "${1}${2}[REDACTED:json-secret]",
    ),
)

# A cheap prefilter: rows matching none of these literals cannot contain a secret (every
# rule needs one of them).
TRIGGERS: Final = (
    r"(?i)PRIVATE[ _]KEY|sk-|AKIA|ASIA|gh[pousr]_|github_pat_|xox|://|authorization|bearer"
    r"|TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|ACCESS_KEY|[?&](?:key|sig|x-amz-|x-goog-)"
)


def redact(column: pl.Expr) -> pl.Expr:
    """``column`` with every credential the policy knows replaced by
    ``[REDACTED:<class>]``. Nulls stay null."""
    import polars as pl

    redacted = column
    for _cls, pattern, replacement in RULES:
        redacted = redacted.str.replace_all(pattern, replacement)
    return pl.when(column.str.contains(TRIGGERS)).then(redacted).otherwise(column)
