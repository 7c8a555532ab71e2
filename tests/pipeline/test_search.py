"""Search over the catalog's own BM25 index: ranking, query language, filters, snippets,
and index maintenance that is proportional to the new data."""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path
from typing import Any

import duckdb
import pytest

from agentlake.errors import ConfigurationError
from agentlake.ingest.run import ImportOptions, run_import
from agentlake.read.search import Atom, ParsedQuery, SearchFilter, parse_query, search
from tests.conftest import FIXTURES

from .helpers import snapshot

# These tests are about ranking by words: every library search here is lexical.
pytestmark = pytest.mark.usefixtures("lexical_search")

SID_A = "5d0c8e1e-0000-4000-8000-0000000000a1"
SID_B = "5d0c8e1e-0000-4000-8000-0000000000b2"


def _line(
    sid: str, n: int, text: str, *, role: str = "user", day: int = 1, cwd: str = "/home/dev/shop"
) -> bytes:
    rec = {"type": role, "sessionId": sid, "version": "2.1.40", "cwd": cwd, "uuid": f"{sid[-2:]}-{n}",
           "timestamp": f"2026-05-0{day}T09:00:{n:02d}.000Z", "message": {"role": role, "content": text}}  # fmt: skip
    if role == "assistant":
        rec["message"] = {"role": "assistant", "model": "claude-sonnet-4-5-20250929", "id": f"msg_{sid[-2:]}{n}",
                          "content": [{"type": "text", "text": text}]}  # fmt: skip
    return json.dumps(rec).encode() + b"\n"


TEXTS_A = [
    "fix the cache bug in the session loader",
    "the cache is invalidated on every reload, a cache bug indeed",
    "unrelated note about the parser",
    "caching layer works; the bug was in the loader",
]
TEXTS_B = [
    "deploy the health endpoint",
    "the parser rejects unicode input",
]


def _home(tmp: Path) -> Path:
    project = tmp / "home" / ".claude" / "projects"
    (project / "-home-dev-shop").mkdir(parents=True)
    (project / "-home-dev-api").mkdir(parents=True)
    a = b"".join(
        _line(SID_A, i, t, role="user" if i % 2 == 0 else "assistant")
        for i, t in enumerate(TEXTS_A)
    )
    b = b"".join(_line(SID_B, i, t, day=2, cwd="/home/dev/api") for i, t in enumerate(TEXTS_B))
    (project / "-home-dev-shop" / f"{SID_A}.jsonl").write_bytes(a)
    (project / "-home-dev-api" / f"{SID_B}.jsonl").write_bytes(b)
    return tmp / "home"


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    catalog = tmp_path / "c.duckdb"
    run_import(ImportOptions(catalog=catalog, workspace="default", home=_home(tmp_path), env={}))
    return catalog


def _texts(catalog: Path, query: str, **flt: object) -> list[str]:
    hits = search(catalog, "default", query, flt=SearchFilter(**flt))  # type: ignore[arg-type]
    return [h.snippet for h in hits]


def test_words_are_anded_and_ranked_by_bm25(catalog: Path) -> None:
    texts = _texts(catalog, "cache bug")
    # the event saying "cache" twice in a short text ranks first; "caching" stems alike
    assert texts[0].startswith("the cache is invalidated")
    assert set(texts) == {TEXTS_A[0], TEXTS_A[1], TEXTS_A[3]}
    hits = search(catalog, "default", "cache bug")
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_or_not_phrase_and_prefix(catalog: Path) -> None:
    assert set(_texts(catalog, "health OR unicode")) == {TEXTS_B[0], TEXTS_B[1]}
    assert set(_texts(catalog, "parser -unicode")) == {TEXTS_A[2]}
    assert set(_texts(catalog, "parser NOT unicode")) == {TEXTS_A[2]}
    assert _texts(catalog, '"cache bug"') == [TEXTS_A[1], TEXTS_A[0]] or set(_texts(catalog, '"cache bug"')) == {
        TEXTS_A[0], TEXTS_A[1]}  # fmt: skip
    assert TEXTS_A[3] not in _texts(catalog, '"cache bug"')  # has both words, not the phrase
    assert set(_texts(catalog, "invalid*")) == {TEXTS_A[1]}
    assert _texts(catalog, "nonexistentword") == []
    # A query of exclusions only looks for those words (a pasted flag such as --force).
    assert parse_query("-only NOT excluded") == ParsedQuery(
        ((Atom("only", "word"),), (Atom("excluded", "word"),))
    )
    with pytest.raises(ConfigurationError):
        parse_query("- -- ???")


