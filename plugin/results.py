"""Run directories and the writers of their output files: atomic JSON, CSV and text writers, and
RunDirLock, one run at a time per run directory (docs/design.md, "Runs and their directories")."""

from __future__ import annotations

import contextlib
import csv
import json
import math
import os
import secrets
import shlex
import socket
import sys
import time
from collections.abc import Iterable
from datetime import datetime, timezone
from pathlib import Path

from pytest_reasoning_evals.providers.base import mask_url

try:
    import fcntl
except ImportError:  # not POSIX (Windows): run directories are not locked there
    fcntl = None

LOCK_NAME = ".lock"
LOCK_PATIENCE = 1.0  # seconds a process waits to read the holder of a lock it cannot take
RUN_ADVICE = "wait for it to end, or give this run another --eval-out-dir"
NOTHING_RUNS = ("collectonly", "showfixtures", "show_fixtures_per_test", "setupplan")  # pytest options
NEW_FOLDERS_KEY = "eval_new_folders"  # workerinput: the output folders that did not exist when the run started


def missing_folders(folder: Path) -> list[Path]:
    """`folder` and those of its parents that do not exist, deepest first (what a mkdir makes)."""
    missing = []
    for part in (folder, *folder.parents):
        if os.path.lexists(part):
            break
        missing.append(part)
    return missing


def temp_path(path: Path) -> Path:
    """A temp file beside `path` that no other writer (process, or thread) uses."""
    return path.with_name(f"{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")


@contextlib.contextmanager
def replacing(path: Path, newline: str | None = None, binary: bool = False):
    """Open a fresh temp file for writing (text, UTF-8; or bytes); on success it replaces `path`,
    on failure it is removed."""
    tmp = temp_path(path)
    try:
        with tmp.open("xb") if binary else tmp.open("x", encoding="utf-8", newline=newline) as handle:
            yield handle
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def write_json(path: Path, data: dict) -> None:
    """Write via a temp file and rename, so a crash never leaves half a JSON file behind. Strict
    JSON only: a non-finite number (a NaN cost) is written as null, never as NaN."""
    with replacing(path) as handle:
        handle.write(strict_json(data, indent=2) + "\n")


def strict_json(data, **dumps) -> str:
    """json.dumps that every JSON reader accepts: NaN and infinities become null."""
    try:
        return json.dumps(data, allow_nan=False, **dumps)
    except ValueError:  # rare: cleaned only then, so the common case costs one dumps
        return json.dumps(finite(data), allow_nan=False, **dumps)


