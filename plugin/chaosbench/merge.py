"""`reasoning-evals merge DIR...`: one run from the shard directories of a sharded run.

Each shard directory holds what a `--num-shards K --shard-index i` run wrote. The merge checks
that the shards belong together (same configuration hash, same K, every index 0..K-1 exactly
once, no item twice), then recomputes the summary from all the records with the same code as a
run, so the merged summary.json equals the unsharded run's.

Every refusal is one line (MergeError): a shard directory that is not a finished shard (a file
missing, unreadable, or without a key the merge needs, named), unreadable completions lines, a
shard a live run is still writing, and an output directory that is one of the shards or holds
anything but an earlier merge (a run, say), which a merge would overwrite.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple

from pytest_reasoning_evals.chaosbench.metrics import api_success_rate, call_counts, summarize
from pytest_reasoning_evals.chaosbench.outputs import write_run_outputs
from pytest_reasoning_evals.chaosbench.rows import Row, compact
from pytest_reasoning_evals.completions import CompletionsLog, CompletionsUnreadable, load_completions
from pytest_reasoning_evals.manifest import merged
from pytest_reasoning_evals.results import LOCK_NAME, RunDirBusy, busy_holder, refuse_if_busy

# What the merge reads of each shard's files (a dotted path, and the type it must have).
NEEDS = {
    "run_manifest.json": {
        "execution": dict,
        "execution.sharded": bool,
        "execution.shard_index": (int, type(None)),
        "execution.num_shards": (int, type(None)),
        "execution.config_hash": str,
        "execution.start_time": str,
        "execution.end_time": str,
        "dataset_config": dict,
    },
    "run_meta.json": {
        "model": str,
        "mode": str,
        "timestamp": str,
        "num_workers": int,
        "execution_time_seconds": (int, float),
    },
    "summary.json": {"not_asked": dict, "not_asked.ids": list, "not_asked.count": int},
}
# Read when present (a shard of an older harness may lack them): their type is checked all the same.
MAY_HAVE = {
    "run_meta.json": {"resumed_items": int, "spent_usd": (int, float)},
    "summary.json": {"complete": bool, "incomplete_reason": (str, type(None))},
}


class MergeError(Exception):
    pass


def _read_json(path: Path) -> dict:
    """A shard's JSON file, holding every key the merge reads of it (NEEDS), or MergeError."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise MergeError(f"{path.parent}: no {path.name}; is this a finished shard run directory?") from None
    except NotADirectoryError:
        raise MergeError(f"{path.parent}: not a directory; give the shard run directories") from None
    except json.JSONDecodeError as exc:
        raise MergeError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    except (OSError, UnicodeDecodeError, RecursionError) as exc:
        raise MergeError(f"{path}: unreadable ({type(exc).__name__}: {exc})") from None
    if not isinstance(data, dict):
        raise MergeError(f"{path}: not a JSON object; is this a finished shard run directory?")
    needed = NEEDS.get(path.name, {})
    for key, kind in {**needed, **MAY_HAVE.get(path.name, {})}.items():
        value = data
        for part in key.split("."):
            value = value.get(part, _MISSING) if isinstance(value, dict) else _MISSING
        if value is _MISSING and key not in needed:
            continue
        if value is _MISSING:
            raise MergeError(
                f"{path.parent}: {path.name} has no {key!r}; is this a finished shard run directory "
                "written by this harness?"
            )
        if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
            raise MergeError(f"{path.parent}: {path.name} has {key!r} = {value!r}, not a {_kind_name(kind)}")
    return data


_MISSING = object()


def _kind_name(kind) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join("null" if k is type(None) else k.__name__ for k in kinds)


class Shard:
    def __init__(self, directory: Path):
        self.directory = directory
        self.manifest = _read_json(directory / "run_manifest.json")
        self.meta = _read_json(directory / "run_meta.json")
        self.summary = _read_json(directory / "summary.json")
        busy = busy_holder(directory)
        if busy:
            raise MergeError(busy)  # its run has not finished writing it
        execution = self.manifest["execution"]
        if not execution.get("sharded"):
            raise MergeError(f"{directory}: not a shard (run without --num-shards/--shard-index)")
        self.index, self.count = execution["shard_index"], execution["num_shards"]
        if not (isinstance(self.index, int) and isinstance(self.count, int) and 0 <= self.index < self.count):
            raise MergeError(
                f"{directory}: run_manifest.json has shard_index {self.index!r} of num_shards {self.count!r}"
            )
        self.config_hash = execution["config_hash"]
        if not all(isinstance(i, str) for i in self.summary["not_asked"]["ids"]):
            raise MergeError(f"{directory}: summary.json has not_asked ids that are not strings")
        try:
            read = load_completions(directory / "completions.jsonl")
        except CompletionsUnreadable as exc:
            raise MergeError(str(exc)) from None
        if read.unreadable:
            raise MergeError(
                read.problem(
                    directory / "completions.jsonl",
                    "run this shard again with --eval-resume (it asks their items again), then merge",
                )
            )
        self.records = read.records


