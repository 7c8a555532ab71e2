# Over 500 lines: the ranking SQL and the page key it cuts by are one search.
"""Ranked full-text search over the catalog's own inverted index (BM25, in SQL).

Query language: words are ANDed; ``a OR b`` accepts either; ``-word`` or ``NOT word``
excludes (a query of exclusions only looks for those words); ``"a phrase"`` must appear
verbatim (case-insensitive); ``pref*`` matches
every indexed term with that prefix. A query's words are found, lowercased and stemmed by
the index's own tokenizer (:mod:`agentlake.load.terms`). Filters narrow by provider,
project, session, kind, model and time. A catalog whose publish step lags is searched as
far as its index goes, and the page says how many events are not searchable yet.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from typing import Any, Final, Literal, NamedTuple

import duckdb

from agentlake import sql
from agentlake.errors import ConfigurationError
from agentlake.load.catalog import CatalogRef, reading
from agentlake.load.publish import lag
from agentlake.load.search_index import DuckDBSearchIndex, QueryTerm
from agentlake.read import cursors
from agentlake.read.lifecycle_filters import any_hidden, check_tag, search_predicate
from agentlake.read.names import event_kind, provider_id, session_named
from agentlake.read.search_text import Atom as Atom
from agentlake.read.search_text import ParsedQuery as ParsedQuery
from agentlake.read.search_text import parse_query as parse_query
from agentlake.read.search_text import snippet as snippet

K1: Final = 1.2
B: Final = 0.75
PREFIX_EXPANSION: Final = 64  # most frequent terms a prefix expands to
SCORE_SCALE: Final = 1e9  # scores rank to nine decimals
SearchMode = Literal["auto", "hybrid", "lexical", "semantic"]


@dataclass(frozen=True, slots=True)
class SearchFilter:
    """Narrowing of a search."""

    provider: str | None = None
    project: str | None = None  # substring of the session's project path
    session: str | None = None  # session id or prefix
    kind: str | None = None
    model: str | None = None
    since: date | None = None
    until: date | None = None
    tag: str | None = None  # only sessions with this tag
    include_hidden: bool = False  # hidden sessions' events too

    def __post_init__(self) -> None:
        if self.tag is not None:
            check_tag(self.tag)
        if self.provider is not None:
            object.__setattr__(self, "provider", provider_id(self.provider))
        if self.kind is not None:
            event_kind(self.kind)
        if self.since and self.until and self.since > self.until:
            raise ConfigurationError(f"--since {self.since} is after --until {self.until}")


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One ranked match."""

    session_id: str
    provider: str
    kind: str
    ts: datetime | None
    score: float
    snippet: str
    event_id: str
    highlights: list[tuple[int, int]] = field(default_factory=list)
    lexical_rank: int | None = None  # its rank by BM25 (hybrid and semantic searches)
    semantic_rank: int | None = None  # its rank by meaning (hybrid and semantic searches)


def _prefix_terms(con: duckdb.DuckDBPyConnection, workspace: str, prefix: str) -> list[QueryTerm]:
    """The :data:`PREFIX_EXPANSION` most frequent indexed terms starting with
    ``prefix`` (ties by spelling, so every page of a search expands it alike)."""
    statement = (
        "SELECT term, df, term_id FROM search_terms WHERE workspace = $ws "
        "AND starts_with(term, $p) AND df > 0 ORDER BY df DESC, term LIMIT $n"
    )
    params = {"ws": workspace, "p": prefix, "n": PREFIX_EXPANSION}
    rows = con.execute(sql.inline(statement, params)).fetchall()
    return [QueryTerm(*row) for row in rows]


@dataclass(frozen=True, slots=True)
class _Collection:
    """What every query of one snapshot shares: the newest import, the collection
    statistics, the cursor secret, whether the index's terms are stems, and how far
    the index lags."""

    import_id: int
    docs: float
    avgdl: float
    secret: str
    stemming: bool  # the index's terms are Porter stems
    unindexed: int  # events search does not find yet (the publish step lags)
    withdrawn: bool  # withdrawals the publish step has not applied: left out of results


