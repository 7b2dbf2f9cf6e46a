"""libcst's nodes made without their dataclass constructor, for a tree built from syntax
Python accepted (:mod:`nanlint.source.from_ast`).

A libcst node class is a frozen dataclass: its ``__init__`` sets each field through
``object.__setattr__`` and then calls ``__post_init__`` (the validation that
:func:`nanlint.source.walk.building` turns off while a whole tree is built).  That is about
twice the cost of setting the slots directly, and the conversion makes millions of nodes on
a corpus.  ``M.Call(func, args)`` takes the same arguments as ``cst.Call(...)`` and gives a
node equal field by field to what the constructor gives under ``building()``: each field set
to the value passed, else to its default.  One difference: a field whose default is a factory
(a whitespace node, a bracket: formatting) takes one value made once per node class
(:func:`formatting`) instead of a new one per node; the nodes of a converted module share
them, as nothing reads them (no analysis visits formatting, and a fix's code is spelled from
the user's own tree).  The maker skips validation, so it is for trees made from CPython's
tree only, never for a node a fix builds.
"""

from __future__ import annotations

import dataclasses
import functools

import libcst as cst

__all__ = ["M", "formatting"]


@functools.lru_cache(maxsize=None)
def formatting(kind: type) -> dict:
    """The fields of a node class that libcst fills with a new node per node (a default
    factory: whitespace, brackets), each made once: the nodes of one module share them."""
    return {f.name: f.default_factory() for f in dataclasses.fields(kind)  # type: ignore[misc]
            if f.default_factory is not dataclasses.MISSING}


def _maker(kind: type):
    """A function taking ``kind``'s constructor's arguments that sets its slots directly."""
    fields = [f for f in dataclasses.fields(kind) if f.init]
    shared = formatting(kind)
    env: dict = {"new": object.__new__, "kind": kind}
    params, body = [], []
    for i, f in enumerate(fields):
        env[f"set{i}"] = getattr(kind, f.name).__set__  # the slot's descriptor
        if f.name in shared or f.default is not dataclasses.MISSING:
            env[f"default{i}"] = shared[f.name] if f.name in shared else f.default
            params.append(f"{f.name}=default{i}")
        else:
            params.append(f.name)
        body.append(f"    set{i}(o, {f.name})")
    code = f"def make({', '.join(params)}):\n    o = new(kind)\n" + "\n".join(body) + "\n    return o\n"
    exec(code, env)  # noqa: S102 - generated from the dataclass's own fields, as dataclasses does
    make = env["make"]
    make.__qualname__ = make.__name__ = f"make_{kind.__name__}"
    return make


class _Makers:
    """``M.Call``: the maker of ``cst.Call``, built on first use."""

    def __getattr__(self, name: str):
        kind = getattr(cst, name)
        if not (isinstance(kind, type) and dataclasses.is_dataclass(kind) and issubclass(kind, cst.CSTNode)):
            raise AttributeError(name)
        made = _maker(kind)
        setattr(self, name, made)
        return made


M = _Makers()
