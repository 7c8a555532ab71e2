"""What two of the CLI's dependencies import at their top that the CLI does without.

* typer draws ``--help`` and usage errors with ``typer.rich_utils``, which imports
  ``rich.markdown`` (markdown-it and, through ``rich.syntax``, pygments) for help
  written in Markdown, and ``rich.traceback`` for tracebacks of uncaught exceptions.
  This CLI's help is rich markup, never Markdown, and its error boundary shows a
  traceback only with ``--debug``: the two imports were a fifth of every ``--help``.
* ``duckdb._version`` imports ``importlib.metadata`` (and with it the ``email``
  package) to read the installed duckdb's version: a twentieth of every read command.

:func:`install` puts an import hook for these two modules alone in front of the
interpreter's finders. While one of them executes, the modules it imports those names
from are stand-ins (unless loaded already): ``Markdown`` and ``Traceback`` are
:class:`Deferred` classes (using one, by calling it, reading an attribute such as
``Traceback.from_exception`` or ``isinstance``, imports the real module and uses the
real class) and ``version`` is :func:`distribution_version`. Once the module has
executed the stand-ins leave ``sys.modules``, so an import of ``rich.markdown`` or
``importlib.metadata`` anywhere else loads the real module.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Sequence
from importlib.machinery import ModuleSpec, PathFinder
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    # The import system needs only the methods (importlib.abc takes 5 ms to load).
    from importlib.abc import Loader


class Deferred(type):
    """The type of a stand-in class: every use of the class is forwarded to the real
    class ``name`` of ``module``, which is imported then."""

    _module: str
    _name: str

    def real(cls) -> type:
        """The class this stand-in stands for (its module loads on the first call)."""
        real: type = getattr(importlib.import_module(cls._module), cls._name)
        return real

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return cls.real()(*args, **kwargs)

    def __getattr__(cls, name: str) -> Any:
        return getattr(cls.real(), name)

    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, cls.real())

    def __subclasscheck__(cls, subclass: type) -> bool:
        return issubclass(subclass, cls.real())


def stand_in(module: str, name: str) -> type:
    """A stand-in for class ``name`` of ``module`` (see :class:`Deferred`)."""
    return Deferred(name, (), {"_module": module, "_name": name, "__module__": __name__})


def distribution_version(name: str) -> str:
    """``importlib.metadata.version(name)`` for a distribution installed as a wheel:
    the ``Version`` of the ``METADATA`` of the first ``<name>-<version>.dist-info`` on
    ``sys.path``, as importlib.metadata finds it, read without importlib.metadata;
    importlib.metadata's own answer when there is none (other kinds of installs)."""
    prefix = name.replace("-", "_") + "-"
    for entry in sys.path:
        try:
            found = sorted(p for p in Path(entry or ".").iterdir() if p.name.startswith(prefix))
        except OSError:
            continue
        for candidate in found:
            if candidate.suffix != ".dist-info":
                continue
            try:
                with (candidate / "METADATA").open(encoding="utf-8") as headers:
                    for line in headers:
                        if line.startswith("Version:"):
                            return line.removeprefix("Version:").strip()
                        if not line.strip():
                            break  # the headers end at the first blank line
            except OSError:
                pass
    import importlib.metadata

    return importlib.metadata.version(name)


# Each module the hook applies to: the modules it imports names from that get a
# stand-in while it executes, and the stand-in of each name.
_STAND_INS: Final[dict[str, dict[str, dict[str, Callable[[], object]]]]] = {
    "typer.rich_utils": {
        "rich.markdown": {"Markdown": lambda: stand_in("rich.markdown", "Markdown")},
        "rich.traceback": {"Traceback": lambda: stand_in("rich.traceback", "Traceback")},
    },
    "duckdb._version": {"importlib.metadata": {"version": lambda: distribution_version}},
}


class _StandInLoader:
    """Executes a module of :data:`_STAND_INS` with its stand-ins in ``sys.modules``."""

    def __init__(self, loader: Loader, stand_ins: dict[str, dict[str, Callable[[], object]]]):
        self._loader = loader
        self._stand_ins = stand_ins

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        placed: dict[str, ModuleType] = {}
        for name, attributes in self._stand_ins.items():
            if name not in sys.modules:
                placed[name] = ModuleType(name, f"stand-in for {name} ({__name__})")
                for attribute, make in attributes.items():
                    setattr(placed[name], attribute, make())
                sys.modules[name] = placed[name]
        try:
            self._loader.exec_module(module)
        finally:
            for name, placeholder in placed.items():
                if sys.modules.get(name) is placeholder:
                    del sys.modules[name]

    def __getattr__(self, name: str) -> Any:
        # get_source, get_filename, ...: the real loader's (tracebacks, inspect).
        return getattr(self._loader, name)


class _StandInFinder:
    """Finds a module of :data:`_STAND_INS` as the interpreter would, to load it with
    :class:`_StandInLoader`; any other name is left to the other finders."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        stand_ins = _STAND_INS.get(fullname)
        if stand_ins is None:
            return None
        spec = PathFinder.find_spec(fullname, path, target)
        if spec is not None and spec.loader is not None:
            spec.loader = _StandInLoader(spec.loader, stand_ins)  # type: ignore[assignment]
        return spec


def install() -> None:
    """Install the hook (once per process). A module loaded already stays as it is."""
    if not any(isinstance(finder, _StandInFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _StandInFinder())
