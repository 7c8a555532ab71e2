"""DuckLake catalogs: the catalog's tables kept by DuckDB's ducklake extension, their
metadata in PostgreSQL (a team, many machines) or SQLite (several processes of one
machine) and their rows in Parquet files under a data path.

A lake connection is an in-memory DuckDB with the lake attached as ``lake`` and made the
default database, so every query and migration written for the DuckDB file runs on it
unchanged, except where :mod:`agentlake.load.lake_sql` says how DuckLake differs.
Commits are optimistic: two transactions that write one table at the same time conflict
at COMMIT, and the loser runs again on the state the winner left (:func:`retrying`).
"""

from __future__ import annotations

import importlib.util
import os
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal, TypeVar

from agentlake.errors import CatalogUnusable, ConfigurationError

if TYPE_CHECKING:  # DuckDB loads when a lake is opened, not when one is named
    import duckdb

PREFIX: Final = "ducklake:"
ALIAS: Final = "lake"  # the attached lake's database name on every lake connection
MetadataKind = Literal["postgres", "sqlite"]
# The wheel each extension comes from: the lake's, and the scanner of its metadata store.
_EXTENSIONS: Final[dict[str, str]] = {
    "ducklake": "duckdb_extension_ducklake",
    "postgres": "duckdb_extension_postgres_scanner",
    "sqlite": "duckdb_extension_sqlite_scanner",
}
_FILES: Final[dict[str, str]] = {
    "ducklake": "ducklake",
    "postgres": "postgres_scanner",
    "sqlite": "sqlite_scanner",
}
_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class LakeCatalog:
    """A DuckLake catalog: ``metadata`` is ``postgres:<libpq connection string>`` or
    ``sqlite:<absolute file>``; ``data_path`` the folder of its Parquet files (``None``:
    the one the lake recorded when it was made)."""

    metadata: str
    data_path: str | None = None

    @property
    def kind(self) -> MetadataKind:
        """Where the lake's metadata lives."""
        return "postgres" if self.metadata.startswith("postgres:") else "sqlite"

    @property
    def url(self) -> str:
        """The URL that names the lake (``ducklake:...``), as DuckDB attaches it."""
        return PREFIX + self.metadata

    @property
    def sqlite_file(self) -> Path | None:
        """The SQLite file of a lake whose metadata is one."""
        return Path(self.metadata.removeprefix("sqlite:")) if self.kind == "sqlite" else None

    def __str__(self) -> str:
        """The URL without a password (messages and receipts name the lake by it)."""
        words = [
            "password=***" if word.lower().startswith("password=") else word
            for word in self.url.split(" ")
        ]
        return " ".join(words)

    def cache_dir(self, env: dict[str, str] | None = None) -> Path:
        """This machine's folder for what it derives from the lake (the vector cache):
        ``$XDG_CACHE_HOME/agentlake/lake-<digest of the URL>``."""
        import hashlib  # a lake's: the commands that read a DuckDB file never need it

        env = dict(os.environ) if env is None else env
        base = Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache").expanduser()
        digest = hashlib.sha256(self.url.encode()).hexdigest()[:16]
        return base / "agentlake" / f"lake-{digest}"


# A catalog is named by a path (a DuckDB file) or a lake.
Catalog = Path | LakeCatalog


def parse_catalog(text: str, *, data_path: str | None = None) -> Catalog:
    """The catalog ``text`` names: a ``ducklake:postgres:...`` or ``ducklake:sqlite:FILE``
    URL, else the path of a DuckDB file. ``data_path`` is where a new lake keeps its
    Parquet files (a lake records it when it is made; a new SQLite lake's default is
    ``FILE.files/``)."""
    if not text.startswith(PREFIX):
        return Path(text).expanduser()
    metadata = text.removeprefix(PREFIX)
    data = str(Path(data_path).expanduser().absolute()) if data_path else None
    if metadata.startswith("postgres:"):
        if not metadata.removeprefix("postgres:").strip():
            raise ConfigurationError(
                f"{text}: name the PostgreSQL database, e.g. "
                "'ducklake:postgres:dbname=lake host=db.example.com'"
            )
        return LakeCatalog(metadata, data)
    if metadata.startswith("sqlite:"):
        file = Path(metadata.removeprefix("sqlite:")).expanduser()
        if not metadata.removeprefix("sqlite:").strip():
            raise ConfigurationError(
                f"{text}: name the SQLite file, e.g. 'ducklake:sqlite:lake.db'"
            )
        return LakeCatalog(f"sqlite:{file.absolute()}", data)
    raise ConfigurationError(
        f"{text}: unsupported DuckLake metadata store; use 'ducklake:postgres:<connection "
        "string>' or 'ducklake:sqlite:<file>'"
    )


