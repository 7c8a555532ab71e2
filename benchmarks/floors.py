"""The least CPU an import of a home can take with this stack: each piece of work every
import must do, done alone in the cheapest way the libraries offer, on an imported
catalog of that home.

    python -m benchmarks.floors HOME CATALOG [--scratch DIR]

* parse: DuckDB's typed JSON scan of the Claude Code lines (their message, usage and
  content, as a reader in SQL would take them), and orjson parsing the other JSONL
  lines of the home (the other providers' JSON documents and Cursor's database left
  out);
* tokenize: the import's tokenizer (:func:`agentlake.load.terms.postings`) over every
  event's text, in slices the size of the import's commits (and, aside, only finding
  the words of that text, below any tokenizer);
* redact: the import's redaction rules (:func:`agentlake.transform.redact.redact`)
  over the same text;
* embed: the model's own call (:meth:`agentlake.load.embedder.Embedder.embed`:
  tokenize and pool) over the text of every event the publish step embeds (prompts,
  replies and summaries: :data:`agentlake.load.vectors.EMBEDDED_KINDS`), in slices of
  the size the publish step embeds at once (loading the model not counted);
* write: the catalog's events inserted into a fresh catalog in one transaction (DuckDB
  writes whole row groups straight into the file, no log), their index built, and a
  checkpoint; then the search postings the same way, sorted by term, and a checkpoint;
  then the catalog's vectors, and a checkpoint.

Each piece belongs to a part: ``usage`` (parse, redact, write the events: what an
import without the search index must do), ``index`` (tokenize, write and sort the
postings) or ``vectors`` (embed, write the vectors); ``index`` and ``vectors`` together
are the publish step's floor. Aside, the publish step's semantic part itself
(:func:`agentlake.load.vectors.publish_vectors`) runs on a copy of the catalog whose
vectors were dropped: its CPU over the ``vectors`` floor is the semantic part's ratio.

Nothing of mapping, transforming, deduplicating, usage, sessions or receipts is counted,
and the rows are held in memory whole (beyond the import's ceiling): the figures are a
floor under any design, not a design. Prints each piece's wall and CPU seconds (the
process's, every thread included), their sum, and the CPU a rate of 100k records/s
allows on the machine's cores.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Final, Literal

import duckdb
import orjson
import polars as pl
import pyarrow as pa

from agentlake.load.catalog import load_fts, open_for_write
from agentlake.load.embedder import load_embedder
from agentlake.load.terms import postings
from agentlake.load.vectors import EMBEDDED_KINDS, SLICE_CHARS, publish_vectors
from agentlake.transform.redact import redact
from benchmarks.budgets import BUDGETS
from benchmarks.measure import usable_cores

GOAL_RECORDS_PER_S: Final = next(b.goal for b in BUDGETS if b.name == "usage_ready_records_per_s")
COMMIT_EVENTS = 12_600  # the benchmark import's events per commit
CLAUDE_COLUMNS = (
    "{type: 'VARCHAR', uuid: 'VARCHAR', sessionId: 'VARCHAR', timestamp: 'VARCHAR', "
    "requestId: 'VARCHAR', message: 'STRUCT(id VARCHAR, role VARCHAR, model VARCHAR, "
    "content JSON, usage STRUCT(input_tokens BIGINT, output_tokens BIGINT, "
    "cache_creation_input_tokens BIGINT, cache_read_input_tokens BIGINT))'}"
)

Part = Literal["usage", "index", "vectors"]


@dataclass
class Piece:
    """One piece of the floor: its wall and CPU seconds, how many rows (lines, events,
    postings) it did, and whether it counts in the floor (or is shown aside)."""

    name: str
    wall: float = 0.0
    cpu: float = 0.0
    rows: int = 0
    counted: bool = True
    part: Part = "usage"


@dataclass
class Floors:
    """The pieces measured, in order, and the records the catalog's imports read."""

    records: int = 0
    pieces: list[Piece] = field(default_factory=list)
    out: IO[str] | None = field(default=None, repr=False)  # where each piece is printed

    @contextmanager
    def piece(self, name: str, part: Part, *, counted: bool = True) -> Iterator[Piece]:
        """Time the block as the piece ``name`` of ``part``; the block sets its ``rows``."""
        piece = Piece(name, counted=counted, part=part)
        wall, cpu = time.perf_counter(), time.process_time()
        yield piece
        piece.wall, piece.cpu = time.perf_counter() - wall, time.process_time() - cpu
        self.pieces.append(piece)
        aside = "" if counted else " (aside)"
        print(
            f"  {name:52} {piece.rows:>11,} rows {piece.wall:6.2f} s wall "
            f"{piece.cpu:6.2f} s CPU{aside}",
            file=self.out,
            flush=True,
        )

    @property
    def cpu(self) -> float:
        """The CPU seconds of the pieces that count."""
        return sum(piece.cpu for piece in self.pieces if piece.counted)

    def cpu_of(self, part: Part) -> float:
        """The CPU seconds of the counted pieces of ``part``."""
        return sum(piece.cpu for piece in self.pieces if piece.counted and piece.part == part)

    @property
    def vectors_step_cpu(self) -> float | None:
        """The CPU seconds of the publish step's semantic part itself (the aside piece
        of the ``vectors`` part), None when it was not measured."""
        found = [p.cpu for p in self.pieces if not p.counted and p.part == "vectors"]
        return found[0] if found else None

    @property
    def wall(self) -> float:
        """The wall seconds of the pieces that count."""
        return sum(piece.wall for piece in self.pieces if piece.counted)

    def allowed_cpu(self, cores: int) -> float:
        """The CPU seconds the import goal allows for the records on ``cores`` cores."""
        return self.records / GOAL_RECORDS_PER_S * cores

    def as_json(self, cores: int) -> dict[str, Any]:
        """The figures as the benchmark artifact keeps them."""
        return {
            "pieces": [
                {"name": p.name, "part": p.part, "wall_s": p.wall, "cpu_s": p.cpu,
                 "rows": p.rows, "counted": p.counted}
                for p in self.pieces
            ],
            "cpu_seconds": self.cpu, "wall_seconds": self.wall, "records": self.records,
            "usage_cpu_seconds": self.cpu_of("usage"),
            # the publish step's floor: the search index and the vectors
            "index_cpu_seconds": self.cpu_of("index") + self.cpu_of("vectors"),
            "vectors_cpu_seconds": self.cpu_of("vectors"),
            "vectors_step_cpu_seconds": self.vectors_step_cpu,
            "vectors_floor_ratio": self.vectors_step_cpu / self.cpu_of("vectors")
            if self.vectors_step_cpu is not None and self.cpu_of("vectors") > 0 else None,
            "cores": cores, "goal_records_per_s": GOAL_RECORDS_PER_S,
            "allowed_cpu_seconds": self.allowed_cpu(cores),
        }  # fmt: skip


