"""Lint (and fix) a list of files: cache, prefilter, then parse in parallel.

For each file, in the calling process:

1. read it;
2. **cache** (:mod:`nanlint.lint.cache`): when an entry exists for (this file's
   linter, these bytes), its findings are the result -- in fix mode only when
   none of them is fixable (else the file is fixed for real);
3. the rest is **prefiltered** and linted, in worker processes when there are
   enough of them (``jobs``), serially otherwise.

The prefilter decides without parsing whether a file can have a finding; it
never hides one (``tests/test_speed.py`` compares prefiltered and unfiltered
runs).  A file is parsed with libcst and linted when

* it mentions a framework root (``tensorflow``, ``keras``, ``torch``, ``jax``,
  ``optax``...) as a word anywhere in its text -- a framework op can only resolve
  through an import that names its root.  This gate is on only when every enabled
  rule (but NAN001) is about framework code (a non-empty ``Rule.frameworks``;
  NAN002 unused-noqa, for one, is not);
* and some enabled rule wants its text (``Rule.wanted``: the rule's ``needs``).

Every other file gets a syntax check instead, with CPython's own parser
(``compile(..., PyCF_ONLY_AST)``, ~5x cheaper than libcst's), when NAN001 is
enabled: if CPython rejects it, it goes through the full lint, so a file that
does not parse -- a Python 2 TensorFlow script, a syntax error in a utility
module -- is reported as NAN001 exactly as without the prefilter.  (A file that
CPython accepts and libcst rejects would be reported only without the
prefilter; none such is known.)  Notebooks are never prefiltered.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from nanlint.lint import cache as cache_mod
from nanlint.lint.dep_keys import DepKeys
from nanlint.lint.engine import Linter, precheck
from nanlint.findings import Edit, FileResult, Finding
from nanlint.lint.writer import read, write_atomic
from nanlint.vocabulary import frameworks as fw_registry
from nanlint.source import ast_tree, walk
from nanlint.semantic import importers, modules

LINT, CHECK, SKIP = "lint", "check-parse", "skip"
FULL = "full"  # lint without any prefilter (``--no-prefilter``: for testing the prefilters)
# Worker processes pay off from a few files and ~1,500 lines of work (their start
# costs ~20 ms each with fork; a 1,000-line file takes ~0.2 s to parse and lint).
MIN_PARALLEL = 2
MIN_PARALLEL_BYTES = 60_000
_UTF16_32_BOMS = (b"\xff\xfe", b"\xfe\xff")


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


class Prefilter:
    """Whether a file can have a finding under one linter, from its raw bytes."""

    def __init__(self, linter: Linter) -> None:
        self.rules = [r for r in linter.rules if r.code != "NAN001"]
        self.check_parse = linter.check_parse
        # the rules that speak of no framework (NAN002: a directive anywhere) are asked apart:
        # a file without a framework's name is linted only for one of them that wants it
        self.anywhere = [r for r in self.rules if not r.frameworks]
        self.framework_gate = any(r.frameworks for r in self.rules)
        roots = set(fw_registry.roots())
        roots |= {name.split(".")[0] for name in fw_registry.function_table()}
        self.framework_word = re.compile(r"\b(?:%s)\b" % "|".join(sorted(map(re.escape, roots))))
        # needs are matched on the bytes decoded as UTF-8 with undecodable bytes
        # escaped: every ASCII needle is found exactly as in the decoded source
        self.ascii_needs = all(n.isascii() for r in self.rules for n in r.needs)

    def decide(self, path: str, source: bytes) -> str:
        if path.endswith(".ipynb") or not self.ascii_needs or source.startswith(_UTF16_32_BOMS):
            return LINT
        text = source.decode("utf-8", "surrogateescape")
        if self.framework_gate and self.framework_word.search(text) is None:
            if any(rule.wanted(text) for rule in self.anywhere):
                return LINT
            return CHECK if self.check_parse else SKIP
        for rule in self.rules:
            if rule.wanted(text):
                return LINT
        return CHECK if self.check_parse else SKIP


def _compiles(source: bytes) -> bool:
    """Whether CPython decodes and parses ``source`` (else it goes through the full lint)."""
    try:
        return precheck(source).tree is not None
    except BaseException:  # noqa: BLE001 - SyntaxError, UnicodeDecodeError, NestingTooDeep, MemoryError...
        return False


def process_source(path: Path, source: bytes, linter: Linter, fix: bool, unsafe: bool, write: bool,
                   verdict: str = LINT) -> FileResult:
    """Lint or fix one file whose bytes are ``source``; ``verdict`` is the prefilter's."""
    name = str(path)
    if verdict == SKIP or (verdict == CHECK and _compiles(source)):
        return FileResult(name, skipped=True)
    sites = verdict != FULL
    if fix:
        result = linter.fix_source(source, name, unsafe, sites)
        if write:
            result = _write_fixed(path, source, linter, result, sites)
    else:
        result = linter.lint_source(source, name, sites)
    return result


