"""Ad-hoc read-only SQL over one workspace's views. Results are Arrow tables; the CLI
decides how to show them (reports live in reports.py, search in search.py).

The boundary (DESIGN §6): exactly one statement, and only a query, checked with DuckDB's
own parser before anything runs; the only names it may reach are the workspace's views
(:data:`SCOPED_TABLES`) and the price tables (:data:`SHARED_TABLES`), unqualified; and it
runs with external access disabled and the configuration locked, so it can neither read
nor write a file, install or load an extension, nor attach another database. A workspace
is a partition every command enforces, not a protection against someone who can open the
catalog file (that is what the file's 0600 mode is for).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Final

import duckdb
import orjson
import pyarrow as pa

from agentlake.errors import ConfigurationError
from agentlake.load.catalog import open_priced
from agentlake.load.lake import data_path
from agentlake.sql import views

if TYPE_CHECKING:
    from agentlake.load.lake import Catalog
    from agentlake.load.price_overrides import PriceOverrides

# Views of one workspace's rows, under the names of the catalog's tables and views.
SCOPED_TABLES: Final = (
    "sources",
    "sessions",
    "events",
    "usage",
    "imports",
    "rejects",
    "usage_costed",
    "usage_daily",
    "session_rollup",
    "rate_limits",
)
# The same for every workspace: the prices costs are computed with.
SHARED_TABLES: Final = ("prices", "price_aliases")
# Table functions that read no table: generators and unnesting.
TABLE_FUNCTIONS: Final = frozenset({"range", "generate_series", "unnest", "json_each", "json_tree"})
QUERY_TYPES: Final = "SELECT, WITH … SELECT, FROM, VALUES, DESCRIBE, SUMMARIZE"


def rows_json(table: pa.Table) -> dict[str, Any]:
    """The document ``agentlake sql --json`` prints for :func:`scoped_sql`'s table."""
    return {"rows": table.to_pylist()}


def scoped_sql(
    catalog: Catalog,
    workspace: str,
    statement: str,
    *,
    prices: PriceOverrides | None = None,
    all_workspaces: bool = False,
    include_hidden: bool = False,
) -> pa.Table:
    """Run one read-only query over ``workspace``'s views (every workspace's rows with
    ``all_workspaces``), with the user's ``prices`` (if any) in force for
    ``usage_costed`` and ``usage_daily``. Hidden sessions' rows (``sessions hide``)
    are in none of the views unless ``include_hidden``. Anything but a single query
    over those names raises :class:`ConfigurationError` before it runs."""
    with open_priced(catalog, prices) as con:
        _create_views(con, None if all_workspaces else workspace, include_hidden=include_hidden)
        check_query(con, statement)
        # A lake's rows are files: its data path is the one folder the query may read.
        if (folder := data_path(con)) is not None:
            con.execute(f"SET allowed_directories = [{_literal(folder)}]")
        # Nothing in the catalog is an extension the query may need; every one it could
        # name would be fetched or loaded from disk, which the boundary forbids.
        for setting in (
            "autoinstall_known_extensions = false",
            "autoload_known_extensions = false",
            "enable_external_access = false",
            "lock_configuration = true",
        ):
            con.execute(f"SET {setting}")
        try:
            return con.execute(statement).to_arrow_table()
        except duckdb.Error as exc:
            raise ConfigurationError(f"SQL error: {' '.join(str(exc).split())[:300]}") from None


def _create_views(
    con: duckdb.DuckDBPyConnection, workspace: str | None, *, include_hidden: bool = False
) -> None:
    """A temporary view per scoped name, over the catalog's relation of that name. Unless
    ``include_hidden``, the rows of hidden sessions leave every view of session rows, and
    ``usage_daily`` is summed from the scoped ``usage_costed`` (it has no session to
    filter by) with the catalog view's own definition; the views are the plain ones when
    no session in scope is hidden."""
    row = con.execute("SELECT current_database()").fetchone()
    assert row is not None
    database = '"' + str(row[0]).replace('"', '""') + '"'
    scope = [] if workspace is None else [f"workspace = {_literal(workspace)}"]
    if not include_hidden:
        # No view needs the condition when no session in scope is hidden (it would cost
        # every query over usage a join).
        hidden = " AND ".join([*scope, "lifecycle <> 'active'"])
        found = con.execute(f"SELECT count(*) FROM {database}.main.sessions WHERE {hidden}")
        include_hidden = not (found.fetchone() or (0,))[0]
    for name in SCOPED_TABLES:
        where = list(scope)
        if not include_hidden and name == "usage_daily":
            body = dict(views())["usage_daily"]
            con.execute(
                body.replace("CREATE VIEW", "CREATE TEMP VIEW").replace(
                    "FROM usage_costed", "FROM temp.main.usage_costed"
                )
            )
            continue
        if not include_hidden and name == "sessions":
            where.append("lifecycle = 'active'")
        elif not include_hidden and name in _SESSION_ROWS:
            where.append(_VISIBLE.format(database=database))
        condition = f" WHERE {' AND '.join(where)}" if where else ""
        con.execute(f"CREATE TEMP VIEW {name} AS SELECT * FROM {database}.main.{name}{condition}")