_COLLECTION_SQL: Final = """
WITH stats AS (
    SELECT greatest(coalesce(max(docs), 0), 1) AS docs,
           coalesce(max(total_length), 0)::DOUBLE / greatest(coalesce(max(docs), 0), 1) AS avgdl
    FROM search_state WHERE workspace = $ws
),
i AS (SELECT coalesce(max(import_id), 0) AS import_id FROM imports WHERE workspace = $ws),
k AS (SELECT max(value) AS secret FROM settings WHERE key = 'cursor_secret')
SELECT i.import_id, stats.docs, stats.avgdl, k.secret,
       current_setting('access_mode') = 'read_only' AS frozen
FROM stats, i, k
"""

# A read-only connection sees a catalog no one can write while it is open (DuckDB's
# file lock), so its collection is read once; any other connection reads it per query.
_FROZEN: Final[weakref.WeakKeyDictionary[duckdb.DuckDBPyConnection, dict[str, _Collection]]] = (
    weakref.WeakKeyDictionary()
)


def _collection(con: duckdb.DuckDBPyConnection, workspace: str) -> _Collection:
    """Read :class:`_Collection` (kept per read-only connection), and set up the
    connection for searching: the fts extension loaded, late materialization off."""
    frozen = _FROZEN.get(con)
    if frozen is not None and workspace in frozen:
        return frozen[workspace]
    stemming = DuckDBSearchIndex(con, workspace).stemming
    # Late materialization ranks a term's postings, then scans the postings again for
    # the page's rows.
    con.execute("SET late_materialization_max_rows = 0")
    row = con.execute(_COLLECTION_SQL, {"ws": workspace}).fetchone()
    assert row is not None
    import_id, docs, avgdl, secret, read_only = row
    if secret is None:
        raise ConfigurationError(
            "this catalog has no cursor secret; run 'agentlake import' once to upgrade it"
        )
    behind = lag(con, workspace)
    collection = _Collection(
        int(import_id), float(docs), float(avgdl), str(secret), stemming, behind.events,
        behind.pending > 0,
    )  # fmt: skip
    if read_only:
        _FROZEN.setdefault(con, {})[workspace] = collection
    return collection


@dataclass(frozen=True, slots=True)
class SearchPage:
    """One page of hits, the cursor of the next page (``None`` after the last), and how
    many events of the workspace are not searchable yet (the publish step lags)."""

    hits: list[SearchHit]
    next_cursor: str | None
    unindexed: int = 0
    mode: Literal["lexical", "semantic", "hybrid"] = "lexical"  # how the page was ranked

    def to_json(self, query: str) -> dict[str, Any]:
        """The page as ``agentlake search --json`` prints it for ``query``."""
        hits = [
            {"session_id": h.session_id, "provider": h.provider, "kind": h.kind, "ts": h.ts,
             "score": h.score, "snippet": h.snippet, "highlights": h.highlights,
             "event_id": h.event_id, "lexical_rank": h.lexical_rank,
             "semantic_rank": h.semantic_rank}
            for h in self.hits
        ]  # fmt: skip
        return {
            "query": query,
            "mode": self.mode,
            "hits": hits,
            "next_cursor": self.next_cursor,
            "unindexed": self.unindexed,
        }


def search(
    catalog: CatalogRef,
    workspace: str,
    query: str,
    *,
    limit: int = 20,
    offset: int = 0,
    flt: SearchFilter | None = None,
    mode: SearchMode = "auto",
) -> list[SearchHit]:
    """Events matching ``query``, best first: by BM25 (k1 = 1.2, b = 0.75), by meaning,
    or both fused (``mode``, as :func:`search_page`). ``catalog`` is a path, or a
    read-only connection kept open across searches (which is left with the fts
    extension loaded and late materialization off, and keeps the workspace's vectors)."""
    page = search_page(catalog, workspace, query, limit=limit, offset=offset, flt=flt, mode=mode)
    return page.hits