# --- Ctrl-C ----------------------------------------------------------------------------
# An interrupt stops the run at once and no file is written after it: files are
# written by the calling process only (workers send the fixed bytes back), and a
# SIGINT that arrives while a file is being replaced takes effect just after it, so
# that file counts as fixed before the interrupt.
class Interrupted(KeyboardInterrupt):
    """SIGINT during :func:`run`; ``fixed``: the files it wrote before (no other was written)."""

    def __init__(self, fixed: list[str]) -> None:
        super().__init__()
        self.fixed = fixed


_held = False  # a file is being replaced: a SIGINT waits for the end of it
_pending = False  # a SIGINT came while _held


def _on_sigint(signum, frame) -> None:
    global _pending
    if _held:
        _pending = True
        return
    raise KeyboardInterrupt


def _raise_pending() -> None:
    global _pending
    if _pending:
        _pending = False
        raise KeyboardInterrupt


@contextlib.contextmanager
def _deferred_sigint():
    """While in the main thread with Python's own SIGINT handler: a SIGINT during
    :func:`_write_fixed` is raised after the write (else the handler is left as is)."""
    global _pending
    if threading.current_thread() is not threading.main_thread() \
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return
    _pending = False
    previous = signal.signal(signal.SIGINT, _on_sigint)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _write_fixed(path: Path, source: bytes, linter: Linter, result: FileResult, sites: bool) -> FileResult:
    """Write ``result``'s fixed bytes over ``path``; on failure, the file's findings and the error.
    A SIGINT meanwhile is held until the write is over (the caller raises it: :func:`_raise_pending`)."""
    global _held
    if result.fixed_source is None:
        return result
    _held = True
    try:
        error = write_atomic(path, result.fixed_source, source)
    finally:
        _held = False
    if error is not None:
        result = linter.lint_source(source, str(path), sites)
        result.error = error
    return result


def process(path: Path, linter: Linter, fix: bool, unsafe: bool, write: bool) -> tuple[FileResult, bytes | None]:
    """Lint or fix one file. Returns the result and the original bytes (None when unreadable)."""
    try:
        source = read(path)
    except OSError as exc:
        return FileResult(str(path), error=f"{path}: cannot read: {exc.strerror or exc}"), None
    return process_source(path, source, linter, fix, unsafe, write), source


@dataclass
class Stats:
    """What one run did, for ``--statistics``-like reporting and the benchmark."""

    files: int = 0
    cached: int = 0
    prefiltered: int = 0  # decided without a libcst parse
    parsed: int = 0
    jobs: int = 1
    reused_keys: int = 0  # files whose dependency key part the last run's record gave
    keys: dict = field(default_factory=dict)  # path -> its cache key (runs with a cache)


@contextlib.contextmanager
def _frozen_heap():
    """A serial run keeps the collector off what it holds, as a worker does
    (``ast_tree.freeze_heap``: what exists before the run, and each file's tree after its
    parse).  Otherwise every full collection scans the run's memo and the trees still
    alive, and CPython's parse of the next file pays for it: a serial run of the training
    corpus (1,078 files) took 44.5 CPU s, 34.5 s frozen.  Cyclic garbage made during the
    run waits for its end (``ast_tree.thaw_heap``)."""
    if ast_tree.FREEZE_TREES:  # already frozen (a worker, a nested run)
        yield
        return
    ast_tree.freeze_heap()
    try:
        yield
    finally:
        ast_tree.thaw_heap()


# --- worker processes ------------------------------------------------------------------
# The work is set up in the parent and inherited by forked workers, which are
# sent only indices and send back results.
_WORK: list[tuple[Path, bytes, Linter, str]] = []
_MODE: tuple[bool, bool, bool] = (False, False, False)


def _worker_init() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops the workers (a terminal signals them all)
    ast_tree.freeze_heap()  # the inherited objects are never garbage: keep collections from scanning them


def _work(k: int) -> tuple[int, FileResult]:
    path, source, linter, verdict = _WORK[k]
    fix, unsafe, _ = _MODE
    return k, process_source(path, source, linter, fix, unsafe, False, verdict)  # the parent writes


