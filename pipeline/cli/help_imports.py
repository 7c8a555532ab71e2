"""What typer's help renderer imports, and what it need not import before it is used.

typer draws ``--help`` and usage errors with ``typer.rich_utils``, which imports at its
top ``rich.markdown`` (markdown-it and, through ``rich.syntax``, pygments) for help
written in Markdown, and ``rich.traceback`` for tracebacks of uncaught exceptions. This
CLI's help is rich markup, never Markdown, and the error boundary shows no traceback
without ``--debug``: the two imports are about a fifth of every ``--help``.

:func:`defer_help_imports` puts an import hook for ``typer.rich_utils`` alone in front of
the interpreter's finders. While that module executes, ``rich.markdown`` and
``rich.traceback`` (when not loaded already) are stand-in modules whose ``Markdown`` and
``Traceback`` are :class:`Deferred` names: using one (calling it, reading an attribute
such as ``Traceback.from_exception``, ``isinstance``) imports the real module and uses
the real class. Once ``typer.rich_utils`` has executed the stand-ins leave
``sys.modules``, so an ``import rich.markdown`` anywhere else loads the real module.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec, PathFinder
from types import ModuleType
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    # The import system needs only the methods (importlib.abc takes 5 ms to load).
    from importlib.abc import Loader

# The module the hook applies to, and the names it imports that are deferred.
HELP_RENDERER: Final = "typer.rich_utils"
DEFERRED: Final = {"rich.markdown": "Markdown", "rich.traceback": "Traceback"}


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


class _StandInLoader:
    """Executes ``typer.rich_utils`` with the stand-in modules in ``sys.modules``."""

    def __init__(self, loader: Loader) -> None:
        self._loader = loader

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        placed: dict[str, ModuleType] = {}
        for name, attribute in DEFERRED.items():
            if name not in sys.modules:
                placed[name] = ModuleType(name, f"stand-in for {name} ({__name__})")
                setattr(placed[name], attribute, stand_in(name, attribute))
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


class _HelpRendererFinder:
    """Finds ``typer.rich_utils`` as the interpreter would, to load it with
    :class:`_StandInLoader`; any other name is left to the other finders."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname != HELP_RENDERER:
            return None
        spec = PathFinder.find_spec(fullname, path, target)
        if spec is not None and spec.loader is not None:
            spec.loader = _StandInLoader(spec.loader)  # type: ignore[assignment]
        return spec


def defer_help_imports() -> None:
    """Install the hook (once per process); a no-op once ``typer.rich_utils`` is loaded."""
    if HELP_RENDERER in sys.modules:
        return
    if not any(isinstance(finder, _HelpRendererFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _HelpRendererFinder())
