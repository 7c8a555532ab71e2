"""Opening the catalog: the writer lock, schema migrations, the fts extension.

One writer at a time: a writer holds an exclusive ``flock`` on ``<catalog>.lock`` for
its whole run; readers take a shared one, so they fail fast (or wait) instead of
meeting DuckDB's own file lock.
"""

from __future__ import annotations

import fcntl
import importlib.util
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, nullcontext, suppress
from contextvars import ContextVar
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import duckdb

from agentlake import sql
from agentlake.errors import CatalogLocked, CatalogUnusable, ConfigurationError
from agentlake.load.lake import Catalog, LakeCatalog, connect_lake, is_lake, retrying
from agentlake.load.lake_sql import migration, needs_rewrite, rewrite
from agentlake.load.transaction import transaction

if TYPE_CHECKING:
    from agentlake.load.price_overrides import PriceOverrides

SCHEMA_VERSION: Final = sql.latest_migration()


def split_script(text: str) -> list[str]:
    """The statements of a multi-statement SQL file (each ends with ``;`` at the end of
    a line), with their comments."""
    return text.split(";\n")


def statement_body(statement: str) -> str:
    """``statement`` without its comment lines (blank when it is only comments)."""
    return "\n".join(line for line in statement.splitlines() if not line.lstrip().startswith("--"))


def statements(script: str) -> list[str]:
    """The statements of a multi-statement SQL file, without comments or blank ones."""
    bodies = (statement_body(s) for s in split_script(script))
    return [body for body in bodies if body.strip()]


def run_script(con: duckdb.DuckDBPyConnection, text: str, params: Mapping[str, Any]) -> None:
    """Run a multi-statement SQL file in one call, the named parameters (``$name``) it
    uses written in as constants (:func:`agentlake.sql.inline`): no statement is
    prepared and bound (about 0.5 ms each, more per parameter; a bulk import's loader,
    its critical path, runs some 25 statements a commit). The Python client still takes
    the GIL back after each task of every statement of the script."""
    bodies = [sql.inline(body, params) for body in map(statement_body, split_script(text))]
    bodies = [body for body in bodies if body.strip()]
    if any(map(needs_rewrite, bodies)) and is_lake(con):
        bodies = rewrite(con, bodies)
    script = ";\n".join(bodies)
    if script:
        con.execute(script)


def make_private_dirs(path: Path) -> None:
    """Create directory ``path`` and any missing parents, each private to the user
    (0700); directories that exist keep their mode."""
    missing = []
    for here in (path, *path.parents):
        if here.exists():
            break
        missing.append(here)
    for here in reversed(missing):
        with suppress(FileExistsError):  # another process made it meanwhile
            here.mkdir(mode=0o700)


@contextmanager
def _private_files() -> Iterator[None]:
    """Files created in the block are private to the user (0600): the catalog, its
    write-ahead log and DuckDB's spill files hold every transcript's text. The process's
    umask is shared by its threads, and only ever narrowed here."""
    previous = os.umask(0o077)
    os.umask(previous | 0o077)
    try:
        yield
    finally:
        os.umask(previous)


@contextmanager
def _flock(path: Path, *, exclusive: bool, wait: bool) -> Iterator[None]:
    make_private_dirs(path.parent)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        mode = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
        except BlockingIOError:
            what = "another import is writing" if exclusive else "an import is writing"
            if not wait:
                raise CatalogLocked(
                    f"{path.with_suffix('')}: {what} this catalog; retry when it finishes "
                    "or pass --wait"
                ) from None
            if (notice := WAIT_NOTICE.get()) is not None:
                notice(f"{path.with_suffix('')}: {what} this catalog; waiting for it to finish")
            fcntl.flock(fd, mode)
        yield
    finally:
        os.close(fd)


def _lock_path(catalog: Path) -> Path:
    return catalog.with_name(catalog.name + ".lock")


def fts_extension_path() -> Path | None:
    """The fts extension file shipped by the ``duckdb-extension-fts`` wheel, if any."""
    spec = importlib.util.find_spec("duckdb_extension_fts")
    if spec is None or spec.origin is None:
        return None
    candidate = (
        Path(spec.origin).parent / "extensions" / f"v{duckdb.__version__}" / "fts.duckdb_extension"
    )
    return candidate if candidate.is_file() else None


def load_fts(con: duckdb.DuckDBPyConnection) -> bool:
    """Load the fts extension from the wheel, else try ``INSTALL fts`` (network).
    Returns whether it is loaded (a connection that has it already is left as is)."""
    if con.execute(
        "SELECT count(*) FROM duckdb_extensions() WHERE extension_name = 'fts' AND loaded"
    ).fetchone() == (1,):
        return True
    path = fts_extension_path()
    try:
        if path is not None:
            con.execute(f"LOAD '{path.as_posix()}'")
        else:
            con.execute("INSTALL fts")
            con.execute("LOAD fts")
    except duckdb.Error:
        return False
    return True