def extension_file(name: str) -> Path | None:
    """The extension file the ``name`` wheel ships for this DuckDB, if installed."""
    import duckdb

    spec = importlib.util.find_spec(_EXTENSIONS[name])
    if spec is None or spec.origin is None:
        return None
    found = (
        Path(spec.origin).parent
        / "extensions"
        / f"v{duckdb.__version__}"
        / f"{_FILES[name]}.duckdb_extension"
    )
    return found if found.is_file() else None


def _load_extension(con: duckdb.DuckDBPyConnection, name: str) -> None:
    path = extension_file(name)
    if path is None:
        import duckdb

        wheel = _EXTENSIONS[name].replace("_", "-")
        raise ConfigurationError(
            f"the {_FILES[name]} extension is not installed; install agentlake with its "
            f"dependencies (pip package {wheel}=={duckdb.__version__})"
        )
    con.execute(f"LOAD '{path.as_posix()}'")


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _prepare_sqlite(file: Path) -> None:
    """Create the lake's SQLite file in write-ahead-log mode: readers then never block
    the writer's commit (the mode is stored in the file)."""
    if file.exists():
        return
    import sqlite3

    from agentlake.load.catalog import make_private_dirs

    make_private_dirs(file.parent)
    fd = os.open(file, os.O_RDWR | os.O_CREAT, 0o600)
    os.close(fd)
    with sqlite3.connect(file) as db:
        db.execute("PRAGMA journal_mode=WAL")


def connect_lake(lake: LakeCatalog, *, read_only: bool) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with ``lake`` attached as its default database. Extensions
    load from their wheels only: nothing is installed or downloaded. A lake that cannot
    be reached (server down, wrong credentials, missing file) is :class:`CatalogUnusable`
    with DuckDB's reason."""
    import duckdb

    # DuckDB checks an extension file's signature on every LOAD, hashing the 70 MiB of
    # the lake's and its scanner's (0.2 s of every command). The files are the installed
    # wheels', as trusted as the code that loads them, and nothing else may be loaded:
    # autoloading is off, and `agentlake sql` refuses LOAD and locks the configuration.
    con = duckdb.connect(
        config={
            "autoinstall_known_extensions": False,
            "autoload_known_extensions": False,
            "allow_unsigned_extensions": True,
        }
    )
    try:
        _load_extension(con, "ducklake")
        _load_extension(con, lake.kind)
        data = lake.data_path
        if (file := lake.sqlite_file) is not None:
            if read_only and not file.is_file():
                from agentlake.errors import NotFoundError

                raise NotFoundError(
                    f"{lake}: no catalog here; run 'agentlake import' first or pass --catalog"
                )
            if data is None and not file.exists():
                data = f"{file}.files"
            _prepare_sqlite(file)
        options = ["READ_ONLY"] if read_only else []
        if data is not None and not read_only:
            options.append(f"DATA_PATH {_quoted(data)}")
        # Every commit writes Parquet files: rows of a small commit (a checkpoint, a
        # lease) stay in the metadata store instead, up to this many per table.
        options.append("DATA_INLINING_ROW_LIMIT 100")
        _attach(con, lake, options, tries=1 if read_only else _ATTACH_TRIES, new=data is None)
        con.execute(f"USE {ALIAS}")
        con.execute("SET TimeZone = 'UTC'")
        con.execute("SET enable_progress_bar = false")
    except BaseException:
        con.close()
        raise
    return con


# Writers that meet a new lake at once all create its metadata tables, and all but one
# fail doing so: the others attach again and find them made.
_ATTACH_TRIES: Final = 6


