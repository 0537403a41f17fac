"""Plain-pytest tests of clothbake/runner.py against real child processes (no bpy)."""

import os
import stat
import sys
import time

import pytest

from clothbake_testutil import HERE, load_runner

runner = load_runner()
FAKE = os.path.join(HERE, "fake_clothbake.py")


def start(mode, *args):
    p = runner.BakeProcess([sys.executable, FAKE, mode, *map(str, args)])
    p.start()
    return p


def test_success_parses_every_event_and_progress():
    p = start("ok", 4)
    seen = []
    assert p.wait(timeout=30, on_events=seen.extend)
    kinds = [e.kind for e in seen]
    assert kinds == ["start", "frame", "frame", "frame", "frame", "warning", "done"]
    assert p.total == 4 and p.done == 4 and p.fraction == 1.0
    assert p.frame == 4
    assert p.eta_seconds == pytest.approx(0.0)
    r = p.result()
    assert r.ok and r.returncode == 0 and not r.cancelled
    assert r.outputs == ["out/g.pc2"]
    assert r.warnings == ["frame 2: stretch above 10%"]
    assert r.message == "baked 4 frames"


def test_poll_never_blocks_and_progress_grows():
    p = start("slow")
    t0 = time.monotonic()
    p.poll()
    assert time.monotonic() - t0 < 0.05
    deadline = time.monotonic() + 20
    while p.done < 3 and time.monotonic() < deadline:
        p.poll(timeout=0.1)
    assert p.total == 1000 and 3 <= p.done < 1000
    assert 0.0 < p.fraction < 1.0
    p.cancel()
    assert p.finished()


def test_bad_input_reports_the_binarys_message_and_exit_code_meaning():
    p = start("bad-input")
    assert p.wait(timeout=30)
    r = p.result()
    assert not r.ok and r.returncode == 2
    assert r.message == 'scene.toml: garment[0].material: unknown preset "velvet" (bad usage or bad input)'


def test_crash_without_error_event_falls_back_to_stderr():
    p = start("crash")
    assert p.wait(timeout=30)
    r = p.result()
    assert r.returncode == 101 and not r.ok
    assert r.message == "clothbake exited with code 101: thread 'main' panicked at src/main.rs:1:1"


def test_non_json_stdout_is_kept_aside_not_fatal():
    p = start("garbage")
    events = []
    assert p.wait(timeout=30, on_events=events.extend)
    assert [e.kind for e in events] == ["start"]
    assert p.unparsed == ["hello, not json", "[1, 2, 3]"]
    assert p.result().message == "clothbake the simulation failed: [1, 2, 3]"


def test_large_stderr_does_not_deadlock_and_keeps_a_tail():
    p = start("chatty-stderr")
    assert p.wait(timeout=60)
    assert p.result().ok
    assert p.stderr_tail[-1] == "log line 19999"
    assert len(p.stderr_tail) == 40


def test_cancel_terminates_the_child():
    p = start("slow")
    p.poll(timeout=5)
    t0 = time.monotonic()
    p.cancel(grace_seconds=5)
    assert time.monotonic() - t0 < 5
    assert p.finished()
    r = p.result()
    assert r.cancelled and not r.ok and r.message == "bake cancelled"
    assert r.returncode != 0


@pytest.mark.skipif(os.name == "nt", reason="SIGTERM cannot be ignored on Windows")
def test_cancel_kills_a_child_that_ignores_terminate():
    p = start("stubborn")
    while p.total == 0:  # the child installs its SIGTERM handler before the start event
        p.poll(timeout=5)
    t0 = time.monotonic()
    p.cancel(grace_seconds=0.5)
    elapsed = time.monotonic() - t0
    assert p.finished()
    assert p.returncode == -9
    assert 0.4 < elapsed < 5


def test_find_binary_order_and_errors(tmp_path):
    exe = tmp_path / "clothbake"
    exe.write_text("#!/bin/sh\nexit 0\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    other = tmp_path / "bin"
    other.mkdir()
    on_path = other / "clothbake"
    on_path.write_text("#!/bin/sh\nexit 0\n")
    on_path.chmod(on_path.stat().st_mode | stat.S_IXUSR)

    env = {"PATH": str(other), "CLOTHBAKE_BIN": str(exe)}
    assert runner.find_binary(str(on_path), env) == str(on_path)  # preference first
    assert runner.find_binary("", env) == str(exe)  # then the environment
    assert runner.find_binary("", {"PATH": str(other)}) == str(on_path)  # then PATH
    with pytest.raises(runner.BinaryNotFound, match="CLOTHBAKE_BIN is '/nonexistent/clothbake'"):
        runner.find_binary("", {"PATH": str(other), "CLOTHBAKE_BIN": "/nonexistent/clothbake"})
    with pytest.raises(runner.BinaryNotFound, match="put 'clothbake' on PATH"):
        runner.find_binary("", {"PATH": str(tmp_path / "empty")})


def test_missing_executable_raises_oserror():
    p = runner.BakeProcess(["/nonexistent/clothbake", "bake"])
    with pytest.raises(OSError):
        p.start()


@pytest.mark.parametrize(
    "code,text",
    [(0, "bake finished"), (1, "the simulation failed"), (2, "bad usage or bad input"), (130, "the bake was interrupted"), (-15, "terminated by signal 15"), (7, "exited with code 7")],
)
def test_exit_code_messages(code, text):
    assert runner.exit_code_message(code) == text
