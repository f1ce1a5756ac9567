"""`reasoning-evals merge DIR...`: one run from the shard directories of a sharded run.

Each shard directory holds what a `--num-shards K --shard-index i` run wrote. The merge checks
that the shards belong together (same configuration hash, same K, every index 0..K-1 exactly
once, no item twice), then recomputes the summary from all the records with the same code as a
run, so the merged summary.json equals the unsharded run's.
"""

from __future__ import annotations

import json
from pathlib import Path

from pytest_reasoning_evals.chaosbench.metrics import api_success_rate, call_counts, summarize
from pytest_reasoning_evals.completions import read_completions
from pytest_reasoning_evals.manifest import merged
from pytest_reasoning_evals.chaosbench.outputs import write_run_outputs


class MergeError(Exception):
    pass


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise MergeError(f"{path.parent}: no {path.name}; is this a finished shard run directory?") from None
    except json.JSONDecodeError as exc:
        raise MergeError(f"{path}: not valid JSON ({exc.msg})") from None


class Shard:
    def __init__(self, directory: Path):
        self.directory = directory
        self.manifest = _read_json(directory / "run_manifest.json")
        self.meta = _read_json(directory / "run_meta.json")
        self.summary = _read_json(directory / "summary.json")
        self.records = read_completions(directory / "completions.jsonl")
        execution = self.manifest["execution"]
        if not execution.get("sharded"):
            raise MergeError(f"{directory}: not a shard (run without --num-shards/--shard-index)")
        self.index, self.count = execution["shard_index"], execution["num_shards"]
        self.config_hash = execution["config_hash"]


def _check(shards: list[Shard], allow_partial: bool) -> None:
    first = shards[0]
    incomplete = [s for s in shards if not s.summary.get("complete", True)]
    if incomplete and not allow_partial:
        raise MergeError("incomplete shard(s): " + "; ".join(f"{s.directory} ({s.summary.get('incomplete_reason')})" for s in incomplete)
                         + " — run them again with --eval-resume, or merge anyway with --allow-partial")
    for shard in shards[1:]:
        if shard.config_hash != first.config_hash:
            raise MergeError(f"{shard.directory} and {first.directory} were run with different configurations "
                             "(model, prompt, data or selection): they are not shards of one run")
        if shard.count != first.count:
            raise MergeError(f"{shard.directory} is shard {shard.index} of {shard.count}, "
                             f"{first.directory} shard {first.index} of {first.count}")
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


def merge(directories: list[Path], out: Path | None = None, allow_partial: bool = False) -> tuple[Path, dict]:
    """-> (merged run directory, merged summary)."""
    if not directories:
        raise MergeError("no shard directories given")
    shards = sorted((Shard(Path(d)) for d in directories), key=lambda s: s.index)
    _check(shards, allow_partial)
    first = shards[0]
    model, mode = first.meta["model"], first.meta["mode"]
    records = [r for s in shards for r in s.records]
    not_asked = [i for s in shards for i in s.summary["not_asked"]["ids"]]
    stopped = "; ".join(f"shard {s.index}: {s.summary['incomplete_reason']}" for s in shards
                        if not s.summary.get("complete", True) and not s.summary["not_asked"]["count"]) or None
    summary = summarize(records, model=model, mode=mode, not_asked=not_asked, stopped=stopped)
    calls = call_counts(records)
    meta, manifest = merged(first.meta, first.manifest, [s.meta for s in shards], [s.manifest for s in shards],
                            summary, calls, api_success_rate(summary, calls), [str(s.directory) for s in shards])
    target = Path(out) if out else first.directory.parent / f"{model}_{mode}"
    write_run_outputs(target, records, summary, meta, manifest)
    return target, summary