def test_filters(catalog: Path) -> None:
    assert set(_texts(catalog, "parser", project="api")) == {TEXTS_B[1]}
    assert set(_texts(catalog, "parser", session=SID_A[:-1])) == {TEXTS_A[2]}
    assert set(_texts(catalog, "cache", kind="response")) == {TEXTS_A[1], TEXTS_A[3]}
    assert set(_texts(catalog, "cache", model="claude-sonnet-4-5-20250929")) == {
        TEXTS_A[1],
        TEXTS_A[3],
    }
    assert set(_texts(catalog, "parser", provider="codex")) == set()
    from datetime import date

    assert set(_texts(catalog, "parser", since=date(2026, 5, 2))) == {TEXTS_B[1]}
    assert set(_texts(catalog, "parser", until=date(2026, 5, 1))) == {TEXTS_A[2]}


@pytest.mark.parametrize(
    "query", ["cache", "cache bug", "parser OR health", "parser -unicode", "loa*", "the"]
)
def test_a_filter_that_keeps_everything_ranks_like_no_filter(catalog: Path, query: str) -> None:
    """Unfiltered first pages rank the postings alone; filtered ones join the events.
    Both paths must give the same hits in the same order."""
    from datetime import date

    plain = search(catalog, "default", query)
    filtered = search(catalog, "default", query, flt=SearchFilter(since=date(2000, 1, 1)))
    assert plain == filtered


def test_a_phrase_matches_across_punctuation_and_case(tmp_path: Path) -> None:
    project = tmp_path / "home" / ".claude" / "projects" / "-home-dev-shop"
    project.mkdir(parents=True)
    texts = ["Fix the Cache--BUG now", "cache and bug", "the cachebug", "CACHE_bug"]
    data = b"".join(_line(SID_A, i, t) for i, t in enumerate(texts))
    (project / f"{SID_A}.jsonl").write_bytes(data)
    catalog = tmp_path / "c.duckdb"
    run_import(ImportOptions(catalog=catalog, workspace="default", home=tmp_path / "home", env={}))
    assert set(_texts(catalog, '"cache bug"')) == {texts[0], texts[3]}


