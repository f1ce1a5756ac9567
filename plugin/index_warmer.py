"""A cold replay's cassettes parsed on a spare core, ahead of the items that read them, into the
cassette index; only an optimisation (docs/design.md, "Cassettes"):

    python -m pytest_reasoning_evals.index_warmer INDEX_FOLDER WIRE PATHS_FILE
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

WARM_FROM = 1000  # files: below, a child's start (Python, then the plugin's imports) costs more than it saves
CHILD_BATCH = 50  # rows per commit in the child: the items find them soon after they are parsed


def spare_cores() -> int:
    try:
        return len(os.sched_getaffinity(0)) - 1
    except AttributeError:  # not Linux
        return (os.cpu_count() or 1) - 1


class IndexWarmer:
    """The child process warming the index for `paths`, or nothing (see `start`)."""

    def __init__(self, process: subprocess.Popen, paths_file: Path):
        self.process = process
        self.paths_file = paths_file

    @classmethod
    def start(cls, index_folder: Path, wire: str, paths: list[str]) -> IndexWarmer | None:
        if len(paths) < WARM_FROM or spare_cores() < 1:
            return None
        try:
            with tempfile.NamedTemporaryFile(
                "w", encoding="utf-8", dir=index_folder, prefix="warm-", suffix=".txt", delete=False
            ) as listing:
                listing.write("\n".join(paths))
            process = subprocess.Popen(
                [sys.executable, "-m", "pytest_reasoning_evals.index_warmer", str(index_folder), wire, listing.name],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        except OSError:
            return None
        return cls(process, Path(listing.name))

    def stop(self) -> None:
        """The session is over: a child still parsing stops (what it committed stays)."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.paths_file.unlink(missing_ok=True)


def warm(index_folder: Path, wire: str, paths: list[str]) -> int:
    """Put each file of `paths` into the index (files already there are only looked up); files
    that are missing or cannot be read (a FIFO, a device or a file over MAX_BYTES is never
    read: cassette_index.read_bytes) are left to their items. -> files parsed."""
    from pytest_reasoning_evals.cassette_index import CassetteIndex
    from pytest_reasoning_evals.cassettes import UnreadableCassette, indexed_cassette
    from pytest_reasoning_evals.providers.wire import WIRE_FORMATS

    parse = WIRE_FORMATS[wire][1]
    index = CassetteIndex(index_folder, batch=CHILD_BATCH)
    try:
        for path in paths:
            try:
                index.read(path, wire, lambda file, data: indexed_cassette(file, parse, data))
            except (OSError, UnreadableCassette):
                continue
    finally:
        index.close()
    return index.parsed


def main(argv: list[str]) -> int:
    folder, wire, listing = argv
    paths = Path(listing).read_text(encoding="utf-8").split("\n")
    Path(listing).unlink(missing_ok=True)
    warm(Path(folder), wire, paths)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