def _attach(
    con: duckdb.DuckDBPyConnection,
    lake: LakeCatalog,
    options: list[str],
    *,
    tries: int,
    new: bool,
) -> None:
    import duckdb

    for attempt in range(tries):
        try:
            con.execute(f"ATTACH {_quoted(lake.url)} AS {ALIAS} ({', '.join(options)})")
            return
        except duckdb.Error as exc:
            if attempt < tries - 1:
                time.sleep(0.1 * 2**attempt)
                continue
            reason = str(exc).strip().splitlines()[0][:300]
            remedy = "check that its metadata server is up and the URL is right"
            if new:
                remedy = f"a new lake needs --data-path (or AGENTLAKE_DATA_PATH); else {remedy}"
            raise CatalogUnusable(f"{lake}: cannot open the lake ({reason}); {remedy}") from None


# Connections known to be lakes or not: every commit asks (retries, upserts, leases),
# and a connection's default database never changes after it is opened.
_KIND: weakref.WeakKeyDictionary[duckdb.DuckDBPyConnection, bool] = weakref.WeakKeyDictionary()


def is_lake(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether ``con`` reads and writes a lake (its default database is one)."""
    known = _KIND.get(con)
    if known is None:
        row = con.execute(
            "SELECT type FROM duckdb_databases() WHERE database_name = current_database()"
        ).fetchone()
        known = _KIND[con] = row is not None and row[0] == "ducklake"
    return known


def cursor(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """A second connection to ``con``'s database (for another thread), reading the same
    catalog: on a lake, with the lake as its default database too."""
    other = con.cursor()
    if is_lake(con):
        other.execute(f"USE {ALIAS}")
    return other


def _attached(con: duckdb.DuckDBPyConnection) -> str | None:
    row = con.execute(
        "SELECT path FROM duckdb_databases() WHERE database_name = current_database() "
        "AND type = 'ducklake'"
    ).fetchone()
    return None if row is None else str(row[0])


def lake_cache_dir(con: duckdb.DuckDBPyConnection) -> Path | None:
    """This machine's folder for what it derives from the lake ``con`` reads (its
    vector cache), ``None`` for a DuckDB file: :meth:`LakeCatalog.cache_dir`."""
    attached = _attached(con)
    return None if attached is None else LakeCatalog(attached).cache_dir()


def data_path(con: duckdb.DuckDBPyConnection) -> str | None:
    """The folder of the Parquet files of the lake ``con`` reads (``None``: a file)."""
    if _attached(con) is None:
        return None
    row = con.execute(
        f"SELECT value FROM ducklake_options('{ALIAS}') WHERE option_name = 'data_path'"
    ).fetchone()
    return None if row is None else str(row[0])


def current_snapshot(con: duckdb.DuckDBPyConnection) -> int | None:
    """The lake snapshot ``con``'s reads see (``None`` for a DuckDB file)."""
    if not is_lake(con):
        return None
    row = con.execute(f"SELECT id FROM {ALIAS}.current_snapshot()").fetchone()
    return int(row[0]) if row else None


# How long a writer keeps trying a transaction that conflicts with other writers'
# commits before it gives up (each attempt waits a little longer, with jitter, so that
# racing importers spread out).
RETRY_SECONDS: Final = 600.0
_FIRST_WAIT: Final = 0.05
_LONGEST_WAIT: Final = 2.0


def retrying(con: duckdb.DuckDBPyConnection, attempt: Callable[[], _T]) -> _T:
    """``attempt()`` (one whole transaction), run again while its COMMIT conflicts with
    another writer's (DuckDB's :class:`duckdb.TransactionException`). A DuckDB file has
    one writer and never conflicts: there the first failure is raised."""
    if not is_lake(con):
        return attempt()
    import random

    import duckdb

    deadline = time.monotonic() + RETRY_SECONDS
    wait = _FIRST_WAIT
    while True:
        try:
            return attempt()
        except duckdb.TransactionException:
            if time.monotonic() + wait > deadline:
                raise
        time.sleep(wait * random.uniform(0.5, 1.5))
        wait = min(wait * 2, _LONGEST_WAIT)