def test_phrase_pages_are_the_same_from_the_window_and_from_sql(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Phrases are checked on the best candidates first, the window growing, and in SQL
    over every candidate past the largest window: all three give the same pages."""
    import agentlake.read.search as searching

    project = tmp_path / "home" / ".claude" / "projects" / "-home-dev-shop"
    project.mkdir(parents=True)
    texts = [f"cache {'bug' if i % 3 else 'x'} number {i} cache bug" if i % 5 else
             f"bug then cache, no phrase {i}" for i in range(60)]  # fmt: skip
    (project / f"{SID_A}.jsonl").write_bytes(b"".join(_line(SID_A, i % 60, t, day=1 + i // 30)
                                                       for i, t in enumerate(texts)))  # fmt: skip
    catalog = tmp_path / "c.duckdb"
    run_import(ImportOptions(catalog=catalog, workspace="default", home=tmp_path / "home", env={}))

    def pages(query: str) -> list[list[str]]:
        first = searching.search_page(catalog, "default", query, limit=7)
        second = searching.search_page(catalog, "default", query, limit=7, cursor=first.next_cursor)
        offset = searching.search(catalog, "default", query, limit=5, offset=9)
        return [[h.event_id for h in page] for page in (first.hits, second.hits, offset)]

    queries = ['"cache bug"', '"number 1"', 'cache "bug number"', '"no phrase" OR "cache x"']
    default = {q: pages(q) for q in queries}
    assert all(default[q][0] for q in queries[:2])
    rounds: list[int] = []
    rank = searching._rank

    def counted(*args: Any, **kwargs: Any) -> Any:
        rounds.append(args[1]["limit"])
        return rank(*args, **kwargs)

    monkeypatch.setattr(searching, "_rank", counted)
    monkeypatch.setattr(searching, "_PHRASE_WINDOW", 1)
    monkeypatch.setattr(searching, "_PHRASE_WINDOW_MAX", 64)
    assert {q: pages(q) for q in queries} == default  # small windows that grow
    assert 56 in rounds  # a second, eight times larger window was read
    monkeypatch.setattr(searching, "_PHRASE_WINDOW_MAX", 0)
    assert {q: pages(q) for q in queries} == default  # SQL over every candidate


def test_snippet_highlights_the_match(catalog: Path) -> None:
    (hit,) = search(catalog, "default", "endpoint")
    start, end = hit.highlights[0]
    assert hit.snippet[start:end] == "endpoint"


def test_other_workspaces_are_invisible(catalog: Path, tmp_path: Path) -> None:
    assert search(catalog, "other", "cache") == []


def test_an_append_indexes_only_the_new_events(tmp_path: Path) -> None:
    home = _home(tmp_path)
    catalog = tmp_path / "c.duckdb"
    run_import(ImportOptions(catalog=catalog, workspace="default", home=home, env={}))
    con = duckdb.connect(str(catalog), read_only=True)
    before = con.execute("SELECT count(*), max(rowid) FROM search_postings").fetchone()
    con.close()
    assert before is not None
    path = home / ".claude" / "projects" / "-home-dev-api" / f"{SID_B}.jsonl"
    with path.open("ab") as fh:
        fh.write(_line(SID_B, 9, "a brand new zeppelin topic", day=2))
    result = run_import(ImportOptions(catalog=catalog, workspace="default", home=home, env={}))
    assert result.index is not None and result.index.indexed == 1  # the new event alone
    con = duckdb.connect(str(catalog), read_only=True)
    after = con.execute("SELECT count(*) FROM search_postings").fetchone()
    added = con.execute(
        "SELECT list(t.term ORDER BY t.term) FROM search_postings p "
        "JOIN search_terms t USING (term_id) WHERE p.rowid > ?",
        [before[1]],
    ).fetchone()
    con.close()
    assert added is not None and added[0] == ["brand", "new", "topic", "zeppelin"]
    assert after == (before[0] + 4,)
    assert _texts(catalog, "zeppelin") == ["a brand new zeppelin topic"]


def test_withdrawn_messages_leave_the_index(tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(FIXTURES / "gemini" / "rewind", home)
    catalog = tmp_path / "c.duckdb"
    run_import(ImportOptions(catalog=catalog, workspace="default", home=home, env={}))
    con = duckdb.connect(str(catalog), read_only=True)
    orphans = con.execute(
        "SELECT count(*) FROM search_postings p LEFT JOIN search_docs d USING (doc) "
        "LEFT JOIN events e USING (event_id) WHERE e.event_id IS NULL"
    ).fetchone()
    unused = con.execute(
        "SELECT count(*) FROM search_docs d ANTI JOIN search_postings p USING (doc)"
    ).fetchone()
    unknown_terms = con.execute(
        "SELECT count(*) FROM search_postings p ANTI JOIN search_terms t USING (term_id)"
    ).fetchone()
    docs = con.execute("SELECT docs FROM search_state").fetchone()
    indexed = con.execute("SELECT count(DISTINCT doc) FROM search_postings").fetchone()
    df_ok = con.execute(
        "SELECT bool_and(t.df = c.n) FROM search_terms t JOIN "
        "(SELECT term_id, count(*) n FROM search_postings GROUP BY ALL) c USING (term_id)"
    ).fetchone()
    con.close()
    assert orphans == (0,)
    assert unused == (0,)
    assert unknown_terms == (0,)
    assert docs == indexed
    assert df_ok == (True,)


def test_compaction_sorts_postings_and_keeps_results(catalog: Path) -> None:
    from agentlake.load.catalog import open_for_write
    from agentlake.load.publish import compact

    before = [
        (h.event_id, round(h.score, 9)) for h in search(catalog, "default", "cache OR parser")
    ]
    with open_for_write(catalog) as con:
        assert compact(con, min_tail=0) is not None
        state = con.execute("SELECT postings = sorted_postings FROM search_state").fetchone()
        stored = [
            t
            for (t,) in con.execute("SELECT term_id FROM search_postings ORDER BY rowid").fetchall()
        ]
    assert state == (True,)
    assert stored == sorted(stored) and len(set(stored)) > 10  # in term order, as stored
    after = [(h.event_id, round(h.score, 9)) for h in search(catalog, "default", "cache OR parser")]
    assert after == before


def _rows(catalog: Path, query: str) -> list[tuple[Any, ...]]:
    with duckdb.connect(str(catalog), read_only=True) as con:
        return con.execute(query).fetchall()


@pytest.mark.parametrize(
    ("slice_bytes", "fits"), [(16 << 20, True), (200, True), (16 << 20, False), (200, False)]
)
def test_reindex_rebuilds_an_index_that_lost_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, slice_bytes: int, fits: bool
) -> None:
    """A rebuild gives the index of the import, whether it tokenizes the events at once
    or slice by slice (a 200-byte slice holds about one event here), all of a slice's
    events at once or (when they do not fit the memory limit) one at a time, and leaves
    none of its staging behind."""
    from agentlake.load import publish, terms

    monkeypatch.setattr(publish, "SLICE_BYTES", slice_bytes)
    if not fits:
        tokenize = terms.BatchTokenizer.terms

        def one_at_a_time(self: terms.BatchTokenizer, events: Any) -> terms.BatchTerms | None:
            return tokenize(self, events) if events.num_rows == 1 else None

        monkeypatch.setattr(terms.BatchTokenizer, "terms", one_at_a_time)
    home = _home(tmp_path)
    catalog = tmp_path / "c.duckdb"
    run_import(ImportOptions(catalog=catalog, workspace="default", home=home, env={}))
    expected = [
        (h.event_id, round(h.score, 9)) for h in search(catalog, "default", "cache OR parser")
    ]
    con = duckdb.connect(str(catalog))
    con.execute(
        "DELETE FROM search_postings WHERE term_id = "
        "(SELECT term_id FROM search_terms WHERE term = 'parser')"
    )
    con.close()
    assert len(search(catalog, "default", "cache OR parser")) < len(expected)
    result = run_import(
        ImportOptions(catalog=catalog, workspace="default", home=home, env={}, reindex=True)
    )
    assert result.index_seconds is not None
    assert [
        (h.event_id, round(h.score, 9)) for h in search(catalog, "default", "cache OR parser")
    ] == expected
    clean = tmp_path / "clean.duckdb"
    run_import(ImportOptions(catalog=clean, workspace="default", home=home, env={}))
    tables = ("search_postings", "search_terms")
    assert snapshot(catalog, tables) == snapshot(clean, tables)
    statistics = "SELECT docs, total_length, postings FROM search_state"
    assert _rows(catalog, statistics) == _rows(clean, statistics)
    staging = (
        "SELECT table_name FROM duckdb_tables() "
        "WHERE table_name LIKE 'search_staging%' OR table_name LIKE 'publish%'"
    )
    assert _rows(catalog, staging) == []


def test_pages_neither_skip_nor_repeat_while_an_import_runs(tmp_path: Path) -> None:
    from agentlake.read.search import search_page

    home = _home(tmp_path)
    path = home / ".claude" / "projects" / "-home-dev-api" / f"{SID_B}.jsonl"
    with path.open("ab") as fh:
        fh.write(
            b"".join(
                _line(SID_B, 10 + i, f"cache entry number {i} of the cache", day=2)
                for i in range(9)
            )
        )
    catalog = tmp_path / "c.duckdb"
    run_import(ImportOptions(catalog=catalog, workspace="default", home=home, env={}))
    everything = [h.event_id for h in search(catalog, "default", "cache", limit=100)]
    seen: list[str] = []
    page = search_page(catalog, "default", "cache", limit=3)
    while True:
        seen += [h.event_id for h in page.hits]
        # between pages an import adds matching events and changes every statistic
        with path.open("ab") as fh:
            fh.write(_line(SID_B, 40 + len(seen), "cache cache cache newcomer", day=2))
        run_import(ImportOptions(catalog=catalog, workspace="default", home=home, env={}))
        if page.next_cursor is None:
            break
        page = search_page(catalog, "default", "cache", limit=3, cursor=page.next_cursor)
    assert seen == everything
    assert len(search(catalog, "default", "cache", limit=100)) > len(everything)  # newcomers exist


def test_foreign_altered_or_mismatched_cursors_are_refused(catalog: Path, tmp_path: Path) -> None:
    from agentlake.read.search import search_page

    page = search_page(catalog, "default", "cache", limit=1)
    assert page.next_cursor is not None
    cursor = page.next_cursor
    with pytest.raises(ConfigurationError, match="query"):
        search_page(catalog, "default", "parser", limit=1, cursor=cursor)
    with pytest.raises(ConfigurationError, match="filters"):
        search_page(
            catalog, "default", "cache", limit=1, cursor=cursor, flt=SearchFilter(kind="prompt")
        )
    with pytest.raises(ConfigurationError, match="workspace"):
        search_page(catalog, "other", "cache", limit=1, cursor=cursor)
    version, body, mac = page.next_cursor.split(".")
    tampered = ".".join((version, body[:-2] + ("A" if body[-2] != "A" else "B") + body[-1], mac))
    with pytest.raises(ConfigurationError):
        search_page(catalog, "default", "cache", limit=1, cursor=tampered)
    other = tmp_path / "other.duckdb"
    run_import(
        ImportOptions(catalog=other, workspace="default", home=_home(tmp_path / "x"), env={})
    )
    with pytest.raises(ConfigurationError):
        search_page(other, "default", "cache", limit=1, cursor=page.next_cursor)


def test_tool_inputs_and_outputs_are_searchable(tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(FIXTURES / "claude" / "subagents", home)
    catalog = tmp_path / "c.duckdb"
    run_import(ImportOptions(catalog=catalog, workspace="default", home=home, env={}))
    con = duckdb.connect(str(catalog), read_only=True)
    row = con.execute(
        "SELECT tool_name, CAST(tool_input AS VARCHAR) FROM events WHERE kind = 'tool_call' LIMIT 1"
    ).fetchone()
    result = con.execute(
        "SELECT text FROM events WHERE kind = 'tool_result' AND text IS NOT NULL LIMIT 1"
    ).fetchone()
    con.close()
    assert row is not None and result is not None
    word = max(re.findall(r"[a-z]{6,}", row[1].lower().split(":", 1)[-1]), key=len)
    assert any(h.kind == "tool_call" for h in search(catalog, "default", word, limit=50))
    out_word = max(re.findall(r"[a-z]{6,}", result[0].lower()), key=len)
    assert any(h.kind == "tool_result" for h in search(catalog, "default", out_word, limit=50))


def test_an_index_of_event_ids_migrates_to_numbered_events(tmp_path: Path) -> None:
    """Schema 10 numbers the indexed events and schema 11 the terms: a catalog whose
    postings still name events by id and terms by spelling (schema 9) is converted on
    open, with the same hits and scores."""
    from agentlake.load.catalog import open_for_write

    catalog = tmp_path / "c.duckdb"
    run_import(ImportOptions(catalog=catalog, workspace="default", home=_home(tmp_path), env={}))
    queries = ("cache OR parser", "bug -loader", '"cache bug"', "pars*")
    expected = {q: [(h.event_id, h.score) for h in search(catalog, "default", q)] for q in queries}
    con = duckdb.connect(str(catalog))
    con.execute(
        "CREATE TABLE by_id AS SELECT t.workspace, t.term, d.event_id, p.tf, p.dl "
        "FROM search_postings p JOIN search_docs d USING (doc) JOIN search_terms t USING (term_id)"
    )
    con.execute("DROP TABLE search_postings")
    con.execute("ALTER TABLE by_id RENAME TO search_postings")
    con.execute("DROP TABLE search_docs")
    con.execute(
        "CREATE TABLE spelled (workspace VARCHAR NOT NULL, term VARCHAR NOT NULL, "
        "df BIGINT NOT NULL, PRIMARY KEY (workspace, term))"
    )
    con.execute("INSERT INTO spelled SELECT workspace, term, df FROM search_terms")
    con.execute("DROP TABLE search_terms")
    con.execute("ALTER TABLE spelled RENAME TO search_terms")
    con.execute("DELETE FROM schema_version WHERE version >= 10")
    con.close()
    with open_for_write(catalog):
        pass
    con = duckdb.connect(str(catalog), read_only=True)
    docs = con.execute("SELECT count(*), count(DISTINCT doc) FROM search_docs").fetchone()
    state = con.execute("SELECT docs, postings = sorted_postings FROM search_state").fetchone()
    con.close()
    assert docs is not None and state is not None
    assert docs[0] == docs[1] == state[0] > 0
    assert state[1] is True
    assert {
        q: [(h.event_id, h.score) for h in search(catalog, "default", q)] for q in queries
    } == expected
    assert all(expected[q] for q in queries)


@pytest.fixture(scope="module")
def demo_catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from fixtures.synth import generate_claude_home

    tmp = tmp_path_factory.mktemp("demo")
    generate_claude_home(tmp / "home", seed=7, sessions=12)
    catalog = tmp / "c.duckdb"
    run_import(ImportOptions(catalog=catalog, workspace="default", home=tmp / "home", env={}))
    return catalog


class _ReferenceIndex:
    """BM25 (k1 = 1.2, b = 0.75) computed in Python from the events' own text, apart from
    the index it checks: the rule the catalog's ranking must follow. An event's words are
    its text and tool input (JSON text) joined by a space, its first INDEXED_CHARS
    characters lowercased (U+0130 as ``i``, as DuckDB does) and split at every character
    other than a-z and 0-9, those of 2 to 40 characters that are not stop words, each
    stemmed with Porter (the fts extension's ``stem``, when it loads). Every clause must
    match (a clause matches through any of its terms; a phrase alone in its clause is a
    clause per indexed word, and its words must then appear in order in the event's
    text), excluded terms drop the event, the score sums the parts of every matched term,
    rounded to nine decimals, ties by the event's number in the index (its one use of
    the index)."""

    def __init__(self, catalog: Path) -> None:
        from agentlake import sql
        from agentlake.load.catalog import load_fts

        self.con = duckdb.connect(str(catalog), read_only=True)
        self.stemming = load_fts(self.con)
        texts = self.con.execute(
            "SELECT event_id, concat_ws(' ', text, CAST(tool_input AS VARCHAR)) FROM events "
            "WHERE workspace = 'default' ORDER BY event_id"
        ).fetchall()
        stop = set(sql.STOP_WORDS)
        words = {
            event: [
                w
                for w in re.findall(
                    "[a-z0-9]+", (body or "")[: sql.INDEXED_CHARS].replace("\u0130", "i").lower()
                )
                if 2 <= len(w) <= 40 and w not in stop
            ]
            for event, body in texts
        }
        stems = self._stems({w for ws in words.values() for w in ws})
        doc_of = dict(self.con.execute("SELECT event_id, doc FROM search_docs").fetchall())
        self.postings: dict[str, dict[int, tuple[int, int]]] = {}
        total = 0
        for event, ws in words.items():
            if not ws:
                continue
            total += len(ws)
            counts: dict[str, int] = {}
            for w in ws:
                counts[stems[w]] = counts.get(stems[w], 0) + 1
            for term, tf in counts.items():
                self.postings.setdefault(term, {})[doc_of[event]] = (tf, len(ws))
        self.docs = sum(1 for ws in words.values() if ws)
        self.avgdl = total / self.docs
        self.df = {term: len(docs) for term, docs in self.postings.items()}
        self.event_of = {doc: event for event, doc in doc_of.items()}

    def _stems(self, words: set[str]) -> dict[str, str]:
        if not self.stemming:
            return {w: w for w in words}
        ordered = sorted(words)
        row = self.con.execute(
            "SELECT list(stem(w, 'porter') ORDER BY i) FROM "
            "(SELECT unnest($words) AS w, generate_subscripts($words, 1) AS i)",
            {"words": ordered},
        ).fetchone()
        assert row is not None
        return dict(zip(ordered, row[0], strict=True))

    def close(self) -> None:
        self.con.close()

    def stem(self, word: str) -> str:
        return self._stems({word})[word]

    def terms_of(self, text: str, kind: str) -> list[str]:
        if kind != "prefix":
            return [self.stem(w) for w in text.split()]
        known = sorted((t for t in self.df if t.startswith(text)), key=lambda t: (-self.df[t], t))
        return known[:64]

    def part(self, term: str, doc: int) -> float:
        tf, dl = self.postings[term][doc]
        idf = math.log(1 + (self.docs - self.df[term] + 0.5) / (self.df[term] + 0.5))
        return idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * dl / self.avgdl))

    def rank(self, query: str, limit: int = 20) -> list[tuple[str, float]]:
        parsed = parse_query(query)
        clauses: list[list[str]] = []
        for clause in parsed.clauses:
            if len(clause) == 1 and clause[0].kind == "phrase":
                indexed = [t for t in self.terms_of(clause[0].text, "phrase") if t in self.df]
                if indexed:
                    clauses += [[t] for t in indexed]
                    continue
            clauses.append([t for atom in clause for t in self.terms_of(atom.text, atom.kind)])
        matched = set.intersection(*(
            {d for t in clause for d in self.postings.get(t, {})} for clause in clauses))  # fmt: skip
        matched -= {d for w in parsed.excluded for d in self.postings.get(self.stem(w), {})}
        for phrase in parsed.phrases:
            pattern = re.compile("[^a-z0-9]+".join(phrase.split()), re.IGNORECASE)
            bodies = self.con.execute(
                "SELECT d.doc, concat_ws(' ', e.text, CAST(e.tool_input AS VARCHAR)) "
                "FROM search_docs d JOIN events e USING (workspace, event_id) "
                f"WHERE d.doc IN ({', '.join(map(str, matched)) or 'NULL'})"
            ).fetchall()
            matched = {d for d, body in bodies if pattern.search(body or "")}
        scores = {
            d: round(sum(self.part(t, d) for clause in clauses for t in clause
                         if d in self.postings.get(t, {})), 9)
            for d in matched
        }  # fmt: skip
        best = sorted(scores, key=lambda d: (-scores[d], d))[:limit]
        return [(self.event_of[d], scores[d]) for d in best]


def _demo_queries(catalog: Path) -> list[str]:
    """Queries of every shape over words of the demo corpus, frequent and rare."""
    con = duckdb.connect(str(catalog), read_only=True)
    try:
        texts = [
            t
            for (t,) in con.execute(
                "SELECT text FROM events WHERE text IS NOT NULL ORDER BY event_id"
            ).fetchall()
        ]
    finally:
        con.close()
    counts: dict[str, int] = {}
    for text in texts:
        for word in set(re.findall(r"[a-z]{4,12}", text.lower())):
            counts[word] = counts.get(word, 0) + 1
    ranked = sorted(counts, key=lambda w: (-counts[w], w))
    a, b, c, d = (
        ranked[0],
        ranked[len(ranked) // 8],
        ranked[len(ranked) // 3],
        ranked[len(ranked) // 2],
    )
    return [
        a, c, f"{a} {b}", f"{b} {c} {a}", f"{a} OR {c}", f"{b} OR {c} OR {d}", f"{a} {b} OR {c}",
        f"{a} -{b}", f"{a} OR {b} -{c}", f"{a} {a}", f"{b} OR {b}", f"{b[:3]}*", f"{a} {c[:3]}* OR {d}",
        f"{a} {b} {c} {d}", f"{a} OR {b} OR {c} OR {d}", " OR ".join(ranked[5:80:7]),
        f"{a} {b[0]}*", f"{c} {d} OR {c[0]}*",
        " ".join([a] * 13 + [b] * 13), " ".join([a] * 20 + [f"{b} OR {c}"] * 6 + [f"-{d}"]),
    ]  # fmt: skip


def test_ranking_matches_a_reference_bm25(demo_catalog: Path) -> None:
    """Whatever statement ranks a query (one scan per term, clauses of alternatives
    joined or stacked, clauses joined, exclusions anti-joined), its page is the one
    BM25 computed from the index's rows gives: same events, same order, same scores."""
    queries = _demo_queries(demo_catalog)
    index = _ReferenceIndex(demo_catalog)
    with_hits = 0
    for query in queries:
        expected = index.rank(query)
        got = [(h.event_id, h.score) for h in search(demo_catalog, "default", query)]
        assert [e for e, _ in got] == [e for e, _ in expected], query
        assert [s for _, s in got] == pytest.approx([s for _, s in expected], abs=1e-9), query
        with_hits += bool(expected)
    index.close()
    assert with_hits >= len(queries) - 2  # the queries do reach events


def test_random_queries_rank_as_the_reference_does(demo_catalog: Path) -> None:
    """Seeded random queries of every shape the language has (clauses of one to
    twelve alternatives, prefixes, phrases of adjacent words, stop words, absent
    words, exclusions, up to thirty clauses) rank as :class:`_ReferenceIndex` does."""
    import random
    from itertools import pairwise

    con = duckdb.connect(str(demo_catalog), read_only=True)
    try:
        texts = [t for (t,) in con.execute("SELECT text FROM events WHERE text IS NOT NULL ORDER BY event_id").fetchall()]  # fmt: skip
    finally:
        con.close()
    rng = random.Random(11)
    tokens: list[list[str]] = [re.findall(r"[a-z0-9]+", str(t).lower()) for t in texts]
    words = [*sorted({w for ts in tokens for w in ts if len(w) > 2}), "the", "absentword"]
    pairs = sorted({(a, b) for ts in tokens for a, b in pairwise(ts) if a != b})

    def atom() -> str:
        kind = rng.random()
        if kind < 0.12:
            return rng.choice(words)[: rng.randint(1, 3)] + "*"
        if kind < 0.22:
            return '"{} {}"'.format(*rng.choice(pairs))
        return rng.choice(words)

    index = _ReferenceIndex(demo_catalog)
    with_hits = 0
    try:
        for _ in range(80):
            n = rng.choice([1, 1, 2, 2, 3, 4, 30])
            clauses = [" OR ".join(atom() for _ in range(rng.choice([1, 1, 1, 2, 3, 12])))
                       for _ in range(n)]  # fmt: skip
            excluded = [f"-{rng.choice(words)}" for _ in range(rng.choice([0, 0, 1, 2]))]
            query = " ".join(clauses + excluded)
            expected = index.rank(query)
            got = [(h.event_id, h.score) for h in search(demo_catalog, "default", query)]
            assert [e for e, _ in got] == [e for e, _ in expected], query
            assert [s for _, s in got] == pytest.approx([s for _, s in expected], abs=1e-9), query
            with_hits += bool(expected)
    finally:
        index.close()
    assert with_hits >= 30


def test_a_read_only_connection_reads_the_collection_once(
    catalog: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No one can write a catalog while a read-only connection holds it, so its
    collection statistics (and the index's lag) are read on the first search only; a
    connection that can write reads them on every search."""
    import agentlake.read.search as searching
    from agentlake.load.publish import Lag, lag

    reads: list[object] = []

    def counted(con: duckdb.DuckDBPyConnection, workspace: str) -> Lag:
        reads.append(con)
        return lag(con, workspace)

    monkeypatch.setattr(searching, "lag", counted)
    for read_only, expected in ((True, 1), (False, 3)):
        reads.clear()
        con = duckdb.connect(str(catalog), read_only=read_only)
        try:
            pages = [search(con, "default", "cache bug") for _ in range(3)]
        finally:
            con.close()
        assert len(reads) == expected
        assert pages[0] == pages[1] == pages[2] and pages[0]


def _whole_text_snippet(
    text: str, words: list[str], width: int = 120
) -> tuple[str, list[tuple[int, int]]]:
    """The snippet rule applied to the whole text at once (what :func:`snippet` must
    give while whitespace runs are short)."""
    flat = " ".join(text.split())
    lowered = flat.lower()
    hits = [m.start() for w in words for m in re.finditer(r"\b" + re.escape(w[:6]), lowered)]
    start = max(0, min(hits, default=0) - width // 3)
    piece = flat[start : start + width]
    spans = {
        (m.start(), m.end())
        for w in words
        for m in re.finditer(r"\b" + re.escape(w[:6]) + r"\w*", piece.lower())
    }
    prefix, suffix = "…" if start else "", "…" if start + width < len(flat) else ""
    return prefix + piece + suffix, sorted((a + len(prefix), b + len(prefix)) for a, b in spans)


def test_a_snippet_reads_only_around_the_match_and_shows_what_the_whole_text_would() -> None:
    import random

    from agentlake.read.search import snippet

    rng = random.Random(5)
    vocabulary = ["cache", "Caching", "bug", "parser", "loader", "x", "(cache)", "a/b", "ÉTÉ", "42"]
    for _ in range(400):
        n = rng.choice([0, 1, 5, 30, 200, 2000])
        parts = [
            rng.choice(vocabulary) + rng.choice([" ", "  ", "\n", "\t ", "", ", "])
            for _ in range(n)
        ]
        text = rng.choice(["", " ", "\n"]) + "".join(parts)
        words = rng.sample(["cache", "bug", "parser", "absent"], rng.randint(1, 3))
        width = rng.choice([20, 60, 120])
        assert snippet(text, words, width) == _whole_text_snippet(text, words, width), (text, words)
    huge = "noise " * 20_000 + "the cache bug " + "tail " * 900_000  # 4.6 MB
    shown, spans = snippet(huge, ["cache"])
    assert shown.startswith("…") and shown.endswith("…") and "cache bug" in shown
    assert [shown[a:b] for a, b in spans] == ["cache"]
    # Past a whitespace run longer than the window, the snippet only says there is more.
    assert snippet("cache" + " " * 2000 + "end", ["cache"]) == ("cache…", [(0, 5)])
    # A word only found past what the index reads is not looked for there.
    assert snippet("x " * 200_000 + "cache", ["cache"])[0].startswith("x x x")