def _check(shards: list[Shard], allow_partial: bool) -> None:
    first = shards[0]
    incomplete = [s for s in shards if not s.summary.get("complete", True)]
    if incomplete and not allow_partial:
        raise MergeError(
            "incomplete shard(s): "
            + "; ".join(f"{s.directory} ({s.summary.get('incomplete_reason')})" for s in incomplete)
            + " — run them again with --eval-resume, or merge anyway with --allow-partial"
        )
    for shard in shards[1:]:
        if shard.config_hash != first.config_hash:
            raise MergeError(
                f"{shard.directory} and {first.directory} were run with different configurations "
                "(model, prompt, data or selection): they are not shards of one run"
            )
        if shard.count != first.count:
            raise MergeError(
                f"{shard.directory} is shard {shard.index} of {shard.count}, "
                f"{first.directory} shard {first.index} of {first.count}"
            )
    indices = sorted(s.index for s in shards)
    missing = sorted(set(range(first.count)) - set(indices))
    if missing:
        raise MergeError(f"shard(s) {', '.join(map(str, missing))} of {first.count} missing")
    if len(indices) != len(set(indices)):
        twice = sorted({i for i in indices if indices.count(i) > 1})
        raise MergeError(f"shard(s) {', '.join(map(str, twice))} given twice")
    seen: dict[str, Path] = {}
    for shard in shards:
        for record in shard.records:
            if record["id"] in seen:
                raise MergeError(f"item {record['id']!r} is in both {seen[record['id']]} and {shard.directory}")
            seen[record["id"]] = shard.directory


def check_target(target: Path, shards: list[Shard]) -> None:
    """Refuse an output directory that is one of the shards, or that holds anything but an earlier
    merge (a run directory, say): the merge would overwrite it."""
    resolved = target.resolve()
    for shard in shards:
        if shard.directory.resolve() == resolved:
            raise MergeError(
                f"{target} is one of the shard directories: the merge would overwrite it; "
                "give --out a new or empty directory"
            )
    if target.exists() and not target.is_dir():
        raise MergeError(f"{target} is a file, not a directory; give --out a new or empty directory")
    if not target.is_dir() or not [p for p in target.iterdir() if p.name != LOCK_NAME]:
        return  # new or empty
    try:
        manifest = json.loads((target / "run_manifest.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        manifest = None
    execution = manifest.get("execution") if isinstance(manifest, dict) else None
    if isinstance(execution, dict) and execution.get("merged") is True:
        return  # an earlier merge: merged again
    what = "a run directory" if manifest is not None else "files that are not a merge's"
    raise MergeError(
        f"{target} holds {what} that the merge would overwrite; give --out a new or empty "
        "directory (or an earlier merge's)"
    )


class Combined(NamedTuple):
    """The shards of one run read and checked, in memory: what a merge writes."""

    shards: list[Shard]  # with their records, which the merged completions.jsonl holds
    rows: list[Row]
    summary: dict
    meta: dict
    manifest: dict


def combine(directories: list[Path], allow_partial: bool = False) -> Combined:
    """Read the shard directories of one run, check they belong together, and summarise their
    records with a run's own code (MergeError names what does not fit)."""
    if not directories:
        raise MergeError("no shard directories given")
    shards = sorted((Shard(Path(d)) for d in directories), key=lambda s: s.index)
    _check(shards, allow_partial)
    first = shards[0]
    model, mode = first.meta["model"], first.meta["mode"]
    rows = [compact(r) for s in shards for r in s.records]
    not_asked = [i for s in shards for i in s.summary["not_asked"]["ids"]]
    stopped = (
        "; ".join(
            f"shard {s.index}: {s.summary.get('incomplete_reason')}"
            for s in shards
            if not s.summary.get("complete", True) and not s.summary["not_asked"]["count"]
        )
        or None
    )
    summary = summarize(rows, model=model, mode=mode, not_asked=not_asked, stopped=stopped)
    calls = call_counts(rows)
    meta, manifest = merged(
        first.meta,
        first.manifest,
        [s.meta for s in shards],
        [s.manifest for s in shards],
        summary,
        calls,
        api_success_rate(summary, calls),
        [str(s.directory) for s in shards],
    )
    return Combined(shards, rows, summary, meta, manifest)


def merge(directories: list[Path], out: Path | None = None, allow_partial: bool = False) -> tuple[Path, dict]:
    """-> (merged run directory, merged summary)."""
    shards, rows, summary, meta, manifest = combine(directories, allow_partial)
    first = shards[0]
    model, mode = first.meta["model"], first.meta["mode"]
    # the shards' own run name (a harness before run_name: <model>_<mode>)
    name = first.manifest["execution"].get("run_name") or f"{model}_{mode}"
    if not out and (not isinstance(name, str) or any(bad in name for bad in ("/", "\\", "..", "\0"))):
        raise MergeError(
            f"{first.directory}: run_manifest.json and run_meta.json name the run {name!r} (model {model!r}, "
            f"mode {mode!r}), which makes no directory name; give --out"
        )
    target = Path(out) if out else first.directory.parent / name
    check_target(target, shards)
    records = [r for s in shards for r in s.records]  # the merged completions.jsonl: whole records
    completions = CompletionsLog(target / "completions.jsonl")
    try:
        # no run writes it meanwhile
        lock = refuse_if_busy(target, "wait for it to end, or give --out another directory")
    except RunDirBusy as exc:
        raise MergeError(str(exc)) from None
    except OSError as exc:
        raise MergeError(f"{target}: cannot create the merged run directory ({exc.strerror or exc})") from None
    try:
        write_run_outputs(target, rows, summary, meta, manifest, completions, records)
    except OSError as exc:
        raise MergeError(f"{target}: cannot write the merged run ({exc.strerror or exc})") from None
    finally:
        lock.release()
    return target, summary