def search_page(
    catalog: CatalogRef,
    workspace: str,
    query: str,
    *,
    limit: int = 20,
    offset: int = 0,
    flt: SearchFilter | None = None,
    cursor: str | None = None,
    mode: SearchMode = "auto",
) -> SearchPage:
    """One page of :func:`search`, with keyset pagination.

    ``mode``: ``lexical`` ranks by BM25 alone, ``semantic`` by the similarity of each
    embedded event to the query's meaning, ``hybrid`` fuses both rankings
    (:mod:`agentlake.read.hybrid`); ``auto`` is hybrid when the workspace has vectors
    and the model is installed, else lexical.

    The first page pins a snapshot: the newest import, the collection statistics and
    each query term's document frequency. Later pages (``cursor``) rank only events of
    that snapshot with those frozen statistics and continue after the last hit's key,
    so pages neither skip nor repeat while imports add events. A cursor is signed with
    the catalog's secret and bound to the workspace, query, mode and filters.
    """
    from agentlake.read.hybrid import chosen_mode, fused_page, start_semantic

    parsed = parse_query(query)
    flt = flt or SearchFilter()
    with reading(catalog, wheel_fts=True) as con:
        # The model and the vectors load in the background while the words are ranked.
        semantic = start_semantic(con, workspace, parsed.meaning) if mode != "lexical" else None
        try:
            snap = _collection(con, workspace)
            chosen = chosen_mode(workspace, mode, embedded=semantic is not None)
            bound = {"kind": "search", "workspace": workspace, "query": query,
                     "filters": _filter_key(flt), "mode": chosen,
                     "keys": "score in billionths, doc" if chosen == "lexical"
                     else "score in billionths, event id"}  # fmt: skip
            state = None if cursor is None else cursors.decode(cursor, snap.secret, expect=bound)
            plan = _plan(con, workspace, parsed, flt, snap, state)
            if chosen != "lexical":
                assert semantic is not None
                return fused_page(con, workspace, parsed, plan, semantic, chosen=chosen,
                                  bound=bound, state=state, limit=limit, offset=offset)  # fmt: skip
            after = state["after"] if state else None
            ranked, found = lexical_ranked(
                con, workspace, plan, limit=limit, offset=offset if state is None else 0,
                after=after,
            )  # fmt: skip
        finally:
            if semantic is not None:
                semantic.close()
    hits = [as_hit(found[r.event_id], r.event_id, r.key, parsed.words) for r in ranked]
    next_cursor = None
    if len(hits) == limit:
        state = {**bound, **plan.frozen, "after": [ranked[-1].key, ranked[-1].doc]}
        next_cursor = cursors.encode(state, snap.secret)
    return SearchPage(hits, next_cursor, snap.unindexed, "lexical")


def as_hit(
    row: tuple[Any, ...],
    event_id: str,
    key: float,
    words: list[str],
    ranks: tuple[int | None, int | None] = (None, None),
) -> SearchHit:
    """The :class:`SearchHit` of an event's row (:func:`_events_by_id`) ranked with
    ``key`` (its score in billionths), its snippet around ``words``; ``ranks``: its
    lexical and semantic ranks (hybrid and semantic searches)."""
    provider, session_id, ts, kind, body = row
    snip, spans = snippet(body or "", words)
    when = ts.replace(tzinfo=UTC) if ts is not None else None  # read as UTC
    return SearchHit(session_id, provider, kind, when, key / SCORE_SCALE, snip, event_id,
                     spans, *ranks)  # fmt: skip


@dataclass(frozen=True, slots=True)
class LexicalPlan:
    """A query made ready to rank lexically: the statement's parameters (all but the
    page's limit, offset and key), the phrase patterns, whether the postings can be
    ranked alone (``plain``), whether anything can match, and the snapshot and
    statistics a cursor pins (``frozen``)."""

    params: dict[str, Any]
    phrases: list[str]
    plain: bool
    matchable: bool
    frozen: dict[str, Any]


