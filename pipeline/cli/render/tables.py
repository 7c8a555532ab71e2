"""Column policies shared by every human table: which columns a width can hold, how wide
each one is, and how ids, names, numbers and free text are cut to fit.

A view declares its columns (:class:`Column`: a header, a :data:`ColumnKind`, a drop
rank), adds rows of strings to a :class:`Grid` and shows it; the grid decides every
width itself from the console's width, so rich never has to squeeze, wrap or cut a
cell::

    grid = Grid(
        Column("model", "name"),             # breaks or is elided only at - / . space
        Column("provider", "label"),         # never cut, never wrapped
        Column("calls", "number", drop=1),   # the first to go when the width runs out
        Column("total", "number"),
        title="tokens by model",
    )
    grid.add_row(model, provider, count(calls), count(total, compact=not is_wide(console)))
    grid.show(console)

The rules, one helper each:

* a header is never cut: no column is narrower than its header (:func:`plan_widths`);
* numbers, times and labels (provider ids, kinds, statuses) keep their full width and
  never wrap;
* ids keep at least :data:`MIN_ID` characters, more when the ids shown need them to be
  told apart (:func:`id_width`), and all of them when the width allows;
* names (models, projects, paths) break or are elided with ``…`` only at a boundary
  (``-``, ``/``, ``.``, space), never inside a word (:func:`wrap_name`,
  :func:`elide_name`); a one-line name is elided only once no column is left to drop;
* when the columns' minimum widths do not fit, whole columns are dropped, highest
  ``drop`` first, rather than squeezing the rest (:meth:`Grid.show` returns them);
* width left over goes to names, then to free text up to a readable width, then to
  ids, then to free text again;
* an empty result is one line saying so, under which workspace and filters, pointing
  at ``agentlake doctor`` (:func:`say_nothing`).

Views choose their column sets with :func:`is_wide` (the full set from :data:`WIDE`
columns on; fewer or merged columns below) and format values with :func:`count`,
:func:`usd` and :func:`when`. Where a model name can come from two providers, show the
provider beside it (a ``label`` column).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Final, Literal

from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

ColumnKind = Literal["number", "label", "when", "id", "name", "text"]
"""``number``, ``label`` (provider ids, kinds, statuses) and ``when`` keep their full
width; ``id`` keeps at least :data:`MIN_ID` characters; ``name`` breaks only at
boundaries; ``text`` (titles, snippets, messages) takes what is left."""
Elide = Literal["end", "start"]

WIDE: Final = 120  # from this many columns on, tables show their full column sets
MIN_ID: Final = 8
GAP: Final = 2  # two spaces between columns (collapsed padding, no rules)
NAME_FLOOR: Final = 16  # a one-line name is not elided below this (or its full length)
TEXT_FLOOR: Final = 12
TEXT_WORD: Final = 20  # free text is not narrowed below its longest word up to this long
TEXT_READABLE: Final = 30  # free text gets this much before ids grow past MIN_ID
DOCTOR_HINT: Final = "`agentlake doctor` shows what was imported and why something is missing"


@dataclass(frozen=True, slots=True)
class Name:
    """A one-line name cell that keeps its own end (``keep``) whatever its column's
    ``elide``: a model under the project paths of a breakdown."""

    text: str
    keep: Elide = "end"


@dataclass(frozen=True, slots=True)
class Id:
    """An id cell in a column of another kind (the sessions above their models in a
    breakdown): whole when the column turns out wide enough, else its first ``short``
    characters (measured as those)."""

    value: str
    short: int = MIN_ID


Cell = str | Text | Name | Id

_FIXED: Final = ("number", "label", "when")
_ALL: Final = ("number", "label", "when", "id", "name", "text")
# A segment is a word and the separators after it (a dot opening a word, as in
# `/.claude`, stays with the word); names break between segments.
_AFTER: Final = re.compile(r"\.*[^-/. ]+[-. ]*/?|[-/. ]+")
_BEFORE: Final = re.compile(r"[-/. ]*[^-/. ]+|[-/. ]+$")


@dataclass(frozen=True, slots=True)
class Column:
    """One column of a :class:`Grid`. ``drop`` 0 keeps it at every width; otherwise it
    is dropped when the minimum widths do not fit, highest ``drop`` first (the
    rightmost of equals first). ``wrap``: names and text take more lines (names break at
    boundaries) instead of one elided line. ``elide``: a one-line name keeps its start
    (models) or its end (paths). ``floor`` overrides the narrowest width a name or text
    is shown at."""

    header: str
    kind: ColumnKind = "text"
    drop: int = 0
    wrap: bool = False
    elide: Elide = "end"
    floor: int | None = None
    footer: str = ""

    @property
    def justify(self) -> Literal["left", "right"]:
        """Numbers align right, everything else left."""
        return "right" if self.kind == "number" else "left"


@dataclass(frozen=True, slots=True)
class Fitted:
    """A grid laid out for one width: the rich table and the columns left out of it."""

    table: Table
    dropped: tuple[Column, ...]


class Grid:
    """Rows of cells under :class:`Column` policies, laid out for a width on demand.
    Cells are strings (several lines joined by ``\\n``), rich :class:`~rich.text.Text`
    in text columns, or :class:`Name` and :class:`Id` (a name or an id in a column of
    another kind); ids and names are given whole and cut by the grid."""

    def __init__(
        self, *columns: Column, title: str | None = None, show_header: bool = True
    ) -> None:
        self.columns = columns
        self.title = title
        self.show_header = show_header
        self.rows: list[tuple[tuple[Cell, ...], str | None]] = []

    def add_row(self, *cells: Cell, style: str | None = None) -> None:
        """Append one row (one cell per column, in order)."""
        if len(cells) != len(self.columns):
            raise ValueError(f"{len(cells)} cells for {len(self.columns)} columns")
        self.rows.append((cells, style))

    def fit(self, width: int) -> Fitted:
        """The table for ``width`` columns: every line of it fits when the columns that
        cannot be dropped fit at their minimums (the views make sure they do at 80)."""
        cols = self.columns
        sizes = [bounds(c, [row[i] for row, _ in self.rows]) for i, c in enumerate(cols)]
        widths = plan_widths(cols, sizes, width)
        shown = [i for i, w in enumerate(widths) if w is not None]
        table = Table(
            title=self.title,
            title_justify="left",
            show_header=self.show_header,
            box=box.SIMPLE_HEAD,
            show_edge=False,
            pad_edge=False,
            collapse_padding=True,
            show_footer=any(c.footer for c in cols),
        )
        for i in shown:
            col, w = cols[i], widths[i]
            assert w is not None
            wraps = col.kind == "text" and col.wrap
            table.add_column(
                col.header,
                footer=col.footer,
                justify=col.justify,
                width=w,
                no_wrap=not wraps,
                overflow="fold" if wraps else "ellipsis",
            )
        for row, style in self.rows:
            table.add_row(*(shape(cols[i], row[i], widths[i] or 0) for i in shown), style=style)
        return Fitted(table, tuple(c for c, w in zip(cols, widths, strict=True) if w is None))

    def show(self, console: Console) -> tuple[Column, ...]:
        """Print the grid at the console's width; returns the columns it left out."""
        fitted = self.fit(console.width)
        console.print(fitted.table)
        return fitted.dropped