def parse(home: Path, floors: Floors) -> None:
    """The two parse floors."""
    claude = home / ".claude" / "projects"
    scan = duckdb.connect()
    with floors.piece("parse: Claude Code lines, DuckDB JSON scan", "usage") as piece:
        row = scan.execute(
            "SELECT count(*), sum(message.usage.input_tokens), sum(strlen(message.content)) "
            f"FROM read_json('{claude}/**/*.jsonl', format = 'newline_delimited', "
            f"columns = {CLAUDE_COLUMNS}, ignore_errors = true)"
        ).fetchone()
        piece.rows = int(row[0]) if row else 0
    scan.close()
    paths = sorted(path for path in home.rglob("*.jsonl") if not path.is_relative_to(claude))
    with floors.piece(f"parse: other JSONL lines ({len(paths):,} files), orjson", "usage") as piece:
        loads = orjson.loads
        for path in paths:
            for line in path.read_bytes().splitlines():
                if line:
                    loads(line)
                    piece.rows += 1


def _chunks(con: duckdb.DuckDBPyConnection, query: str) -> Iterator[pa.Table]:
    """``query``'s rows as tables of COMMIT_EVENTS rows."""
    reader = con.execute(query).to_arrow_reader(COMMIT_EVENTS)
    for batch in reader:
        yield pa.Table.from_batches([batch])