def _stop(pool) -> None:
    """Drop ``pool``'s queued files and end its workers now (an interrupt: do not wait for them)."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for p in processes:
        p.terminate()
    for p in processes:
        p.join(1)


def _run_parallel(order: list[int], jobs: int,
                  finish: Callable[[int, FileResult], FileResult]) -> dict[int, FileResult]:
    """Results by index, each passed through ``finish`` (which writes a fixed file) as it
    comes.  A worker that dies (a crash in native code) does not hang
    or lose the run: the files it left are retried one per fresh worker, and the
    file that kills its worker again is reported as an error, left unchanged.
    An exception (KeyboardInterrupt) ends the workers at once, without waiting for the queue."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    context = multiprocessing.get_context("fork")
    out: dict[int, FileResult] = {}
    try:
        pool = ProcessPoolExecutor(jobs, mp_context=context, initializer=_worker_init)
        try:
            for future in as_completed([pool.submit(_work, k) for k in order]):
                k, result = future.result()
                out[k] = finish(k, result)
        except BaseException:
            _stop(pool)
            raise
        pool.shutdown()
    except BrokenProcessPool:
        for k in order:
            if k in out:
                continue
            one = ProcessPoolExecutor(1, mp_context=context, initializer=_worker_init)
            try:
                out[k] = finish(k, one.submit(_work, k).result()[1])
            except BrokenProcessPool:
                path = _WORK[k][0]
                out[k] = FileResult(str(path), error=f"{path}: the linting process died on this file "
                                                     f"(a crash in native code?); file left unchanged")
            except BaseException:
                _stop(one)
                raise
            one.shutdown()
    return out


