"""A parsed index of cassette files in pytest's cache folder (SQLite), so a replay does not parse
the same YAML run after run; the files stay the source of truth, and the index fails as a cache
does (docs/design.md, "Cassettes")."""

from __future__ import annotations

import hashlib
import marshal
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from stat import S_ISREG
from typing import Protocol

SCHEMA = 6  # bump when what indexed_cassette checks or returns, or a row, changes: older rows are not read
FILE_NAME = f"cassette-index-v{SCHEMA}.sqlite3"
BATCH = 500  # rows written per transaction (by default)
WAIT_SECONDS = 2.0  # for another process's write to end; then the rows wait for the next write
CLOSE_WAIT_SECONDS = 30.0  # the last write waits longer (a loaded machine's other workers); then it is dropped
MOST_PENDING = 20 * BATCH  # rows kept for a later write while other processes hold the file, at most
OPEN_RETRY_SECONDS = 0.05  # between two tries to open a file another process is setting up
MOST_AHEAD = 256  # rows read ahead of the one asked for, at most


MAX_BYTES = 64 * 2**20  # a cassette larger than this is refused unread: a replay must not exhaust memory


class NotACassetteFile(ValueError):
    """A path that is not read as a cassette: not a regular file, or larger than MAX_BYTES."""


def read_bytes(path: Path | str) -> bytes:
    """The bytes of a regular file of at most MAX_BYTES; NotACassetteFile otherwise, OSError when
    it cannot be read. Opened without blocking and checked on the open file, so a FIFO (or a path
    swapped for one) never hangs the read and a device (/dev/zero) is never read."""
    with open(path, "rb", opener=lambda name, flags: os.open(name, flags | getattr(os, "O_NONBLOCK", 0))) as handle:
        stat = os.fstat(handle.fileno())
        if not S_ISREG(stat.st_mode):
            raise NotACassetteFile("not a regular file")
        # the size it has (+1 to see it grow): asking for MAX_BYTES makes Python allocate them
        data = handle.read(stat.st_size + 1) if stat.st_size <= MAX_BYTES else b""
        if len(data) > stat.st_size:  # it grew while being read: the rest, up to the limit
            data += handle.read(MAX_BYTES + 1 - len(data))
    if stat.st_size > MAX_BYTES or len(data) > MAX_BYTES:  # (or it grew while being read)
        raise NotACassetteFile(f"larger than {MAX_BYTES // 2**20} MiB")
    return data


def _read(path: Path | str) -> bytes | None:
    """The file's bytes (one read serves the digest and the parse); None when it cannot be read."""
    try:
        return read_bytes(path)
    except (OSError, NotACassetteFile):
        return None


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


# what the reader keeps of a file (cassettes.indexed_cassette: vcrpy's request and response dicts, and more)
Parsed = tuple


class Warmer(Protocol):
    """A child parsing planned files into the index (index_warmer.IndexWarmer)."""

    def stop(self) -> None: ...


