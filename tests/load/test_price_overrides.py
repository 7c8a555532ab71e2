"""User price overrides (load/prices.py, sql/008_price_overrides.sql) and refreshing the
price snapshot from the network."""

from __future__ import annotations

import dataclasses
import hashlib
import http.server
import socket
import threading
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest
from genai_prices.data_snapshot import DataSnapshot

from agentlake import sql
from agentlake.errors import ConfigurationError
from agentlake.load.catalog import open_for_read, open_for_write, run_script
from agentlake.load.price_overrides import (
    PriceOverrides,
    apply_price_overrides,
    load_price_overrides,
)
from agentlake.load.prices import (
    build_snapshot,
    refresh_prices,
    refresh_prices_from,
    snapshot_version,
)
from tests.load.test_prices import add_call, cost

M = 1_000_000

FULL = """
[models."my-private-model"]
input = 1.25
output = 10.0
cache_read = 0.125
cache_write = 1.5625
cache_write_1h = 2.5
"""


def price_file(tmp_path: Path, text: str, name: str = "prices.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def overrides(tmp_path: Path, text: str) -> PriceOverrides:
    return load_price_overrides(price_file(tmp_path, text))


@pytest.fixture
def con(tmp_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    with open_for_write(tmp_path / "c.duckdb") as connection:
        yield connection


def catalog_rows(con: duckdb.DuckDBPyConnection, query: str) -> list[tuple[object, ...]]:
    """``query`` with ``{prices}`` / ``{aliases}`` naming the catalog's own tables."""
    db = con.execute("SELECT current_database()").fetchone()
    assert db is not None
    text = query.format(prices=f'"{db[0]}".main.prices', aliases=f'"{db[0]}".main.price_aliases')
    return con.execute(text).fetchall()


# -- pricing ----------------------------------------------------------------------------


def test_unknown_model_gets_exactly_the_file_rates(
    con: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    calls = {
        "input": add_call(con, "my-private-model", input=M),
        "output": add_call(con, "my-private-model", output=M),
        "cache_read": add_call(con, "my-private-model", cache_read=M),
        "cache_write_5m": add_call(con, "my-private-model", cache_write=M),
        "cache_write_1h": add_call(con, "my-private-model", cache_write=M, cache_write_1h=M),
    }
    assert cost(con, calls["input"]) is None
    apply_price_overrides(con, overrides(tmp_path, FULL))
    got = {kind: cost(con, call) for kind, call in calls.items()}
    assert got == {
        "input": pytest.approx(1.25),
        "output": pytest.approx(10.0),
        "cache_read": pytest.approx(0.125),
        "cache_write_5m": pytest.approx(1.5625),
        "cache_write_1h": pytest.approx(2.5),
    }


def test_omitted_cache_rates_default_to_input_and_twice_input(
    con: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    read = add_call(con, "bare", cache_read=M)
    write = add_call(con, "bare", cache_write=M)
    write_1h = add_call(con, "bare", cache_write=M, cache_write_1h=M)
    apply_price_overrides(con, overrides(tmp_path, "[models.bare]\ninput = 3\noutput = 7\n"))
    assert cost(con, read) == pytest.approx(3.0)
    assert cost(con, write) == pytest.approx(3.0)
    assert cost(con, write_1h) == pytest.approx(6.0)


def test_override_of_a_known_model_beats_the_snapshots_exact_dated_alias(
    con: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    raw = "gpt-5-2025-08-07"
    # The snapshot names the dated id itself, so it is the best snapshot match of the raw
    # name, while the user's key only matches the normalized name.
    assert catalog_rows(con, f"SELECT kind, model FROM {{aliases}} WHERE alias = '{raw}'") == [
        ("exact", "gpt-5")
    ]
    call = add_call(con, raw.upper(), input=1000, output=1000)
    assert cost(con, call) == pytest.approx((1000 * 1.25 + 1000 * 10) / M)
    apply_price_overrides(con, overrides(tmp_path, '[models."GPT-5"]\ninput = 1\noutput = 2\n'))
    assert cost(con, call) == pytest.approx((1000 * 1 + 1000 * 2) / M)
    # Another snapshot model is untouched.
    other = add_call(con, "claude-sonnet-4-5", input=1000)
    assert cost(con, other) == pytest.approx(1000 * 3 / M)


def test_prefix_keys_match_every_name_starting_with_them(
    con: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    text = """
[models."acme-"]
input = 1
output = 1
match = "prefix"

[models."acme-large"]
input = 5
output = 5
match = "prefix"

[models."gpt-5"]
input = 7
output = 7
match = "prefix"
"""
    small = add_call(con, "ACME-small", input=M)
    large = add_call(con, "acme-large-v2", input=M)
    apart = add_call(con, "acm", input=M)
    # The snapshot lists gpt-5-codex exactly; the user's prefix still wins.
    codex = add_call(con, "gpt-5-codex", input=M)
    apply_price_overrides(con, overrides(tmp_path, text))
    assert cost(con, small) == pytest.approx(1.0)
    assert cost(con, large) == pytest.approx(5.0)  # the longest key wins
    assert cost(con, apart) is None
    assert cost(con, codex) == pytest.approx(7.0)


def test_an_exact_key_beats_a_prefix_key(con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    text = """
[models."acme"]
input = 1
output = 1
match = "prefix"

[models."acme-pro"]
input = 4
output = 4
"""
    pro = add_call(con, "acme-pro", input=M)
    pro_mini = add_call(con, "acme-pro-mini", input=M)
    apply_price_overrides(con, overrides(tmp_path, text))
    assert cost(con, pro) == pytest.approx(4.0)
    assert cost(con, pro_mini) == pytest.approx(1.0)


def test_since_entries_give_price_periods(con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    text = """
[[models."house-model"]]
input = 1
output = 1
since = 2026-01-01

[[models."house-model"]]
input = 2
output = 2
since = 2025-06-01

[[models."house-model"]]
input = 3
output = 3
"""
    calls = [
        add_call(con, "house-model", ts=ts, input=M)
        for ts in (
            "2025-05-31 23:59:59+00",
            "2025-06-01 00:00:00+00",
            "2025-12-31 23:59:59+00",
            "2026-01-01 00:00:00+00",
        )
    ]
    apply_price_overrides(con, overrides(tmp_path, text))
    assert [cost(con, c) for c in calls] == [
        pytest.approx(3.0),
        pytest.approx(2.0),
        pytest.approx(2.0),
        pytest.approx(1.0),
    ]


def test_before_the_first_since_the_snapshot_price_applies(
    con: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    text = """
[models."gpt-5"]
input = 100
output = 100
since = 2025-09-01

[models."house-model"]
input = 1
output = 1
since = 2025-09-01
"""
    before = add_call(con, "gpt-5-2025-08-07", ts="2025-08-31 23:59:59+00", input=M)
    after = add_call(con, "gpt-5-2025-08-07", ts="2025-09-01 00:00:00+00", input=M)
    private_before = add_call(con, "house-model", ts="2025-08-31 12:00:00+00", input=M)
    apply_price_overrides(con, overrides(tmp_path, text))
    assert cost(con, before) == pytest.approx(1.25)  # the snapshot's gpt-5
    assert cost(con, after) == pytest.approx(100.0)
    assert cost(con, private_before) is None  # no price at all before its since


def test_usage_daily_sums_the_overridden_costs(
    con: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    add_call(con, "my-private-model", input=M)
    add_call(con, "my-private-model", output=M)
    apply_price_overrides(con, overrides(tmp_path, FULL))
    row = con.execute(
        "SELECT cost_usd FROM usage_daily WHERE model = 'my-private-model'"
    ).fetchone()
    assert row is not None and row[0] == pytest.approx(11.25)


def test_applying_again_replaces_the_previous_overrides(
    con: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    first = add_call(con, "my-private-model", input=M)
    second = add_call(con, "other-model", input=M)
    apply_price_overrides(con, overrides(tmp_path, FULL))
    apply_price_overrides(con, overrides(tmp_path, "[models.other-model]\ninput = 9\noutput = 9\n"))
    assert cost(con, first) is None
    assert cost(con, second) == pytest.approx(9.0)
    assert (
        catalog_rows(con, "SELECT count(*) FROM {prices}")
        == con.execute("SELECT count(*) - 1 FROM prices").fetchall()
    )


# -- the catalog stays untouched --------------------------------------------------------


def _fingerprint(path: Path) -> tuple[str, int]:
    return hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns


def test_overrides_do_not_write_the_catalog(tmp_path: Path) -> None:
    catalog = tmp_path / "c.duckdb"
    with open_for_write(catalog) as con:
        call = add_call(con, "my-private-model", input=M)
    before = _fingerprint(catalog)
    with open_for_read(catalog) as con:
        apply_price_overrides(con, overrides(tmp_path, FULL))
        assert cost(con, call) == pytest.approx(1.25)
    assert _fingerprint(catalog) == before
    assert not catalog.with_name(catalog.name + ".wal").exists()
    with open_for_read(catalog) as con:
        assert cost(con, call) is None  # nothing persisted
        assert con.execute("SELECT count(*) FROM prices WHERE provider_id = 'user'").fetchone() == (
            0,
        )


def test_overrides_on_a_write_connection_are_not_persisted(tmp_path: Path) -> None:
    catalog = tmp_path / "c.duckdb"
    with open_for_write(catalog) as con:
        call = add_call(con, "my-private-model", input=M)
        apply_price_overrides(con, overrides(tmp_path, FULL))
        assert cost(con, call) == pytest.approx(1.25)
    with open_for_read(catalog) as con:
        assert cost(con, call) is None


def test_a_refresh_under_overrides_writes_the_catalogs_tables(
    con: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    call = add_call(con, "my-private-model", input=M)
    apply_price_overrides(con, overrides(tmp_path, FULL))
    con.execute("UPDATE prices SET snapshot_version = 'stale'")  # the TEMP copy only
    catalog_rows(con, "UPDATE {prices} SET snapshot_version = 'old'")
    assert refresh_prices(con) is True
    assert catalog_rows(con, "SELECT DISTINCT snapshot_version FROM {prices}") == [
        (snapshot_version(),)
    ]
    assert catalog_rows(con, "SELECT count(*) FROM {prices} WHERE provider_id = 'user'") == [(0,)]
    assert cost(con, call) == pytest.approx(1.25)  # the overrides are still in force


def test_a_version_7_catalog_marks_its_snapshot_rows_bundled(tmp_path: Path) -> None:
    catalog = tmp_path / "c.duckdb"
    con = duckdb.connect(str(catalog))
    for version, name, text in sql.migrations():
        if version > 7:
            break
        run_script(con, text, {"random_secret": "0" * 64})
        con.execute("INSERT INTO schema_version (version, name) VALUES (?, ?)", [version, name])
    con.execute(
        "INSERT INTO prices (model, provider_id, input_per_mtok, snapshot_version) "
        "VALUES ('m', 'p', 1, ?)",
        [snapshot_version()],
    )
    con.close()
    with open_for_write(catalog) as con:
        rows = con.execute(
            "SELECT model, snapshot_source FROM prices WHERE provider_id = 'p'"
        ).fetchall()
    assert rows == [("m", "bundled")]


# -- the file format --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "key", "expected"),
    [
        ('[models."m"]\ninput = \n', None, "line 2"),
        ('[models."m"]\ninput = 1\noutput = 2\ninptu = 3\n', '"m"', "unknown key 'inptu'"),
        ('[models."m"]\ninput = -1\noutput = 2\n', '"m"', "input = -1 is not a price"),
        ('[models."m"]\ninput = "1.25"\noutput = 2\n', '"m"', 'input = "1.25" is not a price'),
        ('[models."m"]\ninput = 1\noutput = true\n', '"m"', "output = true is not a price"),
        ('[models."m"]\ninput = 1\noutput = nan\n', '"m"', "output = nan is not a price"),
        (
            '[models."m"]\ninput = 1\noutput = 2\ncache_read = -0.1\n',
            '"m"',
            "cache_read = -0.1 is not a price",
        ),
        ('[models."m"]\noutput = 2\n', '"m"', "missing input"),
        ('[models."m"]\ninput = 1\n', '"m"', "missing output"),
        (
            '[models."m"]\ninput = 1\noutput = 2\nmatch = "regex"\n',
            '"m"',
            'write match = "exact" or match = "prefix"',
        ),
        (
            '[models."m"]\ninput = 1\noutput = 2\nsince = "2025-06-01"\n',
            '"m"',
            'since = "2025-06-01" is not a date',
        ),
        (
            '[models."m"]\ninput = 1\noutput = 2\nsince = 2025-06-01T10:00:00\n',
            '"m"',
            "since = 2025-06-01T10:00:00 is not a date",
        ),
        ("[models]\nm = 3\n", '"m"', "expected a table"),
        (
            '[[models."m"]]\ninput = 1\noutput = 2\nsince = 2025-06-01\n'
            '[[models."m"]]\ninput = 1\noutput = 2\nsince = 2025-06-01\n',
            '"m"',
            "two entries with since = 2025-06-01",
        ),
        (
            '[[models."m"]]\ninput = 1\noutput = 2\n'
            '[[models."m"]]\ninput = 1\noutput = 2\nmatch = "prefix"\nsince = 2025-06-01\n',
            '"m"',
            "mix match kinds",
        ),
        (
            '[models."GPT-X"]\ninput = 1\noutput = 2\n[models."gpt-x"]\ninput = 1\noutput = 2\n',
            '"gpt-x"',
            "case-insensitive",
        ),
        ('[models." "]\ninput = 1\noutput = 2\n', '" "', "empty model name"),
        ("[model.m]\ninput = 1\noutput = 2\n", "'model'", "unknown key"),
    ],
)
def test_invalid_price_files_are_one_line_configuration_errors(
    tmp_path: Path, text: str, key: str | None, expected: str
) -> None:
    path = price_file(tmp_path, text)
    with pytest.raises(ConfigurationError) as caught:
        load_price_overrides(path)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: ")
    assert expected in message
    if key is not None:
        assert key in message
    assert ";" in message  # the remedy follows the problem


@pytest.mark.parametrize("kind", ["missing", "directory", "not-utf8"])
def test_unreadable_price_files_are_configuration_errors(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "prices.toml"
    if kind == "directory":
        path.mkdir()
    elif kind == "not-utf8":
        path.write_bytes(b'[models."m"]\ninput = 1\noutput = 2\n# \xff\xfe\n')
    with pytest.raises(ConfigurationError) as caught:
        load_price_overrides(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and "\n" not in message and ";" in message


def test_the_digest_follows_the_content_not_the_layout(tmp_path: Path) -> None:
    a = overrides(tmp_path, '[models."x"]\ninput = 1\noutput = 2\n')
    b = load_price_overrides(
        price_file(tmp_path, '# prices\n[models."X"]\noutput = 2.0\ninput = 1.0\n', "b.toml")
    )
    c = load_price_overrides(
        price_file(tmp_path, '[models."x"]\ninput = 1\noutput = 3\n', "c.toml")
    )
    assert a.digest == b.digest
    assert a.digest != c.digest
    assert (a.path, a.files, a.models) == (tmp_path / "prices.toml", (a.path,), ("x",))


def test_merged_overrides_let_the_later_ones_win(tmp_path: Path) -> None:
    base = overrides(
        tmp_path, "[models.a]\ninput = 1\noutput = 1\n[models.b]\ninput = 1\noutput = 1\n"
    )
    top = load_price_overrides(
        price_file(
            tmp_path,
            "[models.b]\ninput = 5\noutput = 5\n[models.c]\ninput = 6\noutput = 6\n",
            "t.toml",
        )
    )
    merged = base.merged(top)
    assert merged.models == ("a", "b", "c")
    inputs = {r["model"]: r["input_per_mtok"] for r in merged.prices.to_pylist()}
    assert inputs == {"a": 1.0, "b": 5.0, "c": 6.0}
    assert merged.aliases.num_rows == 3
    assert merged.files == (base.path, top.path) and merged.path == top.path
    assert merged.digest not in (base.digest, top.digest)


# -- refreshing the snapshot ------------------------------------------------------------


def _closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/data.json"


@pytest.fixture
def feed() -> Iterator[str]:
    """A local price feed that answers every request with HTTP 500."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(500)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/data.json"
    finally:
        server.shutdown()
        server.server_close()


def _price_table(con: duckdb.DuckDBPyConnection) -> list[tuple[object, ...]]:
    return con.execute(
        "SELECT provider_id, model, CAST(valid_from AS VARCHAR), input_per_mtok, "
        "output_per_mtok, snapshot FROM prices ORDER BY ALL"
    ).fetchall()


def test_an_unreachable_network_keeps_the_prices_and_says_so(
    con: duckdb.DuckDBPyConnection,
) -> None:
    before = _price_table(con)
    result = refresh_prices_from(con, network=True, timeout=3.0, url=_closed_port_url())
    assert result.refreshed is False
    assert result.source == "bundled"
    assert "network was unreachable" in result.message
    assert f"bundled genai-prices snapshot (version {snapshot_version()}) stays in force" in (
        result.message
    )
    assert "\n" not in result.message
    assert result.rows == len(before) and result.models > 100
    assert _price_table(con) == before


def test_a_failing_price_feed_keeps_the_prices(con: duckdb.DuckDBPyConnection, feed: str) -> None:
    before = _price_table(con)
    result = refresh_prices_from(con, network=True, timeout=3.0, url=feed)
    assert result.refreshed is False
    assert "HTTP 500" in result.message and "stays in force" in result.message
    assert _price_table(con) == before


def _feed_with_gpt5_input(price: str) -> DataSnapshot:
    """A DataSnapshot like a fetched one: the bundled providers, gpt-5's input changed."""
    from genai_prices.data import providers
    from genai_prices.types import ModelPrice

    changed = []
    for provider in providers:
        if provider.id == "openai":
            models = []
            for model in provider.models:
                if model.id == "gpt-5":
                    assert isinstance(model.prices, ModelPrice)
                    values = {k: v for k, v in vars(model.prices).items() if not k.startswith("_")}
                    values["input_mtok"] = Decimal(price)
                    model = dataclasses.replace(model, prices=ModelPrice(**values))
                models.append(model)
            provider = dataclasses.replace(provider, models=models)
        changed.append(provider)
    return DataSnapshot(providers=changed, from_auto_update=True)


def test_a_fetched_snapshot_is_not_reverted_by_the_version_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from genai_prices.update_prices import UpdatePrices

    monkeypatch.setattr(UpdatePrices, "fetch", lambda self: _feed_with_gpt5_input("9.99"))
    catalog = tmp_path / "c.duckdb"
    with open_for_write(catalog) as con:
        call = add_call(con, "gpt-5", input=M)
        assert cost(con, call) == pytest.approx(1.25)
        result = refresh_prices_from(con, network=True)
        assert (result.source, result.refreshed, result.package_version) == (
            "fetched",
            True,
            snapshot_version(),
        )
        assert "(fetched " in result.label
        assert cost(con, call) == pytest.approx(9.99)
    with open_for_write(catalog) as con:  # the automatic refresh runs here
        assert cost(con, call) == pytest.approx(9.99)
        assert refresh_prices(con) is False
        assert con.execute(
            "SELECT DISTINCT snapshot_version, snapshot_source, snapshot FROM prices"
        ).fetchall() == [(snapshot_version(), "fetched", result.label)]
        # A failed fetch now keeps the fetched prices and names them.
        monkeypatch.undo()
        failed = refresh_prices_from(con, network=True, timeout=3.0, url=_closed_port_url())
        assert failed.source == "fetched" and failed.refreshed is False
        assert f"the {result.label} prices stay in force" in failed.message
        assert cost(con, call) == pytest.approx(9.99)
        # Back to the bundled snapshot on request.
        bundled = refresh_prices_from(con, network=False)
        assert (bundled.source, bundled.refreshed) == ("bundled", True)
        assert cost(con, call) == pytest.approx(1.25)


def test_a_package_upgrade_replaces_a_fetched_snapshot(
    con: duckdb.DuckDBPyConnection, monkeypatch: pytest.MonkeyPatch
) -> None:
    from genai_prices.update_prices import UpdatePrices

    monkeypatch.setattr(UpdatePrices, "fetch", lambda self: _feed_with_gpt5_input("9.99"))
    refresh_prices_from(con, network=True)
    con.execute("UPDATE prices SET snapshot_version = '0.0.1'")  # fetched under an old package
    assert refresh_prices(con) is True
    assert con.execute("SELECT DISTINCT snapshot_source FROM prices").fetchall() == [("bundled",)]


def test_build_snapshot_takes_the_providers() -> None:
    snap = build_snapshot(_feed_with_gpt5_input("4.5").providers, source="fetched")
    row = next(
        r for r in snap.prices.to_pylist() if r["provider_id"] == "openai" and r["model"] == "gpt-5"
    )
    assert row["input_per_mtok"] == 4.5
    assert row["snapshot_source"] == "fetched" and row["snapshot_version"] == snapshot_version()
    assert snap.label.startswith(f"genai-prices {snapshot_version()} (fetched ")