# -- widths ------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Bounds:
    """The widths a column can take: ``natural`` shows every cell whole; ``soft`` is
    the least it takes before columns are dropped (a one-line name whole); ``hard`` the
    least once nothing is left to drop (a name elided to :data:`NAME_FLOOR`); ``least``
    the last resort (the header, :data:`MIN_ID` for ids)."""

    natural: int
    soft: int
    hard: int
    least: int


def bounds(col: Column, cells: Sequence[Cell]) -> Bounds:
    """The :class:`Bounds` of a column holding ``cells``."""
    lines = [line for cell in cells for line in _plain(cell).split("\n")]
    header = cell_len(col.header)
    natural = max([header, cell_len(col.footer), *map(cell_len, lines)])
    if col.kind in _FIXED:
        return Bounds(natural, natural, natural, natural)
    if col.kind == "id":
        short = min(natural, max(header, id_width(lines)))
        return Bounds(natural, short, short, min(natural, max(header, MIN_ID)))
    if col.kind == "name" and col.wrap:
        longest = max((cell_len(s) for line in lines for s in segments(line)), default=0)
        base = col.floor or max(longest, NAME_FLOOR)
    elif col.kind == "name":
        base = col.floor or NAME_FLOOR
    else:  # text: room for its longest word (up to a point) so that words are not split
        longest = max((cell_len(w) for line in lines for w in line.split()), default=0)
        base = col.floor or max(TEXT_FLOOR, min(longest, TEXT_WORD))
    hard = min(natural, max(header, base))
    soft = natural if col.kind == "name" and not col.wrap else hard
    return Bounds(natural, soft, hard, min(natural, max(header, 1)))


