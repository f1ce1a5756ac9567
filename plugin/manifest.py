"""run_meta.json and run_manifest.json of a ChaosBench run, built in one place for a run and for
`merge`: what ran (model, prompt, data, selection), where, with which harness, and how long.
Credentials in a URL (https://user:key@host, in an argument or the model's base URL) are masked."""

from __future__ import annotations

import platform
import subprocess
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

from pytest_reasoning_evals.providers.base import mask_url

PACKAGES = ("pytest-reasoning-evals", "pytest", "pytest-xdist", "vcrpy", "requests", "PyYAML")


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def versions() -> dict[str, str | None]:
    found = {}
    for name in PACKAGES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = None
    return found


def git_revision(folder: Path) -> str | None:
    """The commit checked out at `folder` (None outside a git work tree or without git)."""
    try:
        done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=folder, capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def harness() -> dict:
    """The harness's version, and its git revision when it runs from a checkout."""
    source = Path(__file__).resolve().parent
    return {
        "version": versions()["pytest-reasoning-evals"],
        "git_revision": git_revision(source) if (source.parent / ".git").exists() else None,
    }


def run_meta(
    *,
    model: str,
    mode: str,
    started_at: str,
    num_workers: int,
    summary: dict,
    dataset_version: str,
    config_hash: str,
    execution_time_seconds: float,
    api_success_rate: float | None,
    calls: dict,
    resumed_items: int,
    max_cost_usd: float | None,
    spent_usd: float,
) -> dict:
    return {
        "model": model,
        "mode": mode,
        "timestamp": started_at,
        "num_workers": num_workers,
        "total_questions": summary["total_questions"],
        "total_dialogues": summary["dialogue_details"]["total_dialogues"],
        "num_items_no_gold": summary["num_items_no_gold"],
        "dataset_version": dataset_version,
        "config_hash": config_hash,
        "execution_time_seconds": execution_time_seconds,
        "api_success_rate": api_success_rate,
        "calls": calls,
        "resumed_items": resumed_items,
        "max_cost_usd": max_cost_usd,
        "spent_usd": spent_usd,
    }


def run_manifest(
    *,
    run_id: str,
    model_config: dict,
    dataset: dict,
    prompt: dict,
    selection: dict,
    seed: int,
    args: list[str],
    rootdir: Path,
    execution: dict,
) -> dict:
    return {
        "run_id": run_id,
        "model_config": {k: mask_url(v) if isinstance(v, str) else v for k, v in model_config.items()},
        "dataset_config": dataset,
        "prompt": prompt,
        "selection": selection,
        "environment": {
            "python_version": platform.python_version(),
            "platform": platform.platform(),
            "seed": seed,
            "packages": versions(),
            "args": [mask_url(str(arg)) for arg in args],
        },
        "harness": harness(),
        "project": {"rootdir": str(rootdir), "git_revision": git_revision(rootdir)},
        "execution": execution,
    }


def merged(
    first_meta: dict,
    first_manifest: dict,
    metas: list[dict],
    manifests: list[dict],
    summary: dict,
    calls: dict,
    api_success_rate: float | None,
    shard_dirs: list[str],
) -> tuple[dict, dict]:
    """(run_meta, run_manifest) of shards merged into one run."""
    meta = {
        **first_meta,
        "timestamp": min(m["timestamp"] for m in metas),
        "num_workers": sum(m["num_workers"] for m in metas),
        "total_questions": summary["total_questions"],
        "total_dialogues": summary["dialogue_details"]["total_dialogues"],
        "num_items_no_gold": summary["num_items_no_gold"],
        "execution_time_seconds": max(m["execution_time_seconds"] for m in metas),  # shards run side by side
        "api_success_rate": api_success_rate,
        "calls": calls,
        "resumed_items": sum(m.get("resumed_items", 0) for m in metas),
        "spent_usd": sum(m.get("spent_usd", 0.0) for m in metas),
    }
    manifest = dict(first_manifest)
    manifest["dataset_config"] = {
        **first_manifest["dataset_config"],
        "total_questions": summary["total_questions"],
        "total_dialogues": summary["dialogue_details"]["total_dialogues"],
    }
    manifest["execution"] = {
        **first_manifest["execution"],
        "num_workers": meta["num_workers"],
        "shard_index": None,
        "shards": shard_dirs,
        "start_time": min(m["execution"]["start_time"] for m in manifests),
        "end_time": max(m["execution"]["end_time"] for m in manifests),
        "merged": True,
    }
    return meta, manifest
