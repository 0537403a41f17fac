"""A stand-in child process for test_runner.py: prints clothbake-style --json lines per MODE.

Usage: python fake_clothbake.py MODE [FRAMES]
"""

import json
import signal
import sys
import time


def emit(**event):
    print(json.dumps(event), flush=True)


def main():
    mode = sys.argv[1]
    frames = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    if mode == "ok":
        emit(event="start", scene="s.toml", frames=frames, frame_start=1, frame_end=frames, garments=["g"], threads=1)
        for i in range(frames):
            emit(event="frame", frame=1 + i, done=i + 1, total=frames, substeps=5, eta_seconds=0.1 * (frames - i - 1))
        emit(event="warning", message="stretch above 10%", frame=2)
        emit(event="done", outputs=["out/g.pc2"], report=None, seconds=0.01, frames=frames)
        return 0
    if mode == "bad-input":
        emit(event="error", message="scene.toml: garment[0].material: unknown preset \"velvet\"", code=2)
        print("error: scene.toml: garment[0].material: unknown preset \"velvet\"", file=sys.stderr)
        return 2
    if mode == "crash":
        emit(event="start", scene="s.toml", frames=frames, garments=["g"])
        print("thread 'main' panicked at src/main.rs:1:1", file=sys.stderr, flush=True)
        return 101
    if mode == "garbage":
        print("hello, not json", flush=True)
        print("[1, 2, 3]", flush=True)
        emit(event="start", frames=2)
        return 1
    if mode == "chatty-stderr":
        for i in range(20000):  # far more than a pipe buffer: must not deadlock
            print(f"log line {i}", file=sys.stderr)
        emit(event="done", outputs=[], frames=0)
        return 0
    if mode in ("slow", "stubborn"):
        if mode == "stubborn":
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        emit(event="start", scene="s.toml", frames=1000, garments=["g"])
        for i in range(1000):
            emit(event="frame", frame=i, done=i + 1, total=1000)
            time.sleep(0.05)
        return 0
    print(f"unknown mode {mode}", file=sys.stderr)
    return 64


if __name__ == "__main__":
    sys.exit(main())
