"""Several prompts side by side in one command: `--eval-prompts a,b` (folders, each named by its
folder's name) runs the same pytest command once per prompt, in a process of its own, each into
<out>/<name>/, replaying from the command's own cassettes (an item's cassette keeps every prompt's
interactions, so what a run of one prompt recorded is replayed here too), then prints the runs
table of the new run directories with their paired comparison (runs_table.py) and writes it into
<out>. With `--eval-baseline-prompt NAME` that prompt runs first and every other prompt's run is
compared with it through --eval-baseline (its comparison.json, its regression gate with
--eval-fail-on-regression), so the exit status says whether a prompt is worse than the named one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pytest_reasoning_evals.options import OPTIONS as GENERIC_OPTIONS
from pytest_reasoning_evals.options import Reader

# options each prompt's process gets its own value of; the rest of the command is passed on as given
OWN_VALUE = ("--eval-prompts", "--eval-out-dir", "--eval-baseline-prompt")
OWN_FLAG = ("--eval-fail-on-regression",)


def prompt_folders(raw: str | None, base: Path) -> list[Path]:
    """--eval-prompts as folders: comma-separated, relative to `base`."""
    parts = [part.strip() for part in str(raw or "").split(",") if part.strip()]
    return [p if p.is_absolute() else base / p for p in (Path(part).expanduser() for part in parts)]


def passed_on(args: list[str]) -> list[str]:
    """The command's arguments without those each prompt's process gets its own value of."""
    out, skip = [], False
    for arg in args:
        if skip:
            skip = False
        elif arg in OWN_VALUE:
            skip = True
        elif arg in OWN_FLAG or arg.startswith(tuple(f"{name}=" for name in OWN_VALUE)):
            continue
        else:
            out.append(arg)
    return out


def newest_run(folder: Path) -> Path | None:
    """The ChaosBench run directory last written under `folder` (the one its prompt's process just wrote)."""
    from pytest_reasoning_evals.chaosbench.runs import is_run

    runs = [meta.parent for meta in folder.glob("*/run_meta.json") if is_run(meta.parent)]
    return max(runs, key=lambda d: (d / "run_meta.json").stat().st_mtime_ns, default=None)


def run_prompts(config: pytest.Config) -> int | None:
    """pytest_cmdline_main: run a command of several --eval-prompts folders as one run per prompt;
    None (pytest goes on as usual) for one folder or none. Every pytest start calls it: what it
    needs beyond the options is imported only for several folders."""
    from pytest_reasoning_evals.chaosbench.settings import OPTIONS

    get = Reader(config, GENERIC_OPTIONS + OPTIONS)
    here = config.invocation_params.dir
    folders = prompt_folders(get("prompts"), here)
    baseline = get("baseline-prompt")
    if len(folders) < 2:
        return None
    names = [folder.name for folder in folders]
    problem = _problem(get, folders, names)
    if problem:
        raise pytest.UsageError(problem)
    # options.settings_from's default
    out = get.path("out-dir", config.rootpath / "results")
    # the named prompt first: the others are compared with its run
    order = sorted(zip(names, folders), key=lambda named: named[0] != baseline)
    args = passed_on(list(config.invocation_params.args))
    codes, runs, compared_with = [], [], None
    for name, folder in order:
        extra = [] if compared_with is None else [f"--eval-baseline={compared_with}"]
        if compared_with is not None and get("fail-on-regression"):
            extra.append("--eval-fail-on-regression")
        print(f"\n=== prompt {name} ({folder}) ===", flush=True)
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                *args,
                f"--eval-prompts={folder}",
                f"--eval-out-dir={out / name}",
                *extra,
            ],
            cwd=here,
        )
        codes.append(done.returncode)
        run = newest_run(out / name)
        if run is not None:
            runs.append(run)
        if name == baseline:
            if run is None:
                print(f"prompt {name}: no run directory written; the other prompts are not run", flush=True)
                return done.returncode or 1
            compared_with = run
    _table(runs, out)
    return next((code for code in codes if code), 0)


def _problem(get: Reader, folders: list[Path], names: list[str]) -> str | None:
    """What makes the command unusable, found before any prompt runs: a later prompt's run would
    fail only after the earlier ones had paid."""
    baseline = get("baseline-prompt")
    return (
        next((f"--eval-prompts: {f} is not a folder" for f in folders if not f.is_dir()), None)
        # its name is its run's folder under results/: one path component of its own
        or next(
            (
                f"--eval-prompts: {f} has no name of its own to name its run's folders by; give it by its own name"
                for f in folders
                if f.name in ("", ".", "..")
            ),
            None,
        )
        or _missing_prompt(folders, get("mode") or "zeroshot")
        or (len(set(names)) < len(names) and f"--eval-prompts: two folders share a name ({', '.join(names)})")
        or (baseline is not None and baseline not in names and f"--eval-baseline-prompt {baseline}: not one of {names}")
        or (get("baseline") is not None and baseline and "--eval-baseline and --eval-baseline-prompt: give one")
        or (
            get("fail-on-regression")
            and baseline is None
            and get("baseline") is None
            and "--eval-fail-on-regression with several --eval-prompts needs --eval-baseline-prompt NAME"
        )
    ) or None


def _missing_prompt(folders: list[Path], mode: str) -> str | None:
    """The first folder whose prompt file for `mode` cannot be loaded, in the words its run would use."""
    from pytest_reasoning_evals.chaosbench.prompts import PromptTemplate

    for folder in folders:
        try:
            PromptTemplate.load(folder, mode)
        except (OSError, ValueError) as exc:
            return f"--eval-prompts: {exc}"
    return None


def _table(runs: list[Path], out: Path) -> None:
    from pytest_reasoning_evals.runs_table import collect_directories, markdown, step_summary, write_outputs

    collected = collect_directories(runs, [str(out)])
    print("\n" + markdown(collected), end="", flush=True)
    written, note = write_outputs(collected, out)
    print(f"runs: wrote {', '.join(str(p) for p in written)}" + (f"; {note}" if note else ""), flush=True)
    summary = step_summary(collected)
    if summary:
        print(summary, flush=True)
