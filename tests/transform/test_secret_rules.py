"""The secret rules file (transform/secret_rules.toml) and the engine running it
(transform/secret_rules.py): every class's example becomes its marker in plain text and
in JSON at every depth the policy handles, every near miss comes through unchanged, the
triggers leave out no rule that could match, and the policy version moves with the
rules.

Every credential here is synthetic: the right shape, never a real secret.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import subprocess
import sys
import warnings

import orjson
import polars as pl
import pytest

from agentlake.transform.redact import POLICY_VERSION, TRIGGERS, redact
from agentlake.transform.secret_rules import Rule, parse_rules, redactor, rules

RULES = rules()
IDS = [rule.cls for rule in RULES]

# The digest of the rules (what they match and what a match becomes, in order) under each
# policy version. A change to the rules must bump POLICY_VERSION and add its digest here.
POLICY_DIGESTS = {4: "bbab58e26866c5ebf849eff08119e688cd79cd9ebbb4e1a8662ae614376c388a"}


def apply(texts: list[str | None]) -> list[str | None]:
    """``redact`` over a column holding ``texts``."""
    frame = pl.DataFrame({"t": texts}, schema={"t": pl.String})
    return frame.select(redact(pl.col("t"))).to_series().to_list()


def one(text: str) -> str:
    """``redact`` of a single text."""
    (out,) = apply([text])
    assert out is not None
    return out


def every_rule_everywhere(texts: list[str | None]) -> list[str | None]:
    """The reference: every rule on every row, in order, no triggers."""
    column = pl.col("t")
    for rule in RULES:
        column = column.str.replace_all(rule.pattern, rule.replacement)
    frame = pl.DataFrame({"t": texts}, schema={"t": pl.String})
    return frame.select(column).to_series().to_list()


def in_json(text: str) -> str:
    return orjson.dumps({"content": text}).decode()


def in_nested_json(text: str) -> str:
    return orjson.dumps({"content": orjson.dumps({"value": text}).decode()}).decode()


# -- the file -------------------------------------------------------------------------


def test_the_file_lists_at_least_40_classes_with_unique_names() -> None:
    assert len(RULES) >= 40
    assert len(set(IDS)) == len(IDS)


@pytest.mark.parametrize("rule", RULES, ids=IDS)
def test_every_pattern_compiles_in_both_engines(rule: Rule) -> None:
    """polars (Rust) runs the rules per event; Python's ``re`` runs them across the
    chunks of a streamed message, and must read them without a warning."""
    pl.select(pl.lit("x").str.replace_all(rule.pattern, rule.replacement))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        re.compile(rule.pattern)
    assert rule.replacement.count(rule.marker) == 1
    assert not set(rule.replacement) & {'"', "'", "\\"}


@pytest.mark.parametrize("rule", RULES, ids=IDS)
def test_a_rule_ignoring_case_compares_its_triggers_ignoring_case(rule: Rule) -> None:
    if "(?i" in rule.pattern and any(t.lower() != t.upper() for t in rule.triggers):
        assert rule.ignore_case


@pytest.mark.parametrize("rule", RULES, ids=IDS)
def test_the_trigger_regex_finds_every_trigger(rule: Rule) -> None:
    forms = [rule.triggers]
    if rule.ignore_case:
        forms += [tuple(t.upper() for t in rule.triggers), tuple(t.title() for t in rule.triggers)]
    texts = [f"x {trigger} y" for triggers in forms for trigger in triggers]
    assert pl.Series(texts).str.contains(TRIGGERS).all()


@pytest.mark.parametrize("rule", RULES, ids=IDS)
def test_every_example_holds_a_trigger_and_its_near_miss_is_not_its_example(
    rule: Rule,
) -> None:
    fold = str.lower if rule.ignore_case else str
    assert any(fold(t) in fold(rule.example) for t in rule.triggers)
    assert rule.near_miss != rule.example


# -- examples and near misses ---------------------------------------------------------


@pytest.mark.parametrize("rule", RULES, ids=IDS)
def test_every_example_becomes_its_marker_in_plain_text(rule: Rule) -> None:
    assert rule.marker in rule.redacted
    for context in ("{}", "see {} here", "line one\n{}\nline three"):
        assert one(context.format(rule.example)) == context.format(rule.redacted)


@pytest.mark.parametrize("rule", RULES, ids=IDS)
def test_every_example_becomes_its_marker_in_json(rule: Rule) -> None:
    """In a JSON string, after an escaped newline (no word boundary before the secret),
    and in JSON nested in a JSON string: the JSON stays valid at every level."""
    out = orjson.loads(one(in_json(rule.example)))
    assert out == {"content": rule.redacted}
    out = orjson.loads(one(in_json(f"first line\n{rule.example}\tnext")))
    assert out == {"content": f"first line\n{rule.redacted}\tnext"}
    out = orjson.loads(one(in_nested_json(rule.example)))
    assert orjson.loads(out["content"]) == {"value": rule.redacted}


@pytest.mark.parametrize("rule", RULES, ids=IDS)
def test_every_near_miss_comes_through_unchanged(rule: Rule) -> None:
    texts = [rule.near_miss, f"see {rule.near_miss} here"]
    texts += [in_json(rule.near_miss), in_nested_json(rule.near_miss)]
    assert apply(list(texts)) == texts


# -- the trigger gate -----------------------------------------------------------------


def _texts_mixing_classes() -> list[str | None]:
    examples = [rule.example for rule in RULES]
    texts: list[str | None] = [None, "", "plain prose without any secret"]
    texts += examples + [rule.near_miss for rule in RULES]
    texts += [f"{a} and {b}" for a, b in itertools.pairwise(examples)]
    texts += [in_json(f"{a}\n{b}") for a, b in zip(examples, reversed(examples), strict=True)]
    texts.append(" ".join(examples))
    return texts


def test_the_triggers_leave_out_no_rule_that_could_match() -> None:
    """One batch holding every class, alone, in pairs and in JSON: the same as running
    every rule on every row."""
    texts = _texts_mixing_classes()
    assert apply(texts) == every_rule_everywhere(texts)


def test_a_found_trigger_runs_the_rules_of_triggers_starting_inside_it() -> None:
    """The trigger scan reports ``:A`` (a Telegram bot token's) and skips the ``AIza``
    starting inside it; the Google key is redacted all the same."""
    google = next(rule for rule in RULES if rule.cls == "google-api-key")
    text = f"maps_key:{google.example}"
    assert pl.Series([text]).str.extract_all(TRIGGERS).to_list() == [[":A"]]
    assert one(text) == f"maps_key:{google.redacted}"


def test_a_trigger_inside_a_marker_is_inside_every_trigger_of_its_class() -> None:
    """Markers can bring a trigger into the text; then the class that wrote the marker
    matched text holding that trigger, so every rule it could start was run anyway."""
    for marked in RULES:
        for rule in RULES:
            fold = str.lower if rule.ignore_case else str
            for trigger in rule.triggers:
                if fold(trigger) in fold(marked.marker):
                    assert all(fold(trigger) in fold(t) for t in marked.triggers), (
                        marked.cls,
                        rule.cls,
                        trigger,
                    )


@pytest.mark.parametrize("rule", RULES, ids=IDS)
def test_a_marker_never_starts_another_match(rule: Rule) -> None:
    """A marker followed by what follows a secret's name (a separator and a value) is
    not read as a name: redacting twice changes nothing."""
    value = "XXXXXXXXXXXXXXXX"
    m = rule.marker
    texts = [
        m,
        f"{m}: {value}",
        f"{m}={value}",
        f"{m} = '{value}'",
        f'"{m}": "{value}"',
        f'cfg["{m}"] = "{value}"',
        f"Bearer {m}",
        f"Authorization: {m}",
    ]
    texts += [in_json(t) for t in texts]
    assert apply(list(texts)) == texts


def test_rows_without_a_trigger_skip_every_rule() -> None:
    assert redactor()(pl.Series(["no secret here", None, ""])).to_list() == [
        "no secret here",
        None,
        "",
    ]


def test_an_all_null_column_stays_null() -> None:
    frame = pl.DataFrame({"t": [None, None]})
    assert frame.select(redact(pl.col("t"))).to_series().to_list() == [None, None]


# -- every common database URL --------------------------------------------------------


@pytest.mark.parametrize(
    "scheme",
    [
        "postgres", "postgresql", "postgresql+psycopg2", "postgresql+asyncpg", "mysql",
        "mysql+pymysql", "mariadb", "mongodb", "mongodb+srv", "redis", "rediss", "amqp",
        "amqps", "mssql", "mssql+pyodbc", "sqlserver", "oracle", "oracle+cx_oracle",
        "cockroachdb", "clickhouse", "clickhouse+native", "snowflake", "cassandra",
        "couchdb", "neo4j", "neo4j+s", "bolt", "memcached", "jdbc:postgresql", "jdbc:mysql",
        "sqlite+libsql", "db2", "nats", "kafka", "ldap", "ldaps", "ftp", "sftp", "smtp",
    ],
)  # fmt: skip
def test_a_url_of_every_common_database_or_service_scheme_loses_its_credentials(
    scheme: str,
) -> None:
    text = f"DATABASE_URL={scheme}://app:XXXXXXXXXXXX@db.example.internal:5432/app"
    assert one(text) == (
        f"DATABASE_URL={scheme}://[REDACTED:url-credentials]@db.example.internal:5432/app"
    )
    assert one(f"{scheme}://db.example.internal:5432/app") == (
        f"{scheme}://db.example.internal:5432/app"
    )


def test_a_url_with_only_a_password_loses_it() -> None:
    assert one("redis://:XXXXXXXXXXXX@cache.example.internal:6379/0") == (
        "redis://[REDACTED:url-credentials]@cache.example.internal:6379/0"
    )


# -- the other forms of a class -------------------------------------------------------

X = "X"
OTHER_FORMS: list[tuple[str, str, str]] = [
    # (class, text, what it becomes)
    ("private-key", "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n" + X * 40 + "\n=XXXX\n"
     "-----END PGP PRIVATE KEY BLOCK-----", "[REDACTED:private-key]"),
    ("private-key", "-----BEGIN ENCRYPTED PRIVATE KEY-----\n" + X * 40, "[REDACTED:private-key]"),
    ("putty-private-key", "Private-Lines: 2\n" + X * 64 + "\n" + X * 20 + "\nthanks",
     "[REDACTED:putty-private-key]\nthanks"),
    ("google-oauth-token", "refresh: 1//0" + X * 60, "refresh: [REDACTED:google-oauth-token]"),
    ("azure-storage-key", "az storage blob list --account-key " + X * 86 + "==",
     "az storage blob list --account-key [REDACTED:azure-storage-key]"),
    ("aws-secret-key", '{"AccessKeyId": "ASIAXXXXXXXXXXXXXXXX", "SecretAccessKey": "' + X * 40
     + '"}', '{"AccessKeyId": "[REDACTED:aws-access-key]", "SecretAccessKey": '
     '"[REDACTED:aws-secret-key]"}'),
    ("stripe-key", "rk_live_" + X * 24, "[REDACTED:stripe-key]"),
    ("gitlab-token", "GR1348941" + X * 20, "[REDACTED:gitlab-token]"),
    ("gitlab-token", "glpat-" + X * 27 + ".01" + "0" * 7, "[REDACTED:gitlab-token]"),
    ("npm-token", "//registry.npmjs.org/:_authToken=" + X * 20,
     "//registry.npmjs.org/:_authToken=[REDACTED:npm-token]"),
    ("npm-token", "registry=https://registry.example.com/\n_auth=" + X * 20,
     "registry=https://registry.example.com/\n_auth=[REDACTED:npm-token]"),
    ("huggingface-token", "api_org_" + X * 34, "[REDACTED:huggingface-token]"),
    ("slack-token", "xapp-1-A0000000000-0000000000000-" + "0" * 64, "[REDACTED:slack-token]"),
    ("discord-bot-token", "client.run('ODAwMDAwMDAwMDAwMDAwMDAw.XXXXXX." + X * 27 + "')",
     "client.run('[REDACTED:discord-bot-token]')"),
    ("sentry-token", "sntrys_eyJ" + X * 60, "[REDACTED:sentry-token]"),
    ("grafana-token", "glc_" + X * 40 + "==", "[REDACTED:grafana-token]"),
    ("notion-token", "secret_" + X * 43, "[REDACTED:notion-token]"),
    ("supabase-token", "sb_secret_" + X * 30, "[REDACTED:supabase-token]"),
    ("atlassian-token", "ATATT3" + X * 186, "[REDACTED:atlassian-token]"),
    ("connection-string-password", "psql 'host=db.example.internal user=app password="
     + X * 12 + " dbname=app'", "psql 'host=db.example.internal user=app password="
     "[REDACTED:connection-string-password] dbname=app'"),
    ("cli-flag-secret", "vault login --token " + X * 20, "vault login --token [REDACTED:cli-flag-secret]"),
    ("cli-flag-secret", "psql --password 'correct horse battery'",
     "psql --password '[REDACTED:cli-flag-secret]'"),
    ("cli-flag-secret", "heroku login --api-key 1a2b3c4d", "heroku login --api-key [REDACTED:cli-flag-secret]"),
    ("cli-flag-secret", "app serve --secret " + X * 16, "app serve --secret [REDACTED:cli-flag-secret]"),
    ("api-key-header", '{"headers": {"api-key": "' + X * 32 + '"}}',
     '{"headers": {"api-key": "[REDACTED:api-key-header]"}}'),
    ("api-key-header", "curl -H 'x-goog-api-key: " + X * 39 + "'",
     "curl -H 'x-goog-api-key: [REDACTED:api-key-header]'"),
    ("assignment", "APP_KEY=base64:" + X * 44, "APP_KEY=[REDACTED:assignment]"),
    ("assignment", "export DB_PASS=" + X * 12, "export DB_PASS=[REDACTED:assignment]"),
    ("assignment", 'SECRET_KEY="correct horse battery staple"  # .env',
     'SECRET_KEY="[REDACTED:assignment]"  # .env'),
    ("secret-literal", "client = Client(api_key='" + X * 24 + "')",
     "client = Client(api_key='[REDACTED:secret-literal]')"),
    ("secret-literal", "password: 'correct horse battery staple'",
     "password: '[REDACTED:secret-literal]'"),
    ("secret-literal", "config['db_password'] = \"" + X * 12 + '"',
     "config['db_password'] = \"[REDACTED:secret-literal]\""),
]  # fmt: skip


@pytest.mark.parametrize(
    ("cls", "text", "expected"),
    OTHER_FORMS,
    ids=[f"{c}-{i}" for i, (c, _, _) in enumerate(OTHER_FORMS)],
)
def test_the_other_forms_of_a_class(cls: str, text: str, expected: str) -> None:
    assert f"[REDACTED:{cls}]" in expected
    assert one(text) == expected
    assert orjson.loads(one(in_json(text))) == {"content": expected}


@pytest.mark.parametrize(
    "text",
    [
        "password = get_password()",
        'password = ""',
        "password = '${DB_PASSWORD}'",
        "if password == 'admin':",
        "--password-file /run/secrets/db",
        "docker login --password-stdin",
        "PWD=/home/example/project",
        "OLDPWD=/tmp",
        "GOOGLE_APPLICATION_CREDENTIALS=/path/to/key.json",
        'curl -H "Authorization: Bearer $TOKEN" https://api.example.com',
        "mysql -u root --password",
        "https://example.com/page?session=1&sort=asc",
        "the Authorization header and the X-API-Key header",
        "sk_test_ keys are for test mode",
        'print("Password: ", password)',
        '{"label": "Password:", "type": "password"}',
        "raise ValueError('api_key: must not be empty')",
        "conn = connect(proxy_auth=proxy_auth)",
        "connect(host=host, port=port, user=user, password=password)",
        'creds = " --username=%s --password=%s" % (user, pw)',
        "pass the --token flag, or the --password option",
        "pk_live_" + "X" * 24,
    ],
)
def test_text_naming_secrets_without_one_is_unchanged(text: str) -> None:
    assert one(text) == text


# -- the file's loader ----------------------------------------------------------------

_MINIMAL = """
[[rule]]
class = "demo"
pattern = 'demo_[0-9]+'
triggers = ["demo_"]
example = "demo_1"
near_miss = "demo"
"""


def test_a_minimal_rules_text_parses() -> None:
    (rule,) = parse_rules(_MINIMAL)
    assert rule.replacement == "[REDACTED:demo]" and rule.redacted == "[REDACTED:demo]"
    assert not rule.ignore_case


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("replacement = '\"[REDACTED]'", "no quote or backslash"),
        ("replacement = 'x'", "once"),
        ("trigger = ['demo_']", "unknown key"),
        ("pattern = '{{NOWHERE}}'", "unknown fragment"),
        ("triggers = []", "triggers"),
        ("triggers = ['d\u00e9mo']", "ASCII"),
    ],
)
def test_a_bad_rules_text_is_refused(change: str, message: str) -> None:
    key = change.split(" =")[0]
    lines = [line for line in _MINIMAL.splitlines() if not line.startswith(f"{key} =")]
    with pytest.raises(ValueError, match=message):
        parse_rules("\n".join([*lines, change]))


def test_a_class_named_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="repeat"):
        parse_rules(_MINIMAL + _MINIMAL)


def test_a_rule_missing_its_example_is_refused() -> None:
    with pytest.raises(ValueError, match="missing"):
        parse_rules(_MINIMAL.replace('example = "demo_1"\n', ""))


# -- the policy version ---------------------------------------------------------------


def test_the_rules_are_pinned_to_the_policy_version() -> None:
    """Sources imported under one policy are refused as drift under another; a rule
    changed without a new version would mix policies in one catalog."""
    meaning = [(r.cls, r.pattern, r.replacement) for r in RULES]  # triggers only speed up
    digest = hashlib.sha256(json.dumps(meaning).encode()).hexdigest()
    assert POLICY_DIGESTS.get(POLICY_VERSION) == digest, (
        f"the rules changed: bump POLICY_VERSION and pin {digest} to it"
    )


def test_the_policy_version_loads_no_rules_and_no_polars() -> None:
    """The CLI reads POLICY_VERSION on every run: it must cost no file and no polars."""
    code = (
        "import sys\n"
        "from agentlake.transform.redact import POLICY_VERSION\n"
        "assert isinstance(POLICY_VERSION, int)\n"
        "loaded = {'polars', 'tomllib', 'agentlake.transform.secret_rules'} & set(sys.modules)\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
