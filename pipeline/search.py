"""Ranked full-text search over the catalog's own inverted index (BM25, in SQL).

Query language: words are ANDed; ``a OR b`` accepts either; ``-word`` or ``NOT word``
excludes; ``"a phrase"`` must appear verbatim (case-insensitive); ``pref*`` matches
every indexed term with that prefix. Words are lower-cased and Porter-stemmed exactly as
the index was built. Filters narrow by provider, project, session, kind, model and time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any, Final

import duckdb

from agentlake.load.catalog import load_fts, open_for_read

from .errors import ConfigurationError

K1: Final = 1.2
B: Final = 0.75
PREFIX_EXPANSION: Final = 64  # most frequent terms a prefix expands to
_TOKEN: Final = re.compile(r'"([^"]*)"|(\S+)')
_WORD: Final = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True, slots=True)
class Atom:
    """One searchable unit: a word, a prefix (``word*``) or a phrase."""

    text: str
    kind: str  # "word" | "prefix" | "phrase"


@dataclass(frozen=True, slots=True)
class ParsedQuery:
    """Clauses that must all match (each an OR of atoms), and excluded words."""

    clauses: tuple[tuple[Atom, ...], ...]
    excluded: tuple[str, ...] = ()

    @property
    def phrases(self) -> list[str]:
        """Phrases that must appear verbatim."""
        return [
            a.text
            for clause in self.clauses
            for a in clause
            if a.kind == "phrase" and len(clause) == 1
        ]

    @property
    def words(self) -> list[str]:
        """Every positive word (for highlighting)."""
        out: list[str] = []
        for clause in self.clauses:
            for atom in clause:
                out += _WORD.findall(atom.text.lower())
        return out


def parse_query(query: str) -> ParsedQuery:
    """Parse the query language of this module; raises ConfigurationError when nothing
    searchable remains."""
    clauses: list[list[Atom]] = []
    excluded: list[str] = []
    negate = join_next = False
    for match in _TOKEN.finditer(query):
        phrase, word = match.group(1), match.group(2)
        if word == "OR":
            join_next = bool(clauses)
            continue
        if word == "AND":
            continue
        if word == "NOT":
            negate = True
            continue
        if word and word.startswith("-") and len(word) > 1:
            negate, word = True, word[1:]
        if phrase is not None:
            words = _WORD.findall(phrase.lower())
            atom = (
                Atom(" ".join(words), "phrase")
                if len(words) > 1
                else (Atom(words[0], "word") if words else None)
            )
        else:
            assert word is not None
            prefix = word.endswith("*")
            words = _WORD.findall(word.lower())
            atom = (
                Atom(words[0], "prefix" if prefix and len(words) == 1 else "word")
                if words
                else None
            )
        if atom is None:
            negate = join_next = False
            continue
        if negate:
            excluded.extend(_WORD.findall(atom.text))
        elif join_next:
            clauses[-1].append(atom)
        else:
            clauses.append([atom])
        negate = join_next = False
    if not clauses:
        raise ConfigurationError(f"nothing to search for in {query!r}: give at least one word")
    return ParsedQuery(tuple(tuple(c) for c in clauses), tuple(excluded))


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


def snippet(text: str, words: list[str], width: int = 120) -> tuple[str, list[tuple[int, int]]]:
    """A one-line window of ``text`` around the first match, and the spans of every
    query word (by its start, so stems match their inflections) inside that window."""
    flat = " ".join(text.split())
    lowered = flat.lower()
    hits = [m.start() for w in words for m in re.finditer(r"\b" + re.escape(w[:6]), lowered)]
    at = min(hits) if hits else 0
    start = max(0, at - width // 3)
    piece = flat[start : start + width]
    spans = []
    for w in words:
        for m in re.finditer(r"\b" + re.escape(w[:6]) + r"\w*", piece.lower()):
            spans.append((m.start(), m.end()))
    prefix = "…" if start else ""
    suffix = "…" if start + width < len(flat) else ""
    shift = len(prefix)
    return prefix + piece + suffix, sorted((a + shift, b + shift) for a, b in set(spans))


def _terms(con: duckdb.DuckDBPyConnection, workspace: str, atom: Atom, stemming: bool) -> list[str]:
    words = atom.text.split()
    if atom.kind == "prefix":
        rows = con.execute(
            "SELECT term FROM search_terms WHERE workspace = $ws AND starts_with(term, $p) AND df > 0 "
            "ORDER BY df DESC LIMIT $n",
            {"ws": workspace, "p": words[0], "n": PREFIX_EXPANSION},
        ).fetchall()
        return [r[0] for r in rows]
    if not stemming:
        return words
    stems = con.execute(
        "SELECT list_transform($w, x -> stem(x, 'porter'))", {"w": words}
    ).fetchone()
    return list(stems[0]) if stems else words


def search(
    catalog: Path,
    workspace: str,
    query: str,
    *,
    limit: int = 20,
    offset: int = 0,
    flt: SearchFilter | None = None,
) -> list[SearchHit]:
    """Events matching ``query`` ranked by BM25 (k1 = 1.2, b = 0.75), best first."""
    parsed = parse_query(query)
    flt = flt or SearchFilter()
    with open_for_read(catalog) as con:
        stemming = load_fts(con)
        clause_ids: list[int] = []
        terms: list[str] = []
        for i, clause in enumerate(parsed.clauses):
            for atom in clause:
                for term in _terms(con, workspace, atom, stemming):
                    clause_ids.append(i)
                    terms.append(term)
        excluded: list[str] = []
        for word in parsed.excluded:
            excluded += _terms(con, workspace, Atom(word, "word"), stemming)
        params: dict[str, Any] = {
            "ws": workspace, "clauses": clause_ids, "terms": terms, "nclauses": len(parsed.clauses),
            "excluded": excluded, "limit": limit, "offset": offset, "k1": K1, "b": B,
            "provider": flt.provider, "kind": flt.kind, "model": flt.model,
            "session": flt.session, "project": flt.project,
            "since": datetime.combine(flt.since, datetime.min.time()) if flt.since else None,
            "until": datetime.combine(flt.until + timedelta(days=1), datetime.min.time()) if flt.until else None,
        }  # fmt: skip
        phrase_sql = ""
        for n, phrase in enumerate(parsed.phrases):
            params[f"phrase{n}"] = phrase
            phrase_sql += f" AND contains(lower(regexp_replace(e.text, '[^A-Za-z0-9]+', ' ', 'g')), $phrase{n})"
        if not terms:
            return []
        text = _SEARCH_SQL.replace("/* phrases */", phrase_sql)
        rows = con.execute(text, params).fetchall()
    hits = []
    for event_id, provider, session_id, ts, kind, body, score in rows:
        snip, spans = snippet(body or "", parsed.words)
        hits.append(SearchHit(session_id, provider, kind, ts, float(score), snip, event_id, spans))
    return hits


_SEARCH_SQL: Final = """
WITH q AS (SELECT unnest($clauses) AS clause, unnest($terms) AS term),
st AS (
    SELECT greatest(docs, 1) AS n, total_length::DOUBLE / greatest(docs, 1) AS avgdl
    FROM search_state WHERE workspace = $ws
),
m AS (
    SELECT p.event_id, q.clause, p.tf, p.dl, t.df
    FROM search_postings p
    JOIN q ON q.term = p.term
    JOIN search_terms t ON t.workspace = p.workspace AND t.term = p.term
    WHERE p.workspace = $ws AND p.term IN (SELECT term FROM q)
),
scored AS (
    SELECT m.event_id,
           sum(ln(1 + (st.n - m.df + 0.5) / (m.df + 0.5))
               * m.tf * ($k1 + 1) / (m.tf + $k1 * (1 - $b + $b * m.dl / st.avgdl))) AS score
    FROM m, st
    GROUP BY m.event_id
    HAVING count(DISTINCT m.clause) = $nclauses
       AND NOT EXISTS (
           SELECT 1 FROM search_postings x
           WHERE x.workspace = $ws AND x.event_id = m.event_id
             AND x.term IN (SELECT unnest($excluded)))
),
-- Filters read only the small columns of the matching events; the text of the
-- winners alone is fetched at the end.
ranked AS (
    SELECT s.event_id, s.score
    FROM scored s
    JOIN events e ON e.workspace = $ws AND e.event_id = s.event_id
    WHERE ($provider IS NULL OR e.provider = $provider)
      AND ($kind IS NULL OR e.kind = $kind)
      AND ($model IS NULL OR e.model = $model)
      AND ($session IS NULL OR starts_with(e.session_id, $session))
      AND ($since IS NULL OR e.ts >= $since::TIMESTAMP AT TIME ZONE 'UTC')
      AND ($until IS NULL OR e.ts < $until::TIMESTAMP AT TIME ZONE 'UTC')
      AND ($project IS NULL OR EXISTS (
            SELECT 1 FROM sessions x
            WHERE x.workspace = $ws AND x.provider = e.provider AND x.session_id = e.session_id
              AND contains(lower(x.project_path), lower($project))))
      /* phrases */
    ORDER BY s.score DESC, s.event_id
    LIMIT $limit OFFSET $offset
)
SELECT e.event_id, e.provider, e.session_id, timezone('UTC', e.ts) AS ts, e.kind, e.text, r.score
FROM ranked r
JOIN events e ON e.workspace = $ws AND e.event_id = r.event_id
ORDER BY r.score DESC, r.event_id
"""
