"""nanlint: find and fix NaN/Inf hazards in ML training code before the run."""

import importlib as _importlib
import importlib.util as _util
import sys as _sys
import types as _types

__version__ = "0.1.0"


class _Deferred(_types.ModuleType):
    """Stands in for a module in ``sys.modules`` until an attribute of it is first read: then
    the module is imported, its namespace copied here (so that every later read is a plain
    attribute of this object, as fast as the module's own) and ``sys.modules`` holds the real
    module again.  ``import libcst as cst`` binds this object and costs nothing; the import
    machinery's own questions (``__spec__``) are answered without loading."""

    def __getattr__(self, attr: str):
        real = _load(self.__name__)
        self.__dict__.update(real.__dict__)
        return getattr(real, attr)


def _load(name: str):
    if isinstance(_sys.modules.get(name), _Deferred):
        del _sys.modules[name]
    return _importlib.import_module(name)


def _defer(name: str) -> None:
    """Load ``name`` on first use.  libcst is about half of nanlint's start-up, and a run that
    parses nothing with it (a warm run, a tree no rule can report in, ``--version``) never uses
    it.  No nanlint module reads libcst while it is imported (``tests/test_start_up.py``)."""
    if name in _sys.modules:
        return
    spec = _util.find_spec(name)
    if spec is None:
        return  # not installed: the first real use says so
    stand_in = _Deferred(name)
    stand_in.__spec__ = spec  # what `import name` asks (whether it is still initializing)
    _sys.modules[name] = stand_in


_defer("libcst")