def finite(value):
    """`value` with every NaN or infinite float inside it replaced by None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def write_csv(path: Path, header: list[str], rows: list[list]) -> None:
    with replacing(path, newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)


def write_lines(path: Path, lines: Iterable[str]) -> None:
    """Text lines (a JSONL file, say), each ending in a newline, via a temp file and a rename."""
    with replacing(path) as handle:
        for line in lines:
            handle.write(line + "\n")


# --- one run per run directory ---


class RunDirBusy(Exception):
    """Another live run holds the run directory; the message is one line naming it."""


def command_line(argv: list[str]) -> str:
    """A process's command line as one shell line (`python -m x` for a module's __main__), with
    the credentials of any URL in it masked (https://user:key@host -> https://***@host)."""
    if not argv:
        return "?"
    program = Path(argv[0])
    head = f"python -m {program.parent.name}" if program.name == "__main__.py" else program.name
    line = " ".join([head, *map(shlex.quote, argv[1:])]).replace("\n", " ")
    return mask_url(line)


class RunDirLock:
    """The lock of one run directory, held by every process of one run and no other: a flock on the
    directory itself, exclusive then shared within a run; `.lock` only names the holder."""

    def __init__(
        self,
        run_dir: Path,
        owner_pid: int,
        command: str,
        advice: str = RUN_ADVICE,
        new_folders: list[Path] | None = None,
    ):
        self.run_dir = run_dir
        # the folders above the run directory that did not exist when the run started (removed if left empty)
        self.new_folders = missing_folders(run_dir.parent) if new_folders is None else new_folders
        self.advice = advice
        self.path = run_dir / LOCK_NAME
        self.owner_pid = owner_pid
        self.host = socket.gethostname()
        self.command = command
        self.inert = False  # a session that runs nothing (--collect-only) neither takes nor creates it
        self._fd: int | None = None  # the descriptor of the run directory while this process holds the lock

    @classmethod
    def for_session(cls, config, run_dir: Path) -> RunDirLock:
        """The lock of a pytest run (released when the session's config is cleaned up; an xdist
        worker stands for its controller, whose command line it names)."""
        workerinput = getattr(config, "workerinput", None)
        if workerinput is None:
            lock = cls(run_dir, os.getpid(), command_line(["pytest", *config.invocation_params.args]))
        else:  # the folders that were new when the controller started, not when this worker did
            lock = cls(
                run_dir,
                os.getppid(),
                command_line(list(workerinput.get("mainargv") or ["pytest"])),
                new_folders=[Path(p) for p in workerinput.get(NEW_FOLDERS_KEY, ())],
            )
        lock.inert = any(getattr(config.option, name, False) for name in NOTHING_RUNS)
        config.add_cleanup(lock.release)
        return lock

    @property
    def held(self) -> bool:
        return self._fd is not None or self.inert

    def acquire(self, patience: float = LOCK_PATIENCE) -> None:
        """Hold the lock (for this run); RunDirBusy naming the holder when another run holds it;
        OSError when the run directory cannot be made or opened."""
        deadline = time.monotonic() + patience
        while not self.try_hold():
            if time.monotonic() >= deadline:  # (a holder that just took it may not have written its name yet)
                raise RunDirBusy(_busy_message(self.run_dir, _read_holder(self.path), self.advice))
            time.sleep(0.05)

    def try_hold(self) -> bool:
        """Take the lock if it is free or this run's (never waits, never raises on a busy lock); -> held."""
        if self.held or fcntl is None:
            return True
        self.run_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.run_dir, os.O_RDONLY)
        try:
            if _flock(fd, fcntl.LOCK_EX):  # free: this run's now
                if not _same_folder(fd, self.run_dir):  # removed by the last process of another run since the mkdir
                    return False
                self._name(
                    json.dumps(
                        {
                            "pid": self.owner_pid,
                            "host": self.host,
                            "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                            "command": self.command,
                        }
                    )
                    + "\n"
                )
                if _flock(fd, fcntl.LOCK_SH):  # (lost only if another run took it in between)
                    self._fd, fd = fd, None
                    return True
            elif self._ours(_read_holder(self.path)) and _flock(fd, fcntl.LOCK_SH) and _same_folder(fd, self.run_dir):
                self._fd, fd = fd, None
                return True
            return False
        finally:
            if fd is not None:
                os.close(fd)

    def _name(self, text: str) -> None:
        """Write who holds the lock into .lock (a temp file and a rename: readers never see half a
        name). Only a name: a .lock that cannot be written (a directory, say) leaves the lock held."""
        with contextlib.suppress(OSError):
            with replacing(self.path) as handle:
                handle.write(text)

    def release(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        with contextlib.suppress(OSError):
            if _flock(fd, fcntl.LOCK_EX):  # the last process of the run: its name goes with it
                if set(os.listdir(fd)) <= {LOCK_NAME}:
                    self._remove_unused()
                else:
                    self._name("")
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)

    def _remove_unused(self) -> None:
        """The run wrote nothing here: the run directory goes, and the new folders above it left empty."""
        self.path.unlink(missing_ok=True)
        for folder in (self.run_dir, *self.new_folders):
            os.rmdir(folder)  # OSError (not empty: another run's, say) stops here

    def _ours(self, holder: dict | None) -> bool:
        return holder is not None and holder.get("pid") == self.owner_pid and holder.get("host") == self.host


def _same_folder(fd: int, path: Path) -> bool:
    """`fd` is open on the folder at `path` now (not on one removed since)."""
    try:
        here = os.stat(path)
    except OSError:
        return False
    there = os.fstat(fd)
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


def _flock(fd: int, kind: int) -> bool:
    try:
        fcntl.flock(fd, kind | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _read_holder(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def _busy_message(run_dir: Path, holder: dict | None, advice: str = RUN_ADVICE) -> str:
    if holder is None:
        who = f"a process that has not written its name into {run_dir / LOCK_NAME}"
    else:
        command = str(holder.get("command"))
        who = (
            f"pid {holder.get('pid')} on {holder.get('host')}, started {holder.get('started')}: "
            f"{command if len(command) <= 300 else command[:297] + '...'}"
        )
    return f"{run_dir} is in use by another run ({who}); {advice}"


def busy_holder(run_dir: Path, advice: str = "wait for it to end") -> str | None:
    """One line naming the live run that holds `run_dir`'s lock, or None (free, or never locked).
    Only looks: writes nothing (the directory may be read-only) and keeps no lock."""
    if fcntl is None:
        return None
    try:
        fd = os.open(run_dir, os.O_RDONLY)
    except OSError:
        return None
    try:
        if not _flock(fd, fcntl.LOCK_EX):  # a run holds it (shared, or taking it)
            return _busy_message(run_dir, _read_holder(run_dir / LOCK_NAME), advice)
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
    return None


def lock_problem(lock: RunDirLock) -> str | None:
    """Hold `lock` for this run; -> None, or why it cannot be held (one line naming the run that
    holds it, or why its directory cannot be made), for the caller's usage error."""
    try:
        lock.acquire()
    except RunDirBusy as exc:
        return str(exc)
    except OSError as exc:
        return f"--eval-out-dir (ini eval_out_dir): cannot use {lock.run_dir} ({exc.strerror or exc})"
    return None


def refuse_if_busy(run_dir: Path, advice: str = RUN_ADVICE) -> RunDirLock:
    """For a command that writes a run directory outside pytest (merge): hold its lock for this
    process, or RunDirBusy."""
    lock = RunDirLock(run_dir, os.getpid(), command_line(sys.argv), advice)
    lock.acquire(patience=0.0)
    return lock
