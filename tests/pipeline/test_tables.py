"""The column policies of pipeline/cli/render/tables.py on their own: names break and
are elided only at boundaries, widths are planned so that every line fits, headers stay
whole, ids keep 8 characters, numbers keep all of theirs, and low-value columns go first."""

from __future__ import annotations

import io
import random
import re
import string

import pytest
from rich.cells import cell_len
from rich.console import Console

from agentlake.cli.render.tables import (
    DOCTOR_HINT,
    MIN_ID,
    Column,
    ColumnKind,
    Grid,
    Id,
    Name,
    bounds,
    count,
    elide_name,
    plan_widths,
    say_nothing,
    segments,
    unique_prefix,
    usd,
    wrap_name,
)

NAMES = [
    "claude-sonnet-4-5-20250929",
    "gpt-5",
    "gemini-2.5-flash",
    "accounts/fireworks/models/llama-v3p1-405b-instruct",
    "/home/dev/src/github.example/platform-team/inventory-service",
    "/home/dev/.claude/projects/-home-dev-notes-cli/18f135d2-5f55-4203-b018-50c5a38fd547.jsonl",
    "Library/Application Support/Cursor",
    "<synthetic>",
    "global.anthropic.claude-sonnet-4-5-20250929-v1:0",
]
BOUNDARY = "-/. "


def render(grid: Grid, width: int) -> list[str]:
    console = Console(file=io.StringIO(), width=width, color_system=None, _environ={})
    grid.show(console)
    return str(console.file.getvalue()).splitlines()  # type: ignore[attr-defined]


def test_segments_cover_the_name_and_end_at_boundaries() -> None:
    assert segments("claude-sonnet-4-5") == ["claude-", "sonnet-", "4-", "5"]
    assert segments("/home/.claude/projects") == ["/", "home/", ".claude/", "projects"]
    for name in NAMES:
        parts = segments(name)
        assert "".join(parts) == name
        assert all(p[-1] in BOUNDARY for p in parts[:-1]), parts


@pytest.mark.parametrize("name", NAMES)
def test_a_wrapped_name_breaks_only_between_segments(name: str) -> None:
    longest = max(map(len, segments(name)))
    for width in range(longest, len(name) + 2):
        lines = wrap_name(name, width)
        assert all(cell_len(line) <= width for line in lines), (width, lines)
        pos = 0  # walk the name: each line is the next piece, each break after a boundary
        for line in lines[:-1]:
            assert name.startswith(line, pos), (width, lines)
            pos += len(line)
            while name[pos] == " ":
                pos += 1
            assert name[pos - 1] in BOUNDARY, (width, lines)
        assert name[pos:] == lines[-1]


@pytest.mark.parametrize("name", NAMES)
def test_an_elided_name_keeps_whole_segments(name: str) -> None:
    for width in range(6, len(name) + 2):
        start = elide_name(name, width)
        end = elide_name(name, width, keep="start")
        first, last = segments(name)[0].rstrip("-. "), re.split("[-/. ]", name)[-1]
        assert cell_len(start) <= width
        if start != name and len(first) + 1 <= width:
            kept = start.removesuffix("…")
            assert start.endswith("…") and name.startswith(kept)
            assert name[len(kept)] in BOUNDARY or kept[-1] in BOUNDARY, (width, start)
        assert cell_len(end) <= width
        if end != name and len(last) + 2 <= width:
            kept = end.removeprefix("…")
            assert end.startswith("…") and name.endswith(kept)
            assert kept[0] in BOUNDARY or name[-len(kept) - 1] in BOUNDARY, (width, end)


def test_unique_prefix_tells_the_ids_apart() -> None:
    assert unique_prefix(["abc"]) == 0
    assert unique_prefix(["agent-ab12", "agent-ab34", "zz"]) == 9
    assert unique_prefix(["same", "same"]) == 0  # one id (two providers may share it)
    assert unique_prefix(["ab", "abc"]) == 3


def test_counts_and_costs() -> None:
    assert count(1234) == "1,234" and count(None) == "—"
    assert count(123_456, compact=True) == "123k" and count(1_234_567, compact=True) == "1.23M"
    assert count(99_999, compact=True) == "99,999"
    assert usd(15.847) == "$15.85" and usd(0.0031) == "$0.0031" and usd(0) == "$0.00"
    assert usd(None) == "—"


# -- the width plan ----------------------------------------------------------------------


def test_columns_are_dropped_highest_rank_first_and_taken_back_when_they_fit() -> None:
    cols = [
        Column("id", "id"),
        Column("a", "number", drop=1),
        Column("b", "number", drop=2),
        Column("c", "number", drop=3),
    ]
    sizes = [
        bounds(c, [v])
        for c, v in zip(cols, ["0123456789ab", "x" * 10, "y" * 20, "z" * 4], strict=True)
    ]
    # 8 + 10 + 20 + 4 + gaps 6 = 48: everything
    assert plan_widths(cols, sizes, 48) == [8, 10, 20, 4]
    # at 40: c (rank 3) goes, then b (rank 2); c fits again beside a, b does not
    assert plan_widths(cols, sizes, 40) == [12, 10, None, 4]
    assert plan_widths(cols, sizes, 20) == [8, 10, None, None]