def _schema_version(con: duckdb.DuckDBPyConnection) -> int | None:
    """The catalog's schema version (one query on a catalog); ``None`` for an empty
    database, :class:`CatalogUnusable` for one that holds tables of something else."""
    with suppress(duckdb.CatalogException):  # no such table: empty or not a catalog
        row = con.execute("SELECT max(version) FROM schema_version").fetchone()
        return int(row[0]) if row and row[0] is not None else 0
    if con.execute("SELECT count(*) FROM duckdb_tables()").fetchone() == (0,):
        return None
    raise CatalogUnusable(
        "the file is a DuckDB database but not an agentlake catalog; "
        "point --catalog at another path"
    )


# The storage format of the catalogs this version creates. DuckDB writes new files in
# its 0.10-compatible format unless told otherwise, and in that format every checkpoint
# converts each index (the primary keys, the event id index) to the old layout. A
# catalog made before keeps the format it has (DuckDB does not convert a file in place).
STORAGE_VERSION: Final = "v1.5.0"


def _connect(path: Path, *, read_only: bool, wheel_fts: bool = False) -> duckdb.DuckDBPyConnection:
    # Only a new file is created in that format: a connection with a configuration of
    # its own could not share the file with the caller's plain connections in one
    # process (DuckDB refuses a second configuration for an open file).
    config: dict[str, str | bool | int | float | list[str]] = {}
    if not read_only and not path.exists():
        config["storage_compatibility_version"] = STORAGE_VERSION
    try:
        con = _open_file(path, read_only=read_only, config=config, wheel_fts=wheel_fts)
    except duckdb.Error as exc:
        raise CatalogUnusable(
            f"{path}: cannot open the catalog ({type(exc).__name__}); "
            "restore it from a backup or import into a new --catalog"
        ) from None
    con.execute("SET TimeZone = 'UTC'")
    # DuckDB draws a progress bar on stdout for a statement past two seconds (a bulk
    # import's final index work, on a freshly opened catalog): stdout carries the
    # commands' output (--json), never a bar.
    con.execute("SET enable_progress_bar = false")
    return con


def _open_file(
    path: Path, *, read_only: bool, config: dict[str, str | bool | int | float | list[str]],
    wheel_fts: bool,
) -> duckdb.DuckDBPyConnection:  # fmt: skip
    if wheel_fts and fts_extension_path() is not None:
        # DuckDB checks an extension file's signature on every LOAD, hashing the 11 MiB
        # of the fts extension (0.05 s of each search). The file is the installed
        # duckdb-extension-fts wheel's, as trusted as the code that loads it, and only
        # agentlake's own statements run on this connection. A file this process has
        # open already keeps its configuration: then the signature is checked.
        with suppress(duckdb.ConnectionException):
            unsigned = {**config, "allow_unsigned_extensions": True}
            return duckdb.connect(str(path), read_only=read_only, config=unsigned)
    return duckdb.connect(str(path), read_only=read_only, config=config)


def migrate(con: duckdb.DuckDBPyConnection, path: Catalog) -> None:
    """Bring the catalog to :data:`SCHEMA_VERSION`; refuse a newer or unknown one.

    A DuckDB file (one writer, no reader meanwhile) migrates one transaction a step. A
    lake is read while it is migrated: its readers must never meet it half done (its
    views dropped, a table renamed), so everything happens in one transaction, each
    migration as :func:`agentlake.load.lake_sql.migration` rewrites it."""
    if isinstance(path, LakeCatalog):
        with transaction(con):
            _migrate_steps(con, path, in_one=True)
    else:
        _migrate_steps(con, path, in_one=False)


def _migrate_steps(con: duckdb.DuckDBPyConnection, path: Catalog, *, in_one: bool) -> None:
    from secrets import token_hex  # the writer's (hashlib, hmac): readers never migrate

    step = nullcontext if in_one else partial(transaction, con)
    current = _schema_version(con)
    if current is not None and current > SCHEMA_VERSION:
        raise CatalogUnusable(
            f"{path}: catalog schema version {current} is newer than this "
            f"agentlake understands ({SCHEMA_VERSION}); upgrade agentlake"
        )
    pending = [m for m in sql.migrations() if current is None or m[0] > current]
    if pending:  # migrations change tables only: the views are created again after them
        with step():
            _drop_views(con)
    for version, name, text in pending:
        with step():
            # A migration may seed per-catalog random values ($random_secret).
            script = migration(text) if isinstance(path, LakeCatalog) else text
            run_script(con, script, {"random_secret": token_hex(32)})
            con.execute("INSERT INTO schema_version (version, name) VALUES (?, ?)", [version, name])
    digests = _view_digests()
    if pending or _views(con) != digests:
        with step():
            _drop_views(con)
            for name, text in sql.views():
                run_script(con, text, {})
                con.execute(f"COMMENT ON VIEW \"{name}\" IS '{digests[name]}'")