# The scoped relations whose rows belong to a session, and the condition that keeps the
# rows of visible sessions.
_SESSION_ROWS: Final = frozenset(
    {"events", "usage", "usage_costed", "session_rollup", "rate_limits"}
)
_VISIBLE: Final = (
    "(workspace, provider, session_id) NOT IN (SELECT (h.workspace, h.provider, h.session_id) "
    "FROM {database}.main.sessions h WHERE h.lifecycle <> 'active')"
)


def check_query(con: duckdb.DuckDBPyConnection, statement: str) -> None:
    """Refuse (:class:`ConfigurationError`) anything but exactly one query whose tables
    are the scoped names, unqualified: DuckDB parses it, and every table, table
    function and function reference of the parse tree is checked."""
    try:
        statements = con.extract_statements(statement)
    except duckdb.Error as exc:
        raise ConfigurationError(f"SQL error: {' '.join(str(exc).split())[:300]}") from None
    if len(statements) != 1:
        kinds = ", ".join(s.type.name for s in statements) or "none"
        raise ConfigurationError(
            f"agentlake sql runs exactly one statement; this has {len(statements)} ({kinds})"
        )
    kind = statements[0].type
    if kind != duckdb.StatementType.SELECT:
        raise ConfigurationError(
            f"agentlake sql runs only a query ({QUERY_TYPES}); this is a {kind.name} statement"
        )
    row = con.execute("SELECT json_serialize_sql($1)", [statement]).fetchone()
    tree = orjson.loads(row[0]) if row else {"error": True}
    if tree.get("error"):
        raise ConfigurationError(
            f"agentlake sql runs only a plain query ({QUERY_TYPES}); this one cannot be "
            f"checked: {tree.get('error_message', 'unknown form')}"
        )
    _Checker(con).check(tree["statements"])


class _Checker:
    """The walk over a parse tree (DuckDB's ``json_serialize_sql``) that admits only the
    scoped names.

    A common table expression may take any name that no table or view has (so a name
    it shadows can never be a table outside its scope), and a reference to a table must
    be one of the scoped names or such a CTE name."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.allowed = {*SCOPED_TABLES, *SHARED_TABLES}
        rows = con.execute(
            "SELECT lower(table_name) FROM duckdb_tables() "
            "UNION SELECT lower(view_name) FROM duckdb_views()"
        ).fetchall()
        self.taken = {r[0] for r in rows} - self.allowed
        macros = con.execute(
            "SELECT DISTINCT lower(function_name) FROM duckdb_functions() "
            "WHERE NOT internal AND function_type IN ('macro', 'table_macro')"
        ).fetchall()
        self.macros = {r[0] for r in macros}
        self.ctes: set[str] = set()

    def check(self, tree: Any) -> None:
        """Raise :class:`ConfigurationError` at the first reference out of bounds."""
        for node in _nodes(tree):
            if "cte_map" in node:
                for entry in node["cte_map"]["map"]:
                    self._cte(str(entry["key"]))
            kind = node.get("type")
            if kind == "BASE_TABLE":
                self._table(node)
            elif kind == "TABLE_FUNCTION":
                self._table_function(node["function"])
            elif kind == "SHOW_REF" and node.get("query") is None:
                raise ConfigurationError(
                    f"agentlake sql cannot list the catalog's tables; its tables are {self._names()}"
                )
            elif node.get("class") == "FUNCTION":
                self._function(node)

    def _cte(self, name: str) -> None:
        if name.lower() in self.taken:
            raise ConfigurationError(
                f"a common table expression may not be named {name!r}, the name of a "
                f"catalog table; agentlake sql reads {self._names()}"
            )
        self.ctes.add(name.lower())

    def _table(self, node: dict[str, Any]) -> None:
        parts = [node.get("catalog_name"), node.get("schema_name"), node["table_name"]]
        name = ".".join(p for p in parts if p)
        if node.get("catalog_name") or node.get("schema_name"):
            raise ConfigurationError(
                f"{name}: agentlake sql reads the workspace's views by their plain names "
                f"({self._names()}); a qualified name is refused (pass --all-workspaces to "
                "read every workspace)"
            )
        table = str(node["table_name"]).lower()
        if table not in self.allowed and table not in self.ctes:
            raise ConfigurationError(
                f"{name}: not a table agentlake sql can read; its tables are {self._names()}"
            )

    def _table_function(self, function: dict[str, Any]) -> None:
        name = str(function.get("function_name", "")).lower()
        if function.get("schema") or function.get("catalog") or name not in TABLE_FUNCTIONS:
            raise ConfigurationError(
                f"{name}(): agentlake sql reads only its tables ({self._names()}) and the "
                f"table functions {', '.join(sorted(TABLE_FUNCTIONS))}"
            )

    def _function(self, node: dict[str, Any]) -> None:
        name = str(node.get("function_name", ""))
        if node.get("schema") or node.get("catalog") or name.lower() in self.macros:
            qualified = ".".join(p for p in (node.get("catalog"), node.get("schema"), name) if p)
            raise ConfigurationError(
                f"{qualified}(): agentlake sql calls only DuckDB's built-in functions"
            )

    def _names(self) -> str:
        return ", ".join([*SCOPED_TABLES, *SHARED_TABLES])


def _nodes(tree: Any) -> Iterator[dict[str, Any]]:
    """Every object of a parse tree, parents before children."""
    stack = [tree]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            yield item
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _literal(text: str) -> str:
    """A SQL string literal (workspace names are validated to [A-Za-z0-9._-])."""
    return "'" + text.replace("'", "''") + "'"