def test_names_are_elided_only_once_nothing_is_left_to_drop() -> None:
    cols = [Column("model", "name"), Column("calls", "number", drop=1), Column("n", "number")]
    sizes = [
        bounds(c, [v]) for c, v in zip(cols, ["claude-sonnet-4-5-20250929", "12", "3"], strict=True)
    ]
    assert plan_widths(cols, sizes, 40) == [26, 5, 1]
    assert plan_widths(cols, sizes, 30) == [26, None, 1]  # calls dropped, name whole
    assert plan_widths(cols, sizes, 20) == [17, None, 1]  # nothing to drop: elided


def test_an_id_grows_to_the_whole_id_or_not_at_all() -> None:
    cols = [Column("session", "id"), Column("n", "number")]
    uuid = "18f135d2-5f55-4203-b018-50c5a38fd547"
    sizes = [bounds(c, [v]) for c, v in zip(cols, [uuid, "1"], strict=True)]
    assert plan_widths(cols, sizes, 40) == [36, 1]
    assert plan_widths(cols, sizes, 38) == [8, 1]  # 36 + 2 + 1 does not fit: short form
    assert plan_widths(cols, sizes, 5) == [8, 1]  # never below 8 (nothing else to give)


KINDS: list[ColumnKind] = ["number", "label", "when", "id", "name", "text"]


def _cell(kind: ColumnKind, rng: random.Random) -> str:
    if kind == "number":
        return f"{rng.randrange(10 ** rng.randrange(1, 9)):,}"
    if kind == "label":
        return rng.choice(["claude-code", "codex", "ok", "validated-append"])
    if kind == "when":
        return "2026-05-04 23:53"
    if kind == "id":
        return rng.choice(["agent-", ""]) + "".join(rng.choices("0123456789abcdef-", k=32))
    if kind == "name":
        return rng.choice(NAMES)
    return " ".join(
        "".join(rng.choices(string.ascii_lowercase, k=rng.randrange(1, 12)))
        for _ in range(rng.randrange(1, 20))
    )


@pytest.mark.parametrize("seed", range(40))
def test_random_grids_fit_and_keep_their_promises(seed: int) -> None:
    rng = random.Random(seed)
    kinds = [rng.choice(KINDS) for _ in range(rng.randrange(2, 8))]
    cols = [
        Column(f"{kind[:3]}{i}", kind, drop=rng.choice([0, 0, 1, 2, 3]), wrap=rng.random() < 0.5)
        for i, kind in enumerate(kinds)
    ]
    rows = [[_cell(k, rng) for k in kinds] for _ in range(rng.randrange(1, 6))]
    for width in (60, 80, 100, 120, 160):
        grid = Grid(*cols)
        for row in rows:
            grid.add_row(*row)
        sizes = [bounds(c, [r[i] for r in rows]) for i, c in enumerate(cols)]
        widths = plan_widths(cols, sizes, width)
        kept = [i for i, w in enumerate(widths) if w is not None]
        least = sum(sizes[i].least for i in kept) + 2 * (len(kept) - 1)
        if least > width:  # not even the last resort fits: rich squeezes, no promises
            continue
        lines = render(grid, width)
        assert all(cell_len(line) <= width for line in lines), (width, lines)
        header = lines[0]
        for i in kept:
            assert cols[i].header in header.split(), (cols[i].header, header)
            w = widths[i]
            assert w is not None and w >= len(cols[i].header)
            if cols[i].kind in ("number", "label", "when"):
                assert w == sizes[i].natural
            if cols[i].kind == "id":
                assert w >= min(MIN_ID, sizes[i].natural)
        for i, c in enumerate(cols):  # a column that cannot be dropped is always shown
            if c.drop == 0:
                assert widths[i] is not None


def test_a_name_cell_keeps_its_own_end_in_a_path_column() -> None:
    grid = Grid(Column("project", "name", elide="start"))
    grid.add_row("/home/dev/src/github.example/platform-team/inventory-service")
    grid.add_row(Name("└ claude-sonnet-4-5-20250929"))
    grid.add_row("x" * 3)
    lines = render(grid, 20)
    assert lines[2].rstrip() == "…/inventory-service"
    assert lines[3].rstrip() == "└ claude-sonnet-4-5…"


# -- empty results -----------------------------------------------------------------------


def test_nothing_found_names_the_workspace_and_the_filters_given() -> None:
    console = Console(file=io.StringIO(), width=40, color_system=None)
    say_nothing(
        console, "sessions", workspace="w", filters={"provider": ["codex"], "text": None, "x": 0}
    )
    say_nothing(console, "sessions", workspace="w", filters={"since": None})
    lines = str(console.file.getvalue()).splitlines()  # type: ignore[attr-defined]
    assert lines == [
        f"no sessions in workspace 'w' match these filters (provider codex, x 0); {DOCTOR_HINT}",
        f"no sessions in workspace 'w'; {DOCTOR_HINT}",
    ]
    assert re.search("doctor", lines[0])


def test_an_id_cell_in_a_name_column_is_whole_or_short() -> None:
    uuid = "18f135d2-5f55-4203-b018-50c5a38fd547"
    # measured short, the id is whole only where the column is wide for its names
    for width, shown in ((60, uuid), (30, uuid[:8])):
        grid = Grid(Column("session", "name"))
        grid.add_row(Id(uuid, 8))
        grid.add_row(Name("└ accounts/fireworks/models/llama-v3p1-405b-instruct"))
        assert render(grid, width)[2].rstrip() == shown