def _drop_views(con: duckdb.DuckDBPyConnection) -> None:
    for name in _views(con):
        con.execute(f'DROP VIEW "{name}"')


def _view_digests() -> dict[str, str]:
    """Each public view's name and a digest of its ``sql/views`` file (stored as the
    view's comment: a file changed without a migration makes the views stale)."""
    import hashlib  # the writer's: a reader never compares the views

    return {name: hashlib.sha256(text.encode()).hexdigest()[:16] for name, text in sql.views()}


def _views(con: duckdb.DuckDBPyConnection) -> dict[str, str | None]:
    """The catalog's views with their comments, the later ones of ``sql.VIEWS`` first
    (the order to drop them in)."""
    rows = con.execute(
        "SELECT view_name, comment FROM duckdb_views() "
        "WHERE database_name = current_database() AND NOT internal AND NOT temporary"
    ).fetchall()
    order = {name: i for i, name in enumerate(sql.VIEWS)}
    names = sorted((str(name) for name, _ in rows), key=lambda n: -order.get(n, len(order)))
    comments = {str(name): comment for name, comment in rows}
    return {name: comments[name] for name in names}


# How much write-ahead log a writer lets build up before DuckDB folds it into the file:
# enough that a bulk import checkpoints once, when the connection closes, rather than
# rewriting partly filled row groups on the loader thread, the import's critical path
# (benchmarks/HISTORY.md has the figures). The cap still bounds the log (and DuckDB's
# spill of the rows it holds) for a larger home, and a killed run's log is replayed by
# the next open.
CHECKPOINT_THRESHOLD: Final = "1GiB"


def connect_writer(path: Path, *, memory_limit: str | None = None) -> duckdb.DuckDBPyConnection:
    """A read-write connection with the writer's settings, without the lock or
    migrations (:func:`open_for_write` takes the lock and migrates)."""
    con = _connect(path, read_only=False)
    con.execute(f"SET checkpoint_threshold = '{CHECKPOINT_THRESHOLD}'")
    if memory_limit:
        con.execute("SET memory_limit = ?", [memory_limit])
    return con


@contextmanager
def open_for_write(
    catalog: Catalog,
    *,
    workspace: str | None = None,
    wait: bool = False,
    memory_limit: str | None = None,
) -> Iterator[duckdb.DuckDBPyConnection]:
    """The catalog opened read-write, migrated, with its one writer's hold: the
    exclusive lock of a DuckDB file, or on a lake ``workspace``'s lease (another
    workspace's writers go on meanwhile; without ``workspace``, none is taken)."""
    if isinstance(catalog, LakeCatalog):
        with _open_lake_for_write(
            catalog, workspace=workspace, wait=wait, memory_limit=memory_limit
        ) as con:
            yield con
        return
    path = catalog
    if path.exists() and path.is_dir():
        raise ConfigurationError(f"{path}: is a directory; --catalog must name a file")
    with _flock(_lock_path(path), exclusive=True, wait=wait), _private_files():
        con = connect_writer(path, memory_limit=memory_limit)
        try:
            from agentlake.load.prices import refresh_prices

            migrate(con, path)
            refresh_prices(con)
            yield con
        finally:
            con.close()


# Attempts at migrating a lake that other writers migrate at the same time.
_MIGRATE_ATTEMPTS: Final = 20


def _migrate_lake(con: duckdb.DuckDBPyConnection, lake: LakeCatalog) -> None:
    """Migrate the lake. Writers that meet a new (or older) lake all migrate it: a
    migration that overlaps another's either conflicts at COMMIT or finds, as it runs,
    what the other made (a table or column that exists already). Either way it is rolled
    back and the lake's version read again, until one of them has done each step."""
    import time

    for attempt in range(_MIGRATE_ATTEMPTS):
        try:
            retrying(con, lambda: migrate(con, lake))
            return
        except (duckdb.CatalogException, duckdb.BinderException):
            if attempt == _MIGRATE_ATTEMPTS - 1:
                raise
            time.sleep(0.1 * (attempt + 1))