def tokenize(catalog: duckdb.DuckDBPyConnection, floors: Floors) -> None:
    """The tokenizing and redacting floors (reading the text out of the catalog not
    counted)."""
    events = list(
        _chunks(
            catalog,
            "SELECT text, CAST(tool_input AS VARCHAR) AS tool_input FROM a.events ORDER BY rowid",
        )
    )
    stem = duckdb.connect()
    stem.execute("SET threads = 1")
    stemmer = stem if load_fts(stem) else None
    with floors.piece(f"tokenize: the import's tokenizer ({len(events)} slices)", "index") as piece:
        for table in events:
            piece.rows += postings(table, stemmer)[0].num_rows
    stem.close()
    with floors.piece("redact: the text and tool inputs, the import's rules", "usage") as piece:
        for table in events:
            frame = pl.from_arrow(table)
            assert isinstance(frame, pl.DataFrame)
            piece.rows += frame.select(redact(pl.col("text")), redact(pl.col("tool_input"))).height
    # Below any tokenizer: only finding the words, as the import's tokenizer does first.
    word = pl.concat_str(
        [pl.col("text"), pl.col("tool_input")], separator=" ", ignore_nulls=True
    ).str.extract_all("[A-Za-z0-9]+")
    with floors.piece("tokenize: the words found, nothing more", "index", counted=False) as piece:
        for table in events:
            frame = pl.from_arrow(table)
            assert isinstance(frame, pl.DataFrame)
            piece.rows += frame.select(word.alias("word")).explode("word").height


def _embed_slices(catalog: duckdb.DuckDBPyConnection) -> list[list[str]]:
    """The texts the publish step embeds, each cut to the prefix it embeds, in (import,
    event) order and in slices of about as many characters as it embeds at once."""
    from agentlake.load.embedder import EMBED_CHARS

    rows = catalog.execute(
        f"SELECT left(text, {EMBED_CHARS}) FROM a.events WHERE kind IN (SELECT unnest($kinds)) "
        "AND text IS NOT NULL AND text <> '' ORDER BY import_id, event_id",
        {"kinds": list(EMBEDDED_KINDS)},
    ).fetchall()
    slices: list[list[str]] = [[]]
    chars = 0
    for (text,) in rows:
        if chars >= SLICE_CHARS:
            slices.append([])
            chars = 0
        slices[-1].append(text)
        chars += len(text)
    return [s for s in slices if s]


def embed(catalog: duckdb.DuckDBPyConnection, floors: Floors) -> None:
    """The embedding floor: the model's call on the embedded texts (reading them out of
    the catalog and loading the model not counted)."""
    slices = _embed_slices(catalog)
    model = load_embedder()
    with floors.piece(f"embed: the model's tokenize and pool ({len(slices)} slices)",
                      "vectors") as piece:  # fmt: skip
        for texts in slices:
            piece.rows += len(model.embed(texts))


def semantic_step(catalog_path: Path, scratch: Path, floors: Floors) -> None:
    """Aside: the publish step's semantic part itself on a copy of the catalog whose
    vectors were dropped (the copy and the drop not counted)."""
    copy = scratch / "vectors.duckdb"
    shutil.copyfile(catalog_path, copy)
    wal = catalog_path.with_name(catalog_path.name + ".wal")
    if wal.exists():  # what was committed and not yet checkpointed
        shutil.copyfile(wal, copy.with_name(copy.name + ".wal"))
    with open_for_write(copy) as con:
        con.execute("DELETE FROM search_vectors; DELETE FROM vector_watermark; "
                    "DELETE FROM vector_withdrawn; CHECKPOINT")  # fmt: skip
        workspaces = [str(w) for (w,) in con.execute(
            "SELECT DISTINCT workspace FROM events ORDER BY 1").fetchall()]  # fmt: skip
        with floors.piece("semantic step: publish_vectors on the catalog", "vectors",
                          counted=False) as piece:  # fmt: skip
            for workspace in workspaces:
                piece.rows += publish_vectors(con, workspace).embedded
    copy.unlink()


