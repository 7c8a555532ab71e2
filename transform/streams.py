"""Redaction across the chunks of a streamed message.

A provider can write one reply as several records (Claude Code writes one line per
content block of a streamed response), so a credential can be cut in two: each half alone
matches no rule (or only its first half does), yet the stored stream reads it whole. A
*stream* here is a run of consecutive prose events of one source that continue each
other: same session, same block type (``text`` or ``thinking``) and role.

Each pair of neighbours is checked through a window (the last :data:`WINDOW` characters
of the first, then the chunks that follow, until they hold :data:`WINDOW` characters)
with the same rules as :mod:`.redact`; a match that crosses the join is replaced as one
secret, the marker ending the first chunk and the chunks it covered losing their part.
Only pairs whose window holds a rule's trigger reach Python, so a batch with no such pair
costs a few vectorized string operations. Per-event redaction runs afterwards as usual.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

import polars as pl

from .redact import RULES, TRIGGERS

# How far before a join a secret may start: longer than a 4096-bit RSA private key in PEM
# (about 3.2 KB), so a key cut anywhere in its body is still seen from its BEGIN line.
WINDOW: Final = 4096

# The block types whose consecutive events can be chunks of one streamed message.
PROSE: Final = ("text", "thinking")

# The rules compiled for Python's engine, which gives match positions (the patterns use
# only syntax both engines read the same way; a test checks they agree).
_COMPILED: Final = tuple(
    (re.compile(pattern), re.sub(r"\$\{(\d+)\}", r"\\g<\1>", replacement))
    for _cls, pattern, replacement in RULES
)


def _continues(source: pl.Expr) -> pl.Expr:
    """Whether each row continues the stream of the row before it in its source."""

    def same(column: str) -> pl.Expr:
        return pl.col(column).shift(1).over(source) == pl.col(column)

    return (
        same("session_id")
        & same("block_type")
        & same("role")
        & pl.col("block_type").is_in(PROSE)
        & pl.col("text").is_not_null()
        & pl.col("text").shift(1).over(source).is_not_null()
    )


def join_pair(first: str, second: str) -> tuple[str, str]:
    """``first`` and ``second`` with every secret that crosses their join replaced by its
    marker, which ends the first part; what each rule keeps (a scheme, a header name)
    stays in front of the marker."""
    first, (second,) = join_chunks(first, [second])
    return first, second


def join_chunks(first: str, following: Sequence[str]) -> tuple[str, list[str]]:
    """:func:`join_pair` where the stream goes on through ``following`` (the chunks
    after ``first``, in order): a secret may end in any of them. Chunks a secret covers
    whole become empty; the one it ends in keeps what follows it."""
    rest = list(following)
    for pattern, replacement in _COMPILED:
        head = first[:-WINDOW] if len(first) > WINDOW else ""
        tail = first[len(head) :]
        window = tail + "".join(rest)
        join = len(tail)
        for match in pattern.finditer(window):
            if match.start() >= join:
                break
            if match.end() > join:
                first = head + window[: match.start()] + match.expand(replacement)
                rest = _cut(rest, match.end() - join)
                break
    return first, rest


def _cut(chunks: list[str], length: int) -> list[str]:
    """``chunks`` without their first ``length`` characters (taken from the front)."""
    out = []
    for chunk in chunks:
        take = min(length, len(chunk))
        out.append(chunk[take:])
        length -= take
    return out


def redact_across_chunks(frame: pl.DataFrame, source: str | None = None) -> pl.DataFrame:
    """``frame`` (raw events in source order) with secrets cut across stream chunks
    replaced in ``text``. Rows are grouped by ``source`` (a column) when given."""
    partition = pl.col(source) if source else pl.lit(0)
    flowing = (
        frame.with_row_index("_row")
        .select(
            pl.col("_row").shift(1).over(partition).alias("prev"),
            "_row",
            _continues(partition).alias("continues"),
        )
        .filter("continues")
    )
    if flowing.is_empty():
        return frame
    texts = frame.get_column("text")
    window = texts.gather(flowing["prev"]).str.slice(-WINDOW) + texts.gather(
        flowing["_row"]
    ).str.slice(0, WINDOW)
    pairs = flowing.filter(window.str.contains(TRIGGERS)).select("prev", "_row").rows()
    if not pairs:
        return frame
    # Where each stream goes on: a row's successor in its source, if it continues it.
    nexts = dict(zip(flowing["prev"].to_list(), flowing["_row"].to_list(), strict=True))
    return frame.with_columns(_rewritten(texts, pairs, nexts))


def _rewritten(
    texts: pl.Series, pairs: Sequence[tuple[int, int]], nexts: dict[int, int]
) -> pl.Series:
    """``texts`` with each candidate pair (previous row, row) joined by
    :func:`join_chunks`, reading the stream on past ``row`` (``nexts``: the row that
    continues a row) for :data:`WINDOW` characters, in order, so a later pair sees the
    chunks an earlier one rewrote."""
    changed: dict[int, str] = {}

    def current(row: int) -> str:
        text = changed.get(row, texts[row])
        assert isinstance(text, str)  # only rows that continue a stream, never null
        return text

    for prev, row in pairs:
        chain, size = [row], len(current(row))
        while size < WINDOW and (after := nexts.get(chain[-1])) is not None:
            chain.append(after)
            size += len(current(after))
        first = current(prev)
        rest = [current(r) for r in chain]
        new_first, new_rest = join_chunks(first, rest)
        if new_first != first:
            changed[prev] = new_first
            changed.update(zip(chain, new_rest, strict=True))
    if not changed:
        return texts
    indices = sorted(changed)
    return texts.scatter(indices, pl.Series([changed[i] for i in indices], dtype=pl.String))
