"""Running one analysis away from the language server's protocol thread (issue 22).

Each call runs in a child process of its own, forked from the server: the child has
every module the server has imported, needs no pickling of its arguments, and holds
the GIL of its own, so a document that takes minutes (or gigabytes) never stops the
server from answering about other documents. The result comes back pickled through a
pipe that the event loop watches (``add_reader``): no thread waits on it.

A job can be killed (``Job.kill``), which is what the server does to the analysis of a
version of a document that a newer edit has made stale: its result would be dropped
anyway, and its CPU and memory are better spent on the new text.

The child is forked by hand rather than with :mod:`multiprocessing`: multiprocessing's
child closes ``sys.stdin``, whose lock the server's reader thread may hold at the fork,
and flushes ``sys.stdout``, which is the protocol's stream. Here the child touches
neither, points its stdout at ``/dev/null`` and leaves with ``os._exit``.

Where ``os.fork`` does not exist (Windows) the call runs in a thread instead: off the
protocol thread, but not killable and sharing the GIL."""

from __future__ import annotations

import asyncio
import os
import pickle
import signal
from typing import Any, Callable

from nanlint.source import ast_tree

CAN_FORK = hasattr(os, "fork")


class WorkerError(Exception):
    """The call raised in the child (its one-line message), or the child died."""


class Job:
    """One call of ``fn(*args)`` in a child process; ``future`` gets its value."""

    def __init__(self, fn: Callable[..., Any], args: tuple, nice: int = 0) -> None:
        self.loop = asyncio.get_running_loop()
        self.future: asyncio.Future = self.loop.create_future()
        self.pid: int | None = None
        self.fd: int | None = None
        self.chunks: list[bytes] = []
        if CAN_FORK:
            self._fork(fn, args, nice)
        else:
            self.loop.run_in_executor(None, _call, fn, args).add_done_callback(self._threaded)

    # --- the child ------------------------------------------------------------------------
    def _fork(self, fn: Callable[..., Any], args: tuple, nice: int) -> None:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: compute, write, leave without running anything of the parent's
            try:
                os.close(read)
                if nice:
                    os.nice(nice)
                # as the command line's workers do: what the child inherits is never its
                # garbage, and each tree it parses is not either (it exits after one call),
                # so no collection scans them
                ast_tree.freeze_heap()
                null = os.open(os.devnull, os.O_WRONLY)
                os.dup2(null, 1)  # stdout is the protocol's stream: nothing of the child's goes there
                try:
                    payload = pickle.dumps(_call(fn, args), protocol=pickle.HIGHEST_PROTOCOL)
                except Exception as exc:  # noqa: BLE001 - an unpicklable value: an error, not a broken pipe
                    payload = pickle.dumps(("error", _one_line(exc)))
                with os.fdopen(write, "wb") as out:
                    out.write(payload)
            finally:
                os._exit(0)
        os.close(write)
        os.set_blocking(read, False)
        self.pid, self.fd = pid, read
        self.loop.add_reader(read, self._readable)

    # --- the parent -----------------------------------------------------------------------
    def _readable(self) -> None:
        try:
            chunk = os.read(self.fd, 1 << 20)
        except BlockingIOError:
            return
        except OSError as exc:
            self._finish(None, WorkerError(f"worker pipe: {exc}"))
            return
        if chunk:
            self.chunks.append(chunk)
            return
        try:  # end of file: the child wrote everything (or died)
            # a result of 35,000 findings: 0.34 s with the collector walking the heap as it is built, 0.08 s without
            with ast_tree.collector_paused():
                outcome = pickle.loads(b"".join(self.chunks))
        except Exception:  # noqa: BLE001 - killed or crashed before it wrote a whole result
            outcome = ("error", "the analysis process died (out of memory?)")
        self._finish(outcome, None)

    def _threaded(self, done: asyncio.Future) -> None:
        if not self.future.done():
            self.future.set_result(done.result())

    def _finish(self, outcome: tuple[str, Any] | None, error: Exception | None) -> None:
        self._reap()
        if self.future.done():
            return
        if error is None and outcome[0] == "error":
            error = WorkerError(outcome[1])
        if error is not None:
            self.future.set_exception(error)
        else:
            self.future.set_result(outcome[1])

    def _reap(self) -> None:
        if self.fd is not None:
            self.loop.remove_reader(self.fd)
            os.close(self.fd)
            self.fd = None
        if self.pid is not None:
            try:
                os.waitpid(self.pid, 0)
            except ChildProcessError:
                pass
            self.pid = None

    def kill(self) -> None:
        """Stop the child now; ``future`` is cancelled (a thread, where there is no fork,
        runs on but its value is never read)."""
        if self.pid is not None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self._reap()
        self.future.cancel()

    @property
    def done(self) -> bool:
        return self.future.done()


def _call(fn: Callable[..., Any], args: tuple) -> tuple[str, Any]:
    """``("ok", value)`` or ``("error", one line)``: what crosses the pipe."""
    try:
        return "ok", fn(*args)
    except Exception as exc:  # noqa: BLE001 - the child reports everything, as one line
        return "error", _one_line(exc)


def _one_line(exc: BaseException) -> str:
    return " ".join(f"{type(exc).__name__}: {exc}".split())[:300]


def run(fn: Callable[..., Any], *args: Any, nice: int = 0) -> Job:
    """Start ``fn(*args)`` in a child process (a thread where there is no fork); ``nice``:
    its priority lowered by that much (work that may wait for the analyses an edit needs)."""
    return Job(fn, args, nice)