def write(catalog: duckdb.DuckDBPyConnection, scratch: Path, floors: Floors) -> None:
    """The writing floors: the catalog's events, then its postings, then its vectors,
    into a fresh catalog."""
    events = catalog.execute("SELECT * FROM a.events ORDER BY rowid").to_arrow_table()
    postings_rows = catalog.execute("SELECT * FROM a.search_postings").to_arrow_table()
    vectors = catalog.execute("SELECT * FROM a.search_vectors").to_arrow_table()
    with open_for_write(scratch / "floor.duckdb", memory_limit="204MiB") as con:
        steps: tuple[tuple[str, pa.Table, Part], ...] = (
            ("events", events, "usage"), ("search_postings", postings_rows, "index"),
            ("search_vectors", vectors, "vectors"))  # fmt: skip
        for table, rows, part in steps:
            con.execute("SET threads = 1")
            with floors.piece(f"write: {table}, one transaction", part) as piece:
                con.execute("BEGIN")
                con.from_arrow(rows).insert_into(table)
                con.execute("COMMIT")
                piece.rows = rows.num_rows
            con.execute("RESET threads")
            done = "checkpointed" if part == "vectors" else "indexed, checkpointed"
            with floors.piece(f"write: {table} {done}", part) as piece:
                if part == "usage":
                    con.execute("CREATE INDEX floor_events_by_id ON events (event_id)")
                elif part == "index":
                    con.execute(
                        "CREATE TABLE floor_sorted AS SELECT * FROM search_postings ORDER BY term_id"
                    )
                con.execute("CHECKPOINT")
                piece.rows = rows.num_rows


def measure(
    home: Path, catalog_path: Path, scratch: Path | None, out: IO[str] | None = None
) -> Floors:
    """Every piece of the floor of importing ``home``, given its catalog (each printed
    to ``out``, by default stdout); the fresh catalog goes in a directory in ``scratch``
    (removed after)."""
    catalog = duckdb.connect()
    catalog.execute(f"ATTACH '{catalog_path}' AS a (READ_ONLY)")
    row = catalog.execute("SELECT sum(records) FROM a.imports").fetchone()
    floors = Floors(records=int(row[0]) if row and row[0] else 0, out=out)
    work = Path(tempfile.mkdtemp(prefix="floors-", dir=scratch))
    try:
        parse(home, floors)
        tokenize(catalog, floors)
        embed(catalog, floors)
        write(catalog, work, floors)
        semantic_step(catalog_path, work, floors)
    finally:
        catalog.close()
        shutil.rmtree(work, ignore_errors=True)
    return floors


def main() -> None:
    """Measure every floor and print them (with ``--json``, the figures as JSON on
    stdout and each piece on stderr)."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.floors")
    parser.add_argument("home", type=Path)
    parser.add_argument("catalog", type=Path, help="a catalog of HOME (read only)")
    parser.add_argument("--scratch", type=Path, default=None, help="for the fresh catalog")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    floors = measure(args.home, args.catalog, args.scratch, sys.stderr if args.json else sys.stdout)
    cores = usable_cores()
    if args.json:
        print(json.dumps(floors.as_json(cores)))
        return
    print(
        f"floor: {floors.wall:.1f} s wall, {floors.cpu:.1f} s CPU for {floors.records:,} "
        f"records; {GOAL_RECORDS_PER_S:,.0f} records/s on {cores} cores allows "
        f"{floors.allowed_cpu(cores):.1f} s of CPU"
    )


if __name__ == "__main__":
    main()