def _plan(
    con: duckdb.DuckDBPyConnection,
    workspace: str,
    parsed: ParsedQuery,
    flt: SearchFilter,
    snap: _Collection,
    state: dict[str, Any] | None,
) -> LexicalPlan:
    """The :class:`LexicalPlan` of ``parsed`` under ``flt``: the first page's (``state``
    ``None``) or that of the page after a cursor's ``state``."""
    words = sorted(
        {w for c in parsed.clauses for a in c if a.kind != "prefix" for w in a.text.split()}
        | set(parsed.excluded)
    )
    # A session named as everywhere else: its id, or a unique prefix of 4 or more.
    session = (
        session_named(con, workspace, flt.session, include_hidden=flt.include_hidden)[1]
        if flt.session
        else None
    )
    index = DuckDBSearchIndex(con, workspace, stemming=snap.stemming)
    looked_up = index.query(words)
    stems, known = looked_up.terms, looked_up.known
    if state is not None:
        snapshot, n, avgdl = int(state["snapshot"]), float(state["n"]), float(state["avgdl"])
        frozen_df: dict[str, int] = state["df"]
    else:
        snapshot, n, avgdl = snap.import_id, snap.docs, snap.avgdl
        frozen_df = {}
    clauses: list[list[str]] = []  # the terms of each clause
    indexed = known if state is None else frozen_df  # as the first page saw them
    for clause in parsed.clauses:
        if len(clause) == 1 and clause[0].kind == "phrase":
            # Every indexed word of a phrase must match: a clause each (a stop word,
            # or a word too short, is left to the phrase's own check).
            words_in = [[stems[w]] for w in clause[0].text.split() if stems[w] in indexed]
            if words_in:
                clauses += words_in
                continue
        clauses.append([])
        for atom in clause:
            if atom.kind == "prefix":
                expansion = _prefix_terms(con, workspace, atom.text)
                known.update((t.term, t) for t in expansion)
                clauses[-1] += [t.term for t in expansion]
            else:
                clauses[-1] += [stems[w] for w in atom.text.split()]
    if state is None:
        frozen_df = {t: known[t].df for clause in clauses for t in clause if t in known}
    # Postings name terms by number; a term the index does not hold has none (NULL).
    numbers = {t: known[t].term_id for t in known}
    excluded = [numbers[stems[w]] for w in parsed.excluded if stems[w] in numbers]
    params: dict[str, Any] = {
        "ws": workspace, "excluded": excluded,
        "clauses": [[(numbers.get(t), frozen_df.get(t, 0)) for t in c] for c in clauses],
        "k1": K1, "b": B, "n": n, "avgdl": avgdl, "snapshot": snapshot,
        "provider": flt.provider, "kind": flt.kind, "model": flt.model,
        "session": session, "project": flt.project, "withdrawn": snap.withdrawn,
        "tag": flt.tag, "include_hidden": flt.include_hidden,
        "since": datetime.combine(flt.since, datetime.min.time()) if flt.since else None,
        "until": datetime.combine(flt.until + timedelta(days=1), datetime.min.time()) if flt.until else None,
    }  # fmt: skip
    # The words of a phrase in order with only non-word characters between them.
    phrases = ["(?i)" + "[^a-z0-9]+".join(p.split()) for p in parsed.phrases]
    # A first page without filters ranks the postings alone: reading the events'
    # small columns for every match is then wasted work.
    # Hidden sessions' events leave the matches in the filtered query.
    plain = (
        state is None
        and replace(flt, include_hidden=False) == SearchFilter()
        and (flt.include_hidden or not any_hidden(con, workspace))
    )
    frozen = {"snapshot": snapshot, "n": n, "avgdl": avgdl, "df": frozen_df}
    # A prefix that expands to no term matches nothing.
    return LexicalPlan(params, phrases, plain, bool(clauses) and all(clauses), frozen)


def lexical_ranked(
    con: duckdb.DuckDBPyConnection,
    workspace: str,
    plan: LexicalPlan,
    *,
    limit: int,
    offset: int = 0,
    after: Sequence[Any] | None = None,
    rows: bool = True,
) -> tuple[list[_Ranked], dict[str, tuple[Any, ...]]]:
    """One page of ``plan``'s events by BM25, best first, after the key ``after``
    (score in billionths, number in the index), with their rows (unless ``rows`` is
    false and the query has no phrase to check)."""
    if not plan.matchable:
        return [], {}
    params = {**plan.params, "limit": limit, "offset": offset,
              "after_key": after[0] if after else None, "after_doc": after[1] if after else None}  # fmt: skip
    if plan.phrases:
        return _rank_with_phrases(con, workspace, params, plan.phrases, plan.plain)
    ranked = _rank(con, params, plan.plain)
    return ranked, _events_by_id(con, workspace, [r.event_id for r in ranked]) if rows else {}


class _Ranked(NamedTuple):
    """One ranked event: its number in the index, ranking key and id."""

    doc: int
    key: float  # the score in billionths, rounded
    event_id: str


