"""Start the clothbake binary as a child process and follow its ``--json`` progress.

This module does not import ``bpy``: it is unit-tested with plain pytest and could drive the binary
from any tool. The protocol (docs/scene-format.md): one JSON object per line on stdout with
``event`` = ``start`` | ``frame`` | ``warning`` | ``error`` | ``done``; exit code 0 success,
2 bad usage or bad input, 1 the simulation failed.

Reading never blocks the caller: two daemon threads read stdout and stderr into a queue, and
:meth:`BakeProcess.poll` drains it. Cancelling terminates the child and kills it if it has not
exited after a grace period.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass, field

__all__ = [
    "BinaryNotFound",
    "BakeEvent",
    "BakeProcess",
    "BakeResult",
    "ENV_VAR",
    "exit_code_message",
    "find_binary",
]

#: Environment variable naming the binary when the add-on preference is empty.
ENV_VAR = "CLOTHBAKE_BIN"

_EXIT_MESSAGES = {
    0: "bake finished",
    1: "the simulation failed",
    2: "bad usage or bad input",
    130: "the bake was interrupted",
}

#: How many trailing stderr lines are kept for error messages.
_STDERR_KEEP = 40


class BinaryNotFound(Exception):
    """The clothbake binary could not be located (the message says where it was looked for)."""


def exit_code_message(code: int | None) -> str:
    """Human-readable meaning of a clothbake exit code (negative: killed by that signal)."""
    if code is None:
        return "still running"
    if code in _EXIT_MESSAGES:
        return _EXIT_MESSAGES[code]
    if code < 0:
        return f"terminated by signal {-code}"
    return f"exited with code {code}"


def _usable_file(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def find_binary(preference: str = "", environ: dict | None = None) -> str:
    """Locate the clothbake binary: the add-on preference, else ``$CLOTHBAKE_BIN``, else ``PATH``.

    A preference or environment value that is set but does not name an executable file is an error
    (it is never silently skipped), so a typo is reported rather than baking with another binary.
    """
    env = os.environ if environ is None else environ
    for origin, value in (("add-on preference 'Binary'", preference), (ENV_VAR, env.get(ENV_VAR, ""))):
        if value:
            path = os.path.abspath(os.path.expanduser(value))
            if _usable_file(path):
                return path
            raise BinaryNotFound(f"clothbake binary not found: {origin} is {value!r}, which is not an executable file")
    found = shutil.which("clothbake", path=env.get("PATH", os.defpath))
    if found:
        return os.path.abspath(found)
    raise BinaryNotFound(
        "clothbake binary not found: set the add-on preference 'Binary', "
        f"the {ENV_VAR} environment variable, or put 'clothbake' on PATH"
    )


@dataclass
class BakeEvent:
    """One parsed line of ``--json`` output. ``kind`` is the ``event`` field; ``data`` the whole object."""

    kind: str
    data: dict

    def get(self, key, default=None):
        return self.data.get(key, default)


@dataclass
class BakeResult:
    """Outcome of a finished (or cancelled) child process."""

    returncode: int | None
    cancelled: bool
    outputs: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    message: str = ""

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.cancelled


class BakeProcess:
    """One run of ``clothbake ... --json``.

    Usage: ``p = BakeProcess(argv); p.start()``; then call :meth:`poll` repeatedly (each call returns the
    events that arrived since the last call and updates :attr:`done`/:attr:`total`) until
    :meth:`finished` is true, then :meth:`result`. :meth:`cancel` ends the child.
    """

    def __init__(self, argv: list[str], cwd: str | None = None, env: dict | None = None):
        self.argv = list(argv)
        self.cwd = cwd
        self.env = env
        self.done = 0
        self.total = 0
        self.frame: int | None = None
        self.eta_seconds: float | None = None
        self.start_event: dict | None = None
        self.done_event: dict | None = None
        self.errors: list[str] = []
        self.warnings: list[str] = []
        self.unparsed: list[str] = []
        self.stderr_tail: list[str] = []
        self.cancelled = False
        self._proc: subprocess.Popen | None = None
        self._queue: queue.Queue = queue.Queue()
        self._threads: list[threading.Thread] = []
        self._open_streams = 0

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        """Start the child. Raises ``OSError`` if it cannot be executed."""
        creationflags = 0
        if os.name == "nt":  # no console window popping up from Blender
            creationflags = getattr(subprocess, "CREATE_NO_WINDOW", 0)
        self._proc = subprocess.Popen(
            self.argv,
            cwd=self.cwd,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="replace",
            bufsize=1,
            creationflags=creationflags,
        )
        for name, stream in (("stdout", self._proc.stdout), ("stderr", self._proc.stderr)):
            t = threading.Thread(target=self._pump, args=(name, stream), daemon=True, name=f"clothbake-{name}")
            self._open_streams += 1
            t.start()
            self._threads.append(t)

    def _pump(self, name: str, stream) -> None:
        try:
            for line in stream:
                self._queue.put((name, line.rstrip("\r\n")))
        except (OSError, ValueError):  # stream closed under us (cancel)
            pass
        finally:
            self._queue.put((name, None))

    @property
    def pid(self) -> int | None:
        return None if self._proc is None else self._proc.pid

    @property
    def returncode(self) -> int | None:
        return None if self._proc is None else self._proc.poll()

    def finished(self) -> bool:
        """True once the child has exited and both of its streams are fully read."""
        return self._proc is not None and self._proc.poll() is not None and self._open_streams == 0

    @property
    def fraction(self) -> float:
        """Progress in [0, 1] from the last ``frame`` event."""
        return min(1.0, self.done / self.total) if self.total > 0 else 0.0

    # -- reading -----------------------------------------------------------------------------

    def poll(self, timeout: float = 0.0) -> list[BakeEvent]:
        """Return the events that arrived; wait up to ``timeout`` seconds for the first one."""
        events: list[BakeEvent] = []
        block = timeout > 0
        while True:
            try:
                name, line = self._queue.get(block=block, timeout=timeout if block else None)
            except queue.Empty:
                break
            block = False
            if line is None:
                self._open_streams -= 1
                continue
            if name == "stderr":
                self.stderr_tail.append(line)
                del self.stderr_tail[:-_STDERR_KEEP]
                continue
            event = self._parse(line)
            if event is not None:
                self._apply(event)
                events.append(event)
        return events

    def _parse(self, line: str) -> BakeEvent | None:
        if not line.strip():
            return None
        try:
            data = json.loads(line)
        except json.JSONDecodeError:
            self.unparsed.append(line)
            return None
        if not isinstance(data, dict) or not isinstance(data.get("event"), str):
            self.unparsed.append(line)
            return None
        return BakeEvent(data["event"], data)

    def _apply(self, event: BakeEvent) -> None:
        if event.kind == "start":
            self.start_event = event.data
            self.total = _as_int(event.get("frames"), self.total)
        elif event.kind == "frame":
            self.done = _as_int(event.get("done"), self.done)
            self.total = _as_int(event.get("total"), self.total)
            self.frame = _as_int(event.get("frame"), self.frame)
            eta = event.get("eta_seconds")
            self.eta_seconds = float(eta) if isinstance(eta, (int, float)) else None
        elif event.kind == "warning":
            self.warnings.append(_with_frame(str(event.get("message", "")), event.get("frame")))
        elif event.kind == "error":
            self.errors.append(str(event.get("message", "")))
        elif event.kind == "done":
            self.done_event = event.data
            if self.total:
                self.done = self.total

    def wait(self, timeout: float | None = None, on_events=None) -> bool:
        """Block until finished (or ``timeout`` seconds); ``on_events(events)`` is called as they come.

        Returns True when finished.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self.finished():
            if deadline is not None and time.monotonic() >= deadline:
                return False
            events = self.poll(timeout=0.1)
            if events and on_events is not None:
                on_events(events)
            if self._open_streams == 0 and self._proc is not None:
                self._proc.wait(timeout=None if deadline is None else max(0.0, deadline - time.monotonic()))
        events = self.poll()
        if events and on_events is not None:
            on_events(events)
        return True

    # -- cancel ------------------------------------------------------------------------------

    def cancel(self, grace_seconds: float = 3.0) -> None:
        """End the child: terminate, then kill if it is still running after ``grace_seconds``."""
        self.cancelled = True
        proc = self._proc
        if proc is None or proc.poll() is not None:
            return
        try:
            proc.terminate()
            proc.wait(timeout=grace_seconds)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        except OSError:
            pass
        for t in self._threads:
            t.join(timeout=grace_seconds)
        self.poll()

    # -- outcome -----------------------------------------------------------------------------

    def result(self) -> BakeResult:
        """Summarise a finished run: the binary's own error message first, else stderr, else the exit code."""
        code = self.returncode
        outputs = []
        if self.done_event is not None and isinstance(self.done_event.get("outputs"), list):
            outputs = [str(o) for o in self.done_event["outputs"]]
        if self.cancelled:
            message = "bake cancelled"
        elif code == 0:
            message = f"baked {self.total} frames" if self.total else exit_code_message(0)
        else:
            message = self.error_message()
        return BakeResult(code, self.cancelled, outputs, list(self.warnings), message)

    def error_message(self) -> str:
        code = self.returncode
        meaning = exit_code_message(code)
        if self.errors:
            return f"{self.errors[-1]} ({meaning})"
        detail = [line for line in self.stderr_tail if line.strip()] or self.unparsed
        if detail:
            return f"clothbake {meaning}: {detail[-1].strip()}"
        return f"clothbake {meaning}"


def _as_int(value, fallback):
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else fallback


def _with_frame(message: str, frame) -> str:
    return f"frame {frame}: {message}" if isinstance(frame, int) else message