class CassetteIndex:
    def __init__(
        self,
        folder: Path,
        batch: int = BATCH,
        planned: Callable[[], Iterable[tuple[str, str]]] | None = None,
        start_warmer: Callable[[Path, str, list[str]], Warmer | None] | None = None,
    ):
        self.path = folder / FILE_NAME
        self.batch = batch  # rows written per transaction
        self._lock = threading.Lock()  # one connection, shared by the threads that run calls ahead
        self._pending: list[tuple] = []
        self._db: sqlite3.Connection | None = None
        self._broken = False
        self._ahead: dict[tuple[str, str], tuple] = {}  # rows read with an earlier one, not asked for yet
        self._span = 1  # how many rows the last query read ahead
        self._ahead_used = False  # whether one of them has been asked for since
        # the index was empty when this process opened it, and no warmer of its own fills it: a
        # cold run's rows are the ones its own reads write, so its lookups would all miss
        self._nothing_to_find = False
        self.hits = 0  # read from the index
        self.parsed = 0  # read from the file (and kept)
        # (cassette folder, item id) of the cassettes this process's items read, in run order (speed.py)
        self.planned = planned
        self.start_warmer = start_warmer  # (index folder, wire, paths) -> the child parsing them ahead, or None
        self._warmers: dict[str, Warmer | None] = {}  # model alias -> its warmer
        self._warm_lock = threading.Lock()

    def warm(self, alias: str, wire: str, file_of: Callable[[str, str], str]) -> None:
        """The planned files of model `alias` (`file_of(folder, item_id)`) parsed into the index on
        a spare core while the items run (index_warmer.py); once per model."""
        with self._warm_lock:
            if self.planned is None or self.start_warmer is None or alias in self._warmers:
                return
            self._warmers[alias] = None
            paths = [file_of(folder, item_id) for folder, item_id in self.planned()]
            self._warmers[alias] = warmer = self.start_warmer(self.path.parent, wire, paths)
        if warmer is not None:
            with self._lock:
                self._nothing_to_find = False  # its rows come while the items run

    def read(self, path: Path | str, wire: str, parse_file: Callable[[Path | str, bytes | None], Parsed]) -> Parsed:
        """The file's content: the index's, when it holds this version of the file, else
        `parse_file(path, data)` (data: the file's bytes, read once here for their digest; None
        when they could not be read, for parse_file to say why) kept for next time; its
        exceptions pass through."""
        stat = os.stat(path)  # FileNotFoundError, as parse_file would raise; before the read, so a
        # file changed while it is parsed is stored under its old stat and read again next time
        key = (os.fspath(path), wire)
        row = self._lookup(key)
        version = (stat.st_size, stat.st_mtime_ns, stat.st_ino, stat.st_ctime_ns)
        data = None
        if row is not None:
            if tuple(row[:4]) != version:  # the same bytes under another stat (a checkout, a restored cache)?
                data = _read(path) if row[0] == stat.st_size else None
                if data is None or _digest(data) != row[4]:
                    row = None
                else:
                    self._keep((*key, *version, row[4], row[5]))  # the next run matches on stat alone
            if row is not None:
                try:
                    parsed = marshal.loads(row[5])
                except (ValueError, TypeError, EOFError):
                    pass  # a damaged row: the file is parsed, and the row replaced
                else:
                    self.hits += 1
                    return parsed
        if data is None:
            data = _read(path)
        parsed = parse_file(path, data)
        self.parsed += 1
        if data is None:  # the file could not be read here: not kept
            return parsed
        try:
            blob = marshal.dumps(parsed)
        except (ValueError, TypeError):  # something marshal cannot hold (an old cassette's odd body): not kept
            return parsed
        self._keep((*key, *version, _digest(data), blob))
        return parsed

    def _keep(self, row: tuple) -> None:
        with self._lock:
            self._pending.append(row)
            if len(self._pending) >= self.batch:
                self._flush()

    def close(self) -> None:
        with self._warm_lock:
            for warmer in filter(None, self._warmers.values()):
                warmer.stop()
        with self._lock:
            if self._pending and (db := self._connect()) is not None:
                db.execute(f"PRAGMA busy_timeout = {int(CLOSE_WAIT_SECONDS * 1000)}")
            self._flush()
            if self._db is not None:
                self._db.close()
                self._db = None

    # --- SQLite, behind the lock; any error turns the index off for this process ---

    def _connect(self) -> sqlite3.Connection | None:
        if self._db is None and not self._broken:
            waited = 0.0
            while True:
                try:
                    self._db = self._open()
                    break
                except sqlite3.OperationalError as exc:
                    # two processes opening a new file at once: one may be refused at once (busy)
                    if not _busy(exc) or waited >= WAIT_SECONDS:
                        self._broken = True
                        break
                    time.sleep(OPEN_RETRY_SECONDS)
                    waited += OPEN_RETRY_SECONDS
                except sqlite3.Error:
                    self._broken = True
                    break
        return self._db

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=WAIT_SECONDS, check_same_thread=False, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=OFF")  # a cache: a crash may lose rows, never the cassettes
            db.execute(
                "CREATE TABLE IF NOT EXISTS cassettes (path TEXT, wire TEXT, size INTEGER, "
                "mtime_ns INTEGER, inode INTEGER, ctime_ns INTEGER, digest BLOB, parsed BLOB, PRIMARY KEY (path, wire)) WITHOUT ROWID"
            )
            self._nothing_to_find = not any(self._warmers.values()) and (
                db.execute("SELECT 1 FROM cassettes LIMIT 1").fetchone() is None
            )
        except sqlite3.Error:
            db.close()
            raise
        return db

    def _lookup(self, key: tuple[str, str]) -> tuple | None:
        """The row of `key`, read ahead by an earlier query or by one that also reads the next
        rows in path order: a replay mostly runs its items in the order of their ids, so one
        query serves many items. How many: doubling while the rows read ahead get asked for,
        back to one when they do not (items in random order pay for one unused row a query)."""
        with self._lock:
            row = self._ahead.pop(key, None)
            if row is not None:
                self._ahead_used = True
                return row
            db = self._connect()
            if db is None or self._nothing_to_find:
                return None
            self._span = min(MOST_AHEAD, self._span * 2) if self._ahead_used else 1
            self._ahead_used = False
            path, wire = key
            try:
                rows = db.execute(
                    "SELECT path, size, mtime_ns, inode, ctime_ns, digest, parsed FROM cassettes WHERE path >= ? AND wire = ? "
                    "ORDER BY path LIMIT ?",
                    (path, wire, self._span + 1),
                ).fetchall()
            except sqlite3.Error:
                self._broken, self._db = True, None
                return None
            self._ahead = {(found, wire): rest for found, *rest in rows}
            return self._ahead.pop(key, None)

    def _flush(self) -> None:
        rows, self._pending = self._pending, []
        db = self._connect() if rows else None
        if db is None:
            return
        try:
            with db:  # one transaction
                db.execute("BEGIN IMMEDIATE")
                db.executemany("INSERT OR REPLACE INTO cassettes VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
        except sqlite3.OperationalError:  # another process held the file too long: written with the next rows
            self._pending = rows[-MOST_PENDING:] + self._pending  # beyond that, parsed again next run
        except sqlite3.Error:
            self._broken, self._db = True, None


def _busy(exc: sqlite3.OperationalError) -> bool:
    """SQLITE_BUSY or SQLITE_LOCKED (the error code is on the exception from Python 3.11)."""
    code = getattr(exc, "sqlite_errorcode", None)
    return code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED) if code is not None else "locked" in str(exc)