def _rank(
    con: duckdb.DuckDBPyConnection, params: dict[str, Any], plain: bool, phrase_sql: str = ""
) -> list[_Ranked]:
    """One page of events, best first (ties by their number in the index)."""
    filtered = _RANKED_FILTERED.replace("/* filters */", search_predicate())
    ranked = _RANKED_PLAIN if plain else filtered.replace("/* phrases */", phrase_sql)
    clauses = _clauses_sql(params["clauses"])
    statement = (
        _SEARCH_SQL.replace("/* ranked */", ranked)
        .replace("/* clauses */", clauses.sql)
        .replace("/* scored */", _scored_sql(clauses))
    )
    if params["withdrawn"]:
        statement = statement.replace("/* excluded */", _WITHDRAWN + "/* excluded */")
    if params["excluded"]:
        statement = statement.replace("/* excluded */", _EXCLUDED).replace(
            "/* excluded terms */", sql.literals(params["excluded"])
        )
    keys = con.execute(sql.inline(statement, params)).fetchall()
    if not keys:
        return []
    ids = dict(
        con.execute(
            f"SELECT doc, event_id FROM search_docs WHERE doc IN ({', '.join(str(int(d)) for d, _ in keys)})"
        ).fetchall()
    )
    return [_Ranked(int(d), float(key), str(ids[d])) for d, key in keys]


# Candidates read per round when phrases filter a page, and the most tried before the
# phrases are checked in SQL over every candidate.
_PHRASE_WINDOW: Final = 64
_PHRASE_WINDOW_MAX: Final = 4096


def _rank_with_phrases(
    con: duckdb.DuckDBPyConnection,
    workspace: str,
    params: dict[str, Any],
    phrases: list[str],
    plain: bool,
) -> tuple[list[_Ranked], dict[str, tuple[Any, ...]]]:
    """One page of events that also contain every phrase, best first, with their rows.

    Checking a phrase needs the event's text, so it is checked on the best candidates
    first: the top ``window`` by score (through the event id index), the window growing
    until the page is full or the candidates run out. The first page-full found this way
    is exactly the page a check over every candidate would give, since any candidate
    outside the window ranks below all of them. Past the largest window, SQL checks
    every candidate."""
    limit, offset = params["limit"], params["offset"]
    window = max(_PHRASE_WINDOW, limit + offset)
    while window <= _PHRASE_WINDOW_MAX:
        candidates = _rank(con, {**params, "limit": window, "offset": 0}, plain)
        rows = _events_by_id(con, workspace, [c.event_id for c in candidates], phrases)
        passing = [c for c in candidates if c.event_id in rows]
        if len(passing) >= offset + limit or len(candidates) < window:
            return passing[offset : offset + limit], rows
        window *= 8
    phrase_sql = "".join(f" AND regexp_matches({_BODY}, $phrase{k})" for k in range(len(phrases)))
    ranked = _rank(
        con, {**params, **{f"phrase{k}": p for k, p in enumerate(phrases)}}, False, phrase_sql
    )
    return ranked, _events_by_id(con, workspace, [r.event_id for r in ranked])


def _filter_key(flt: SearchFilter) -> dict[str, Any]:
    return {
        "provider": flt.provider, "project": flt.project, "session": flt.session, "kind": flt.kind,
        "model": flt.model, "since": flt.since.isoformat() if flt.since else None,
        "until": flt.until.isoformat() if flt.until else None, "tag": flt.tag,
        "include_hidden": flt.include_hidden,
    }  # fmt: skip


# What an event contributes to the index: its text and its tool input (JSON text).
_BODY: Final = "concat_ws(' ', e.text, CAST(e.tool_input AS VARCHAR))"

_SEARCH_SQL: Final = """
WITH /* clauses */
scored AS (/* scored */),
/* ranked */
SELECT doc, key FROM ranked ORDER BY key DESC, doc
"""

# What one term adds to the score of each event holding it (BM25), from a posting `{p}`
# and the term's idf. Statistics ($n, $avgdl, the df) are those of the snapshot the
# first page pinned; a constant df makes the idf fold before the scan.
_IDF: Final = "ln(1 + ($n - {df} + 0.5) / ({df} + 0.5))"
_PART: Final = "{idf} * {p}.tf * ($k1 + 1) / ({p}.tf + $k1 * (1 - $b + $b * {p}.dl / $avgdl))"


def _part(df: int, p: str) -> str:
    """:data:`_PART` of posting ``p`` for a term of document frequency ``df``."""
    return _PART.format(idf=_IDF.format(df=df), p=p)


def _key(score: str) -> str:
    """The ranking key of ``score``: in billionths, rounded, so that re-summing the parts
    in another order gives the same key (and rounding x * 1e9 costs a fraction of
    round(x, 9))."""
    return f"round(({score}) * {SCORE_SCALE:.0f})"


