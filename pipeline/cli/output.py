"""Where the CLI writes: JSON documents, CSV, tables, and the catalog and workspace a
command reads when none is named. The consoles (rich) are in :mod:`.consoles`, loaded
only by what draws on them, so a ``--json`` command does without rich."""

from __future__ import annotations

import csv
import io
import sys
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from agentlake.config import check_workspace, default_workspace, resolve_catalog

if TYPE_CHECKING:
    import pyarrow as pa

    from agentlake.load.lake import Catalog, LakeCatalog


def catalog_path(catalog: str | None, data_path: str | None = None) -> Catalog:
    """The catalog named on the command line (a path or a DuckLake URL), else the
    configured one."""
    return resolve_catalog(catalog, data_path=data_path)


def lake_catalog(catalog: str | None, data_path: str | None = None) -> LakeCatalog:
    """The DuckLake the command line (or the configuration) names: the ``lake``
    commands refuse a DuckDB file."""
    from agentlake.errors import ConfigurationError
    from agentlake.load.lake import LakeCatalog

    found = resolve_catalog(catalog, data_path=data_path)
    if not isinstance(found, LakeCatalog):
        raise ConfigurationError(
            f"{found}: not a DuckLake; name one with --catalog ducklake:postgres:... or "
            "ducklake:sqlite:FILE (or AGENTLAKE_CATALOG)"
        )
    return found


def workspace_name(workspace: str | None, catalog: str | None = None) -> str:
    """The workspace named on the command line (checked), else the configured one (on
    a lake: this machine's host name)."""
    if workspace:
        return check_workspace(workspace)
    return default_workspace(catalog=resolve_catalog(catalog))


def _json_default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, (date, datetime)):
        return value.isoformat()
    if isinstance(value, Path):
        return str(value)
    raise TypeError


def print_json(doc: Any) -> None:
    """Write a result's JSON document to stdout, indented, with one trailing newline."""
    sys.stdout.write(
        orjson.dumps(
            doc, default=_json_default, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS
        ).decode()
        + "\n"
    )


def print_csv(table: pa.Table) -> None:
    """Write ``table`` as CSV: a header, NULL as empty, lists joined with ``;``."""
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(table.column_names)
    for row in table.to_pylist():
        writer.writerow(
            [
                "" if v is None else (";".join(map(str, v)) if isinstance(v, list) else v)
                for v in row.values()
            ]
        )
    sys.stdout.write(buf.getvalue())


def print_table(table: pa.Table) -> None:
    """Show ``table`` as a rich table on stdout."""
    from .consoles import out
    from .render.rows import render_rows

    render_rows(out, table, title=None)


def print_change(doc: Any, message: str, *, json: bool) -> None:
    """A change's JSON document with ``--json``, else its one-line message."""
    if json:
        print_json(doc)
        return
    from .consoles import out

    out.print(message, highlight=False, markup=False)