def plan_widths(cols: Sequence[Column], sizes: Sequence[Bounds], width: int) -> list[int | None]:
    """Each column's width (``None``: dropped) so that a row fits ``width``: drop
    columns until the soft minimums fit (then take back any that fits again), squeeze
    names and text only when nothing is left to drop, then grow text to
    :data:`TEXT_READABLE`, ids (to the whole id or not at all: a cut long id reads as
    a broken one), and text again towards their natural widths."""
    shown = list(range(len(cols)))

    def need(among: Sequence[int]) -> int:
        return sum(sizes[i].soft for i in among) + GAP * (len(among) - 1)

    dropped: list[int] = []
    while need(shown) > width and any(cols[i].drop for i in shown):
        victim = max((i for i in shown if cols[i].drop), key=lambda i: (cols[i].drop, i))
        shown.remove(victim)
        dropped.append(victim)
    for i in sorted(dropped, key=lambda i: (cols[i].drop, i)):
        if need([*shown, i]) <= width:
            shown = sorted([*shown, i])
    got = {i: sizes[i].soft for i in shown}
    spare = width - need(shown)
    # Nothing left to drop: squeeze names to their hard minimums, then free text, then
    # (the last resort, splitting words) everything to its headers.
    for floor, kinds in (("hard", _ALL), ("least", ("text",)), ("least", _ALL)):
        among = [i for i in shown if cols[i].kind in kinds]
        spare = _squeeze(got, {i: getattr(sizes[i], floor) for i in among}, spare)
    natural = [b.natural for b in sizes]
    readable = [min(b.natural, max(b.soft, TEXT_READABLE)) for b in sizes]
    spare = _grow([i for i in shown if cols[i].kind == "name"], got, natural, spare)
    spare = _grow([i for i in shown if cols[i].kind == "text"], got, readable, spare)
    for i in (i for i in shown if cols[i].kind == "id"):
        if 0 < natural[i] - got[i] <= spare:
            spare -= natural[i] - got[i]
            got[i] = natural[i]
    _grow([i for i in shown if cols[i].kind == "text"], got, natural, spare)
    return [got.get(i) for i in range(len(cols))]


def _grow(cols: list[int], got: dict[int, int], target: Sequence[int], spare: int) -> int:
    """Share ``spare`` among ``cols`` one character at a time, narrowest first (so two
    wrapping columns end up alike rather than one whole and one in shreds)."""
    while spare > 0:
        short = [i for i in cols if got[i] < target[i]]
        if not short:
            break
        got[min(short, key=lambda i: (got[i], i))] += 1
        spare -= 1
    return spare


def _squeeze(got: dict[int, int], floor: dict[int, int], spare: int) -> int:
    """Take characters from the columns furthest above ``floor`` until ``spare`` is no
    longer negative (or every column is at its floor)."""
    while spare < 0:
        room = [i for i in floor if got[i] > floor[i]]
        if not room:
            break
        got[max(room, key=lambda i: (got[i] - floor[i], i))] -= 1
        spare += 1
    return spare


def unique_prefix(ids: Iterable[str]) -> int:
    """How many leading characters tell the distinct ``ids`` apart (like git's short
    ids); 0 for fewer than two."""
    need = 0
    for a, b in itertools.pairwise(sorted(set(ids))):
        common = next((k for k, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), None)
        need = max(need, (min(len(a), len(b)) if common is None else common) + 1)
    return need


# -- cells -------------------------------------------------------------------------------
def shape(col: Column, cell: Cell, width: int) -> str | Text:
    """``cell`` cut for ``width`` by its column's kind (each of its lines separately)."""
    if isinstance(cell, Name):
        return elide_name(cell.text, width, keep=cell.keep)
    if isinstance(cell, Id):
        return cell.value if cell_len(cell.value) <= width else cell.value[: cell.short]
    if isinstance(cell, Text):
        if col.kind == "text" and not col.wrap and cell.cell_len > width:
            cut = cell.copy()
            cut.truncate(width, overflow="ellipsis")
            return cut
        return cell
    lines = cell.split("\n")
    if col.kind == "id":
        return "\n".join(cut_id(line, width) for line in lines)
    if col.kind == "name" and col.wrap:
        return "\n".join(part for line in lines for part in wrap_name(line, width))
    if col.kind in ("name", "text") and not col.wrap:
        return "\n".join(elide_name(line, width, keep=col.elide) for line in lines)
    return cell


def id_width(ids: Iterable[str]) -> int:
    """The short width of these ids: :data:`MIN_ID`, or more where two of them share
    a longer prefix."""
    return max(MIN_ID, unique_prefix(ids))