# One term's postings (a constant term prunes the scan to its row groups).
_POSTINGS: Final = "SELECT p.doc, p.tf, p.dl FROM search_postings p WHERE p.term_id = {term}"
_TERM: Final = "\nt{j} AS (SELECT p.doc, {part} AS part FROM ({postings}) p),"

# Each clause (c0, c1, …): the events it matches. A clause of one term is that term's
# postings, scored once joined to the other clauses (only the events matching them all
# are then scored). A clause of alternatives sums the parts of those an event holds:
# two are outer-joined (faster than grouping, measured on a million events); a few
# more are stacked and grouped (faster than a chain of outer joins); many (a prefix's
# expansion) are read in one scan, each posting joined to its term's idf (planning a
# scan per term then costs more than it saves).
_CLAUSE_ONE: Final = "\nc{i} AS ({postings}),"
_CLAUSE_TWO: Final = """
c{i} AS (
    SELECT coalesce(a.doc, b.doc) AS doc, coalesce(a.part, 0) + coalesce(b.part, 0) AS part
    FROM t{j} a FULL JOIN t{k} b ON b.doc = a.doc
),"""
_CLAUSE_FEW: Final = """
c{i} AS (SELECT doc, sum(part) AS part FROM ({stacked}) GROUP BY doc),"""
_CLAUSE_MANY: Final = """
c{i} AS (
    SELECT p.doc, sum({part}) AS part
    FROM search_postings p
    JOIN (SELECT term_id, {idf} AS idf
          FROM (SELECT unnest({terms}) AS term_id, unnest({dfs}) AS df)) w
      ON w.term_id = p.term_id
    WHERE p.term_id IN ({listed})
    GROUP BY p.doc
),"""
_FEW_MAX: Final = 8  # alternatives stacked; more are read in one scan


class _Clauses(NamedTuple):
    """The common tables of a query's clauses, and for each clause its score part as
    an expression over its row (``{c}``: the clause's alias) and its postings' count."""

    sql: str
    parts: list[str]
    sizes: list[int]


def _clauses_sql(clauses: list[list[tuple[int | None, int]]]) -> _Clauses:
    """The common tables of ``clauses`` (each a list of its terms' numbers, ``None`` for
    a term the index does not hold, and document frequencies): one per term of a clause
    of a few alternatives (:data:`_TERM`), then one per clause (:data:`_CLAUSE_ONE` and
    the others)."""
    terms, tables, parts, j = [], [], [], 0
    for i, clause in enumerate(clauses):
        numbers, dfs = [t for t, _ in clause], [int(df) for _, df in clause]
        parts.append("{c}.part")
        if len(clause) == 1:
            tables.append(
                _CLAUSE_ONE.format(i=i, postings=_POSTINGS.format(term=sql.constant(numbers[0])))
            )
            parts[-1] = _part(dfs[0], "{c}")
        elif len(clause) > _FEW_MAX:
            tables.append(_CLAUSE_MANY.format(
                i=i, part=_PART.format(idf="w.idf", p="p"), idf=_IDF.format(df="df"),
                terms=sql.constant(numbers), dfs=sql.constant(dfs), listed=sql.literals(numbers)))  # fmt: skip
        else:
            first = j
            for term, df in clause:
                postings = _POSTINGS.format(term=sql.constant(term))
                terms.append(_TERM.format(j=j, part=_part(df, "p"), postings=postings))
                j += 1
            if len(clause) == 2:
                tables.append(_CLAUSE_TWO.format(i=i, j=first, k=first + 1))
            else:
                stacked = " UNION ALL ".join(f"SELECT doc, part FROM t{t}" for t in range(first, j))
                tables.append(_CLAUSE_FEW.format(i=i, stacked=stacked))
    return _Clauses("".join(terms + tables), parts, [sum(int(df) for _, df in c) for c in clauses])


_JOIN_MAX: Final = 24  # clauses joined; more are stacked and counted


