"""`reasoning-evals cassettes prune [--dry-run] -- PYTEST_ARGS`: an item's cassette keeps every
prompt's and option's interactions (vcrpy's episodes), so it grows with each one tried. Prune
replays the given command (every --eval-prompts folder of it included) with the record mode
`none`, each cassette client noting the interactions it played (cassettes.USAGE_ENV), then drops
from each cassette the run read the interactions it did not play. A cassette the run did not
read (another model, a deselected item) is left as it is."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from vcr.request import Request as VcrRequest
from vcr.serialize import serialize
from vcr.serializers import compat
from vcr.serializers import yamlserializer as YAML

from pytest_reasoning_evals.cassettes import USAGE_ENV, request_key, write_atomically


def played(pytest_args: list[str], cwd: Path) -> tuple[int, dict[str, set[str]]]:
    """The command's exit status replayed with no call, and the interactions it played per file."""
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "played"
        done = subprocess.run(
            [sys.executable, "-m", "pytest", *pytest_args, "--eval-record-mode=none"],
            cwd=cwd,
            env={**os.environ, USAGE_ENV: str(log)},
        )
        used: dict[str, set[str]] = {}
        if log.exists():
            for line in log.read_text(encoding="utf-8").splitlines():
                path, _, key = line.partition("\t")
                used.setdefault(path, set()).add(key)
    return done.returncode, used


def prune_file(path: str, keys: set[str], dry_run: bool) -> tuple[int, int]:
    """(interactions in the file, interactions dropped); the file rewritten unless `dry_run`."""
    data = YAML.deserialize(Path(path).read_text(encoding="utf-8"))
    requests_ = [VcrRequest._from_dict(i["request"]) for i in data["interactions"]]
    kept = [
        (request, compat.convert_to_bytes(i["response"]))
        for request, i in zip(requests_, data["interactions"])
        if request_key(request.method, request.uri, request.body) in keys
    ]
    dropped = len(requests_) - len(kept)
    if dropped and kept and not dry_run:
        requests_kept, responses = zip(*kept)
        write_atomically(Path(path), serialize({"requests": list(requests_kept), "responses": responses}, YAML))
    return len(requests_), dropped if kept else 0


def prune(pytest_args: list[str], dry_run: bool, cwd: Path) -> int:
    code, used = played(pytest_args, cwd)
    if code not in (0, 1):  # 0 or 1: it ran (its gates are not the question); anything else did not
        print(f"cassettes prune: the replay exited {code}; nothing pruned", file=sys.stderr)
        return 2
    if not used:
        print("cassettes prune: the replay played no cassette; nothing pruned", file=sys.stderr)
        return 2
    verb = "would drop" if dry_run else "dropped"
    total = dropped = changed = 0
    for path in sorted(used):
        try:
            count, gone = prune_file(path, used[path], dry_run)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            print(f"cassettes prune: {path}: left as it is ({type(exc).__name__}: {exc})", file=sys.stderr)
            continue
        total, dropped, changed = total + count, dropped + gone, changed + bool(gone)
        if gone:
            print(f"{verb} {gone} of {count}: {path}")
    print(f"cassettes prune: {verb} {dropped} of {total} interactions in {changed} of {len(used)} cassettes")
    return 0
