"""The text side of a search: what a query means (:func:`parse_query`: words ANDed,
``OR``, ``-word``/``NOT``, ``"phrases"``, ``prefix*``) and how a hit's text is shown
(:func:`snippet`: a one-line window around the first match, with the words' spans)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final, Literal

from agentlake import sql
from agentlake.errors import ConfigurationError
from agentlake.load.terms import query_words

_TOKEN: Final = re.compile(r'"([^"]*)"|(\S+)')
_NON_SPACE: Final = re.compile(r"\S")


AtomKind = Literal["word", "prefix", "phrase"]


@dataclass(frozen=True, slots=True)
class Atom:
    """One searchable unit: a word, a prefix (``word*``) or a phrase."""

    text: str
    kind: AtomKind


@dataclass(frozen=True, slots=True)
class ParsedQuery:
    """Clauses that must all match (each an OR of atoms), and excluded words."""

    clauses: tuple[tuple[Atom, ...], ...]
    excluded: tuple[str, ...] = ()
    # The positive words and phrases as typed, without operators: what semantic search
    # embeds (the model reads case and punctuation, and stop words too).
    meaning: str = field(default="", compare=False)
    # The phrases typed in quotes (a word joined by punctuation is a phrase only to the
    # index): semantic candidates must contain these.
    quoted: tuple[str, ...] = field(default=(), compare=False)

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
                out += query_words(atom.text)
        return out


def parse_query(query: str) -> ParsedQuery:
    """Parse the query language of this module; raises ConfigurationError when nothing
    searchable remains."""
    clauses: list[list[Atom]] = []
    excluded: list[str] = []
    typed: list[str] = []  # the positive atoms as typed
    quoted: list[str] = []
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
            words = query_words(phrase)
            atom = (
                Atom(" ".join(words), "phrase")
                if len(words) > 1
                else (Atom(words[0], "word") if words else None)
            )
        else:
            assert word is not None
            prefix = word.endswith("*")
            words = query_words(word)
            # A word joined by punctuation (ERR_OSSL_EVP, webpack.config.js, X-Request-Id)
            # is several words to the index: its words must all occur, in order.
            atom = (
                Atom(" ".join(words), "phrase")
                if len(words) > 1 and not prefix
                else Atom(words[0], "prefix" if prefix and len(words) == 1 else "word")
                if words
                else None
            )
        if atom is None:
            negate = join_next = False
            continue
        if negate:
            excluded.extend(query_words(atom.text))
        else:
            typed.append(phrase if phrase is not None else (word or "").rstrip("*"))
            if phrase is not None and atom.kind == "phrase" and not join_next:
                quoted.append(atom.text)
            if join_next:
                clauses[-1].append(atom)
            else:
                clauses.append([atom])
        negate = join_next = False
    if not clauses and excluded:
        # Only exclusions ("-foo", "--force") find nothing on their own: the text is what
        # is looked for, as a command-line flag pasted into a search usually is.
        return ParsedQuery(
            tuple((Atom(word, "word"),) for word in excluded), meaning=" ".join(excluded)
        )
    if not clauses:
        raise ConfigurationError(f"nothing to search for in {query!r}: give at least one word")
    return ParsedQuery(
        tuple(tuple(c) for c in clauses), tuple(excluded), " ".join(typed), tuple(quoted)
    )


def snippet(text: str, words: list[str], width: int = 120) -> tuple[str, list[tuple[int, int]]]:
    """A one-line window of ``text`` (whitespace runs shown as one space) around the
    first match, and the spans of every query word (by its start, so stems match their
    inflections) inside that window.

    Only the neighbourhood of the first match is normalized: a hit in a tool output of
    megabytes costs what a short one does (joining its every word took milliseconds
    per hit), and the match is looked for where the index read the event. The window
    is the one the whole text would give unless whitespace runs longer than the window
    surround the match."""
    firsts = [
        m.start()
        for w in words
        if (
            m := re.compile(r"\b" + re.escape(w[:6]), re.IGNORECASE).search(
                text, 0, sql.INDEXED_CHARS
            )
        )
    ]
    at = min(firsts, default=0)
    lo, hi = max(0, at - 2 * width), at + 4 * width
    flat = " ".join(text[lo:hi].split())
    # Where the match lands in `flat`: after what precedes it, and the space between
    # (none when it follows punctuation without a space).
    before = " ".join(text[lo:at].split())
    at_flat = len(before) + 1 if before and text[at - 1].isspace() else len(before)
    start = max(0, at_flat - width // 3)
    piece = flat[start : start + width]
    spans = []
    for w in words:
        for m in re.finditer(r"\b" + re.escape(w[:6]) + r"\w*", piece.lower()):
            spans.append((m.start(), m.end()))
    more_before = start > 0 or (lo > 0 and _NON_SPACE.search(text, 0, lo) is not None)
    more_after = start + width < len(flat) or _NON_SPACE.search(text, hi) is not None
    prefix = "…" if more_before else ""
    suffix = "…" if more_after else ""
    shift = len(prefix)
    return prefix + piece + suffix, sorted((a + shift, b + shift) for a, b in set(spans))