def _scored_sql(clauses: _Clauses) -> str:
    """An event matches when it matched every clause. Up to :data:`_JOIN_MAX` clauses
    are joined on the event, their parts summed in clause order, the largest clause
    first: DuckDB, which cannot tell one term's postings from another's count, then
    builds its hash tables from the smaller ones and pushes their range into the
    largest one's scan. More clauses are stacked and grouped by event, which matched
    them all when it has a row of each (DuckDB takes longer to plan a join of many
    clauses than to run it). The first table is ``m`` (exclusions join it)."""
    n = len(clauses.parts)
    if n > _JOIN_MAX:
        stacked = " UNION ALL ".join(
            f"SELECT c{i}.doc, {part.format(c=f'c{i}')} AS part FROM c{i}"
            for i, part in enumerate(clauses.parts)
        )
        return (
            f"SELECT m.doc, {_key('sum(m.part)')} AS key FROM ({stacked}) m /* excluded */ "
            f"GROUP BY m.doc HAVING count(*) = {n}"
        )
    order = sorted(range(n), key=lambda i: -clauses.sizes[i])
    alias = {i: "m" if i == order[0] else f"c{i}" for i in range(n)}
    total = " + ".join(part.format(c=alias[i]) for i, part in enumerate(clauses.parts))
    joins = "".join(f" JOIN c{i} ON c{i}.doc = m.doc" for i in order[1:])
    return f"SELECT m.doc, {_key(total)} AS key FROM c{order[0]} m{joins} /* excluded */"


# The hits' rows, read through the event id index. DuckDB serves only a filter on the
# indexed column alone, a list of constants, from the index (a joined set of ids, or a
# second predicate, scans every event), so the workspace is checked afterwards.
# With phrases, the events whose body lacks one come back without their row (only
# their id), so that candidates that fail the phrase never cross into Python.
_HITS_SQL: Final = """
SELECT event_id, workspace, {matched} AS matched,
       CASE WHEN matched THEN provider END, CASE WHEN matched THEN session_id END,
       CASE WHEN matched THEN timezone('UTC', ts) END, CASE WHEN matched THEN kind END,
       CASE WHEN matched THEN {body} END
FROM events e
WHERE event_id IN ({ids})
"""


def _events_by_id(
    con: duckdb.DuckDBPyConnection, workspace: str, ids: list[str], phrases: Sequence[str] = ()
) -> dict[str, tuple[Any, ...]]:
    """(provider, session id, time, kind, body) of each event in ``ids`` whose body
    matches every regex of ``phrases``."""
    if not ids:
        return {}
    matched = " AND ".join(f"regexp_matches({_BODY}, {sql.constant(p)})" for p in phrases)
    statement = _HITS_SQL.format(matched=matched or "true", body=_BODY, ids=sql.literals(ids))
    rows = con.execute(statement).fetchall()
    return {row[0]: row[3:] for row in rows if row[1] == workspace and row[2]}


# Events holding an excluded term leave the matches. Found from the excluded terms'
# postings (a lookup the sorted postings serve), never by probing every match: and only
# written into the query when there are excluded terms, since even an empty list makes
# DuckDB scan the postings.
_EXCLUDED: Final = """
    ANTI JOIN (SELECT x.doc FROM search_postings x WHERE x.term_id IN (/* excluded terms */)) gone
    ON gone.doc = m.doc
"""

# Withdrawn events whose postings the publish step has not dropped yet leave the
# matches (written in only while there are such withdrawals).
_WITHDRAWN: Final = """
    ANTI JOIN (SELECT d.doc FROM search_docs d
               SEMI JOIN search_withdrawn w ON w.workspace = d.workspace AND w.event_id = d.event_id
               WHERE d.workspace = $ws) withdrawn
    ON withdrawn.doc = m.doc
"""

# Filters read only the small columns of the matching events; the text of the winners
# alone is fetched at the end.
_RANKED_FILTERED: Final = """
ranked AS (
    SELECT s.doc, s.key
    FROM scored s
    JOIN search_docs d ON d.workspace = $ws AND d.doc = s.doc
    JOIN events e ON e.workspace = $ws AND e.event_id = d.event_id
    WHERE e.import_id <= $snapshot
      AND ($after_key IS NULL OR s.key < $after_key
           OR (s.key = $after_key AND s.doc > $after_doc))
      /* filters */
      /* phrases */
    ORDER BY s.key DESC, s.doc
    LIMIT $limit OFFSET $offset
)
"""

_RANKED_PLAIN: Final = """
ranked AS (
    SELECT doc, key FROM scored
    ORDER BY key DESC, doc
    LIMIT $limit OFFSET $offset
)
"""