@contextmanager
def _open_lake_for_write(
    lake: LakeCatalog, *, workspace: str | None, wait: bool, memory_limit: str | None
) -> Iterator[duckdb.DuckDBPyConnection]:
    from agentlake.load.lease import workspace_lease
    from agentlake.load.prices import refresh_prices

    with _private_files():
        con = connect_lake(lake, read_only=False)
    try:
        if memory_limit:
            con.execute("SET memory_limit = ?", [memory_limit])
        _migrate_lake(con, lake)
        retrying(con, lambda: refresh_prices(con))
        if workspace is None:
            yield con
        else:
            with workspace_lease(
                con, workspace, wait=wait, what=str(lake), notice=WAIT_NOTICE.get()
            ):
                yield con
    finally:
        con.close()


# Whether readers wait for a running import instead of failing with CatalogLocked when
# they are not told (the CLI's --wait on read commands sets it for the command).
READ_WAIT: ContextVar[bool] = ContextVar("agentlake_read_wait", default=False)
# Told, once, when a command with --wait starts waiting for the lock (the CLI says so).
WAIT_NOTICE: ContextVar[Callable[[str], None] | None] = ContextVar(
    "agentlake_wait_notice", default=None
)


@contextmanager
def open_for_read(
    catalog: Catalog, *, wait: bool | None = None, wheel_fts: bool = False
) -> Iterator[duckdb.DuckDBPyConnection]:
    """The catalog opened read-only; its version must be known. A DuckDB file is read
    under a shared lock: while an import writes, this fails with :class:`CatalogLocked`
    unless ``wait`` (by default :data:`READ_WAIT`) says to wait for the import to
    finish. A lake is read at its latest committed snapshot while imports write.
    ``wheel_fts``: the connection will load the fts extension of the installed wheel
    (:func:`load_fts`), without checking its signature again."""
    if isinstance(catalog, LakeCatalog):
        con = connect_lake(catalog, read_only=True)
        try:
            # One transaction: every query of the command reads the same snapshot.
            con.execute("BEGIN")
            _check_version(con, catalog)
            yield con
        finally:
            con.close()
        return
    if wait is None:
        wait = READ_WAIT.get()
    path = catalog
    if not path.is_file():
        from agentlake.errors import NotFoundError

        raise NotFoundError(
            f"{path}: no catalog here; run 'agentlake import' first or pass --catalog"
        )
    with _flock(_lock_path(path), exclusive=False, wait=wait):
        con = _connect(path, read_only=True, wheel_fts=wheel_fts)
        try:
            _check_version(con, path)
            yield con
        finally:
            con.close()


def catalog_exists(catalog: Catalog) -> bool:
    """Whether ``catalog`` may hold a catalog already: its DuckDB or SQLite file exists
    (a PostgreSQL lake is asked when it is opened)."""
    if isinstance(catalog, LakeCatalog):
        return catalog.sqlite_file is None or catalog.sqlite_file.is_file()
    return catalog.is_file()


def _check_version(con: duckdb.DuckDBPyConnection, catalog: Catalog) -> None:
    version = _schema_version(con)
    if version is None and isinstance(catalog, LakeCatalog):
        from agentlake.errors import NotFoundError

        raise NotFoundError(f"{catalog}: no catalog here; run 'agentlake import' first")
    if version != SCHEMA_VERSION:
        raise CatalogUnusable(
            f"{catalog}: catalog schema version {version} is not the "
            f"version this agentlake reads ({SCHEMA_VERSION}); "
            "run an import with this version to migrate it"
        )


@contextmanager
def open_priced(
    catalog: Catalog, prices: PriceOverrides | None = None
) -> Iterator[duckdb.DuckDBPyConnection]:
    """The catalog opened for reading (see :func:`open_for_read`) with the user's
    ``prices``, if any, in force for its queries. The overrides' module (TOML, Arrow,
    the price snapshot's tables) loads only when there are overrides."""
    with open_for_read(catalog) as con:
        if prices is not None:
            from agentlake.load.price_overrides import apply_price_overrides

            apply_price_overrides(con, prices)
        yield con


# A catalog to read: its path (opened and closed per call, as the CLI does) or a
# read-only connection the caller keeps open across calls (notebooks, servers).
CatalogRef = Path | LakeCatalog | duckdb.DuckDBPyConnection


@contextmanager
def reading(catalog: CatalogRef, *, wheel_fts: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection to read ``catalog`` with: the caller's own, or one opened by
    :func:`open_for_read` (with ``wheel_fts``) for the duration of the block."""
    if isinstance(catalog, duckdb.DuckDBPyConnection):
        yield catalog
    else:
        with open_for_read(catalog, wheel_fts=wheel_fts) as con:
            yield con