def _memoized(fn):
    """``fn`` with the project-modules lookups remembered for its duration (one run), and the
    import lines of the texts it reads kept in the cache (``cache=``) for the next run."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        cache = kwargs.get("cache")
        known = cache.import_lines() if cache is not None else None
        with modules.run_memo(known, observing=cache is not None):  # only a cache keeps what is observed
            out = fn(*args, **kwargs)
        if cache is not None and known is not None:
            cache.store_import_lines(known)
        return out
    return wrapper


@_memoized
def run(files: Sequence[Path], linter_for: Callable[[Path], Linter], fix: bool, unsafe: bool,
        write: bool, jobs: int | None = None, cache: "cache_mod.Cache | None" = None,
        prefilter: bool = True, cache_extra: str = "",
        stats: Stats | None = None) -> list[tuple[FileResult, bytes | None]]:
    """Results in the order of ``files``: (result, the original bytes or None when unreadable).

    ``jobs``: worker processes (None or 0: one per core); ``cache``: look up and
    store results; ``prefilter``: decide without parsing where possible;
    ``cache_extra``: more text for the cache key (the contents of the files
    the configuration comes from)."""
    global _WORK, _MODE
    stats = stats if stats is not None else Stats()
    stats.files = len(files)
    results: list[tuple[FileResult, bytes | None] | None] = [None] * len(files)
    prefilters: dict[int, Prefilter] = {}
    fingerprints: dict[int, str] = {}
    extras: dict[int, tuple[str, ...]] = {}  # linter -> its extra import roots
    keys: dict[int, str] = {}
    work: list[tuple[Path, bytes, Linter, str]] = []
    index: list[int] = []  # work item -> file index
    dep_keys = DepKeys(cache.dep_keys()) if cache is not None else None
    for i, path in enumerate(files):
        stat = modules.stat_of(os.fspath(path)) if dep_keys is not None else None  # before the read
        try:
            source = read(path)
        except OSError as exc:
            results[i] = (FileResult(str(path), error=f"{path}: cannot read: {exc.strerror or exc}"), None)
            continue
        linter = linter_for(path)
        if cache is not None:
            fp = fingerprints.get(id(linter))
            if fp is None:
                fp = fingerprints[id(linter)] = cache_mod.linter_fingerprint(
                    [r.code for r in linter.rules], linter.settings, cache_extra)
            extra = extras.get(id(linter))
            if extra is None:
                extra = extras[id(linter)] = modules.extra_roots(linter.settings)
            deps = dep_keys.part(path, stat, extra, lambda: _dependencies(path, source, extra))  # type: ignore[union-attr]
            key = keys[i] = stats.keys[str(path)] = cache.key(fp + _kind(path) + deps, source)
            hit = _from_cache(cache, key, str(path), fix, unsafe)
            if hit is not None:
                stats.cached += 1
                results[i] = (hit, source)
                continue
        verdict = LINT if prefilter else FULL
        if prefilter:
            pf = prefilters.get(id(linter))
            if pf is None:
                pf = prefilters[id(linter)] = Prefilter(linter)
            verdict = pf.decide(str(path), source)
        if verdict == SKIP:
            stats.prefiltered += 1
            results[i] = (FileResult(str(path)), source)
            _store(cache, keys.get(i), results[i][0])
            continue
        index.append(i)
        work.append((path, source, linter, verdict))

    jobs = default_jobs() if jobs is None or jobs <= 0 else jobs
    jobs = min(jobs, len(work))
    written: list[str] = []  # files fixed on disk, in the order written

    def finish(k: int, result: FileResult) -> FileResult:
        path, source, linter, verdict = work[k]
        if fix and write:
            result = _write_fixed(path, source, linter, result, verdict != FULL)
            if result.fixed_source is not None:
                written.append(str(path))
        return result

    done: dict[int, FileResult] = {}
    try:
        with _deferred_sigint():
            if jobs > 1 and len(work) >= MIN_PARALLEL and sum(len(item[1]) for item in work) >= MIN_PARALLEL_BYTES \
                    and "fork" in _start_methods():
                stats.jobs = jobs
                _WORK, _MODE = work, (fix, unsafe, write)
                walk.load_libcst()  # before the fork: the workers share one import of it
                try:  # biggest first, so that the pool's last tasks are small ones
                    done = _run_parallel(sorted(range(len(work)), key=lambda k: -len(work[k][1])), jobs,
                                         lambda k, result: _checked(finish(k, result)))
                finally:
                    _WORK = []
            else:
                with _frozen_heap():
                    for k, (path, source, linter, verdict) in enumerate(work):
                        done[k] = _checked(finish(k, process_source(path, source, linter, fix, unsafe, False, verdict)))
    except KeyboardInterrupt:
        raise Interrupted(written) from None
    for k, i in enumerate(index):
        path, source, linter, verdict = work[k]
        result = done[k]
        if not result.skipped:
            stats.parsed += 1
        else:
            stats.prefiltered += 1
        results[i] = (result, source)
        if cache is not None and result.error is None:
            if result.fixed_source is None:
                _store(cache, keys[i], result)
            elif write:  # the findings are those of the fixed content, now on disk
                _store(cache, cache.key(fingerprints[id(linter)] + _kind(path)
                                        + _dependencies(path, source, extras[id(linter)]), result.fixed_source), result)
    if cache is not None and dep_keys is not None:
        stats.reused_keys = dep_keys.reused
        observed = modules.observed()
        if not dep_keys.unchanged(observed):
            cache.store_dep_keys(dep_keys.payload(observed))
    return results  # type: ignore[return-value]


def _checked(result: FileResult) -> FileResult:
    _raise_pending()  # a SIGINT held while the file was written: now the result is counted
    return result


def _dependencies(path: Path, source: bytes, extra: tuple[str, ...]) -> str:
    """A digest of the project modules ``path`` imports (:mod:`nanlint.semantic.modules`; ``extra``:
    the configuration's import roots): a value may come from them, so their contents are part of
    the cache key."""
    if b"import" not in source:
        return ""

    text = source.decode("utf-8", "replace")
    deps = modules.dependencies(Path(path), text, extra)
    # and the files that import it: whether a gradient reaches a helper is decided there
    deps += [p for p, _ in importers.importers(Path(path), extra) if p not in deps]
    return ":" + modules.digest(deps) if deps else ""


def _kind(path: Path) -> str:
    return ":ipynb" if str(path).endswith(".ipynb") else ""


def _store(cache: "cache_mod.Cache | None", key: str | None, result: FileResult) -> None:
    if cache is not None and key is not None:
        cache.put(key, [cache_mod.encode(f) for f in result.findings], result.hidden, result.opt_in)


def _start_methods() -> list[str]:
    if sys.platform != "linux":  # fork is unsafe with macOS system libraries
        return []
    import multiprocessing

    return multiprocessing.get_all_start_methods()


def _from_cache(cache: "cache_mod.Cache", key: str, path: str, fix: bool, unsafe: bool) -> FileResult | None:
    entry = cache.get(key)
    if entry is None:
        return None
    data, hidden, opt_in = entry
    try:
        findings = [cache_mod.decode(d, path, Finding, Edit) for d in data]
    except (KeyError, TypeError, ValueError):
        return None
    if fix and any(f.fixable(unsafe) for f in findings):
        return None  # fix it for real
    return FileResult(path, findings=findings, hidden=hidden, opt_in=opt_in)
