"""The framework tables, found by discovery: every module of this package that
defines ``FRAMEWORK`` is one framework.  Adding a framework is adding a module."""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from nanlint.vocabulary.ops import Fn, Framework


@lru_cache(maxsize=None)
def frameworks() -> tuple[Framework, ...]:
    found = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        fw = getattr(module, "FRAMEWORK", None)
        if isinstance(fw, Framework):
            for op, names in fw.targets.items():
                for name in names:
                    if name not in fw.functions or fw.functions[name].op != op:
                        raise RuntimeError(f"{fw.name}: target {name} does not compute {op}")
            found.append(fw)
    return tuple(found)


@lru_cache(maxsize=None)
def function_table() -> dict[str, tuple[Framework, Fn]]:
    """Qualified name -> (framework, Fn), over all frameworks."""
    table: dict[str, tuple[Framework, Fn]] = {}
    for fw in frameworks():
        for name, f in fw.functions.items():
            table[name] = (fw, f)
    return table


def by_name(name: str) -> Framework:
    for fw in frameworks():
        if fw.name == name:
            return fw
    raise KeyError(name)


@lru_cache(maxsize=None)
def method_frameworks() -> tuple[Framework, ...]:
    return tuple(fw for fw in frameworks() if fw.methods)


@lru_cache(maxsize=None)
def roots() -> frozenset[str]:
    return frozenset(root for fw in frameworks() for root in fw.roots)