def cut_id(value: str, width: int) -> str:
    """The id's first ``width`` characters (a usable prefix: commands accept one)."""
    return value[: max(width, MIN_ID)]


def segments(name: str) -> list[str]:
    """``name`` in pieces that each end after a boundary: ``claude-``, ``sonnet-``, ``4-5``."""
    return _AFTER.findall(name)


def wrap_name(name: str, width: int) -> list[str]:
    """``name`` on lines of at most ``width`` characters, broken only after ``-``, ``/``,
    ``.`` or a space; a single segment wider than ``width`` is split as a last resort."""
    lines: list[str] = []
    line = ""
    for seg in segments(name):
        if line and cell_len(line + seg.rstrip(" ")) > width:
            lines.append(line.rstrip(" "))
            line = ""
        while cell_len(seg) > width > 0 and not line:
            lines.append(seg[:width])
            seg = seg[width:]
        line += seg
    return [*lines, line.rstrip(" ")] if line or not lines else lines


def elide_name(name: str, width: int, *, keep: Elide = "end") -> str:
    """``name`` whole when it fits, else its longest start (``keep="end"``) or end
    (``keep="start"``) made of whole segments, with ``…`` where the rest was."""
    if cell_len(name) <= width:
        return name
    if keep == "end":
        kept = ""
        for seg in segments(name):
            if cell_len(kept + seg.rstrip("-. ")) + 1 > width:
                break
            kept += seg
        return (kept.rstrip("-. ") or name[: max(width - 1, 1)]) + "…"
    pieces = _BEFORE.findall(name)
    tail = ""
    for piece in reversed(pieces):
        if cell_len(piece + tail) + 1 > width:
            break
        tail = piece + tail
    return "…" + (tail or name[-max(width - 1, 1) :])


def _plain(cell: Cell) -> str:
    if isinstance(cell, Name):
        return cell.text
    if isinstance(cell, Id):
        return cell.value[: cell.short]
    return cell.plain if isinstance(cell, Text) else cell


# -- values ------------------------------------------------------------------------------
def is_wide(console: Console) -> bool:
    """Whether tables on ``console`` show their full column sets (:data:`WIDE` columns)."""
    return console.width >= WIDE


def count(value: int | None, *, compact: bool = False) -> str:
    """A count with thousands separators; ``compact`` shows 100,000 and more as
    ``123k`` / ``1.23M`` (for narrow token columns)."""
    if value is None:
        return "—"
    if compact and abs(value) >= 1_000_000:
        return f"{value / 1e6:,.2f}M"
    if compact and abs(value) >= 100_000:
        return f"{value / 1e3:,.0f}k"
    return f"{value:,}"


def usd(value: float | None) -> str:
    """A cost in dollars: cents, or four decimals under a cent; ``—`` when unknown."""
    if value is None:
        return "—"
    return f"${value:,.2f}" if value >= 0.01 or value == 0 else f"${value:.4f}"


def when(value: datetime | date | None, *, seconds: bool = False) -> str:
    """A timestamp to the minute (or second); a date as ``YYYY-MM-DD``; ``—`` if none."""
    if value is None:
        return "—"
    if not isinstance(value, datetime):
        return f"{value:%Y-%m-%d}"
    return f"{value:%Y-%m-%d %H:%M:%S}" if seconds else f"{value:%Y-%m-%d %H:%M}"


# -- empty results -----------------------------------------------------------------------
def say_nothing(
    console: Console,
    what: str,
    *,
    workspace: str,
    filters: Mapping[str, object] | None = None,
    continued: bool = False,
) -> None:
    """One line for a result without rows: ``no WHAT in workspace 'W' match these
    filters (NAME VALUE, …); `agentlake doctor` …``. Filters that are ``None``, empty
    or ``False`` are left out; without any the line names just the workspace. A
    ``continued`` listing (a later page) says there is no more of it instead."""
    if continued:
        line = f"no more {what} in this listing"
    else:
        shown = [f"{k} {_shown(v)}" for k, v in (filters or {}).items() if _given(v)]
        cond = f" match these filters ({', '.join(shown)})" if shown else ""
        line = f"no {what} in workspace {workspace!r}{cond}; {DOCTOR_HINT}"
    console.print(line, highlight=False, markup=False, soft_wrap=True)


def _given(value: object) -> bool:
    """Whether a filter was given: not ``None``, ``False`` or empty."""
    if value is None or value is False:
        return False
    return not isinstance(value, (str, list, tuple)) or len(value) > 0


def _shown(value: object) -> str:
    return ", ".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)
