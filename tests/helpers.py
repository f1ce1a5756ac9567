"""Shared helpers for the harness's own tests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_reasoning_evals.cassettes import cassette_name
from pytest_reasoning_evals.chaosbench.rows import QuestionRow
from pytest_reasoning_evals.shipped import shipped

PROJECT_ROOT = Path(__file__).resolve().parent.parent
EVAL_MODULE = (PROJECT_ROOT / "evals" / "test_chaosbench.py").read_text(encoding="utf-8")
DIALECTIC_MODULE = (PROJECT_ROOT / "evals" / "test_dialectic.py").read_text(encoding="utf-8")
REFERENCE = PROJECT_ROOT.parent / "shared" / "reference"
REPO_CASSETTES = PROJECT_ROOT / "cassettes"  # the committed SmolLM2 recordings
DEFAULT_CASES = shipped("chaosbench")
DEFAULT_PROMPTS = shipped("chaosbench", "prompts")
DEFAULT_VARIANT_PROMPTS = shipped("prompts")
DEFAULT_DIALECTIC_CASES = shipped("dialectic")
FAKE_KEY_VAR = "FAKE_PROVIDER_KEY"  # the key variable of the `fake` model (fake_models)


def cassette_path(root: Path, model_alias: str, folder: str, item_id: str) -> Path:
    """An item's cassette file under a cassette root."""
    return root / cassette_name(model_alias, folder, item_id)


def use_repo_cassettes(pytester: pytest.Pytester, extra_ini: str = "") -> None:
    """An ini file that replays the committed cassettes (the default is <rootdir>/cassettes), with
    no coverage floor and any share of unusable judgements: these runs check the harness on any
    selection of SmolLM2's replies and judgements, not the model (the project's own floor and share
    are in pyproject.toml; test_terminal_output replays with them)."""
    pytester.makeini(
        f"[pytest]\neval_cassette_dir = {REPO_CASSETTES}\neval_min_coverage = 0\n"
        f"eval_max_failed_judge_share = 1\n{extra_ini}"
    )


def add_eval_module(pytester: pytest.Pytester) -> None:
    """The project's real ChaosBench eval module, copied into the pytester directory, replaying
    the committed cassettes."""
    pytester.makepyfile(test_chaosbench=EVAL_MODULE)
    use_repo_cassettes(pytester)


def the_run(folder: Path, model: str, mode: str = "zeroshot", subset: bool = False) -> Path:
    """The run directory of `model` in `mode` under `folder` (named_run)."""
    return named_run(folder, f"{model}_{mode}" + ("-subset" if subset else ""))


def named_run(folder: Path, name: str) -> Path:
    """`folder`/<model>_<mode>[-subset] for the shipped bank, else the one
    <model>_<mode>_<cases>-<hash8>[_<prompt>-<hash8>][-subset] there written last (a run directory
    is keyed by its dataset, and by a prompt or option other than the defaults)."""
    subset = name.endswith("-subset")
    exact = folder / name
    named = [
        path
        for path in folder.glob(f"{name.removesuffix('-subset')}_*")
        if "_shard" not in path.name and path.name.endswith("-subset") == subset
    ]
    return max(named, key=_written) if not exact.exists() and named else exact


def _written(run: Path) -> int:
    """When a run directory's summary was last written (0: never)."""
    try:
        return (run / "summary.json").stat().st_mtime_ns
    except OSError:
        return 0


def cases_run(folder: Path, model: str, cases: Path, mode: str = "zeroshot", subset: bool = False) -> Path:
    """The run directory a run of `model` over the case files `cases` (not the shipped bank) writes in `folder`."""
    from pytest_reasoning_evals.chaosbench.questions import files_digest
    from pytest_reasoning_evals.options import dataset_name

    name = dataset_name(Path(cases), files_digest(Path(cases))["sha256"])
    return folder / (f"{model}_{mode}_{name}" + ("-subset" if subset else ""))


def run_dir(pytester: pytest.Pytester, model: str, mode: str = "zeroshot", subset: bool = False) -> Path:
    """Where a run writes; a subset run (-k, -m, --eval-family/-split/-max-items) beside the full one."""
    return the_run(pytester.path / "results", model, mode, subset)


def read_summary(pytester: pytest.Pytester, model: str, mode: str = "zeroshot", subset: bool = False) -> dict:
    return json.loads((run_dir(pytester, model, mode, subset) / "summary.json").read_text())


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def question(id: str, truth: str = "TRUE", family: str = "atomic", split: str = "core", **extra) -> dict:
    record = {
        "id": id,
        "question": f"Is system {id} deterministic?",
        "ground_truth": truth,
        "family": family,
        "split": split,
        "system_id": "lorenz63",
        "predicates": [{"name": "Deterministic", "polarity": "positive"}],
        "template": "atomic.is_property.v1",
    }
    record.update(extra)
    return record


def answer_by_text(body: dict) -> str:
    """A deterministic model: the answer depends on the conversation only."""
    text = "".join(m["content"] for m in body["messages"])
    return "TRUE" if sum(map(ord, text)) % 3 else "FALSE"


def model_entry(
    url: str | None,
    alias: str = "fake",
    *,
    provider: str = "openai",
    model_id: str = "fake-model",
    key_var: str | None = FAKE_KEY_VAR,
    **fields,
) -> str:
    """One model of a models file (models_yaml): `alias` at `url` (None: no base_url), its key in
    `key_var` (None: a model without a key); `fields` add their lines in order (price_in=1.0, reasoning=True)."""
    lines = [
        f"  {alias}:",
        f"    provider: {provider}",
        f"    model_id: {model_id}",
        f"    api_key_env: {key_var or 'null'}",
    ]
    if url is not None:
        lines.append(f"    base_url: {url}")
    lines += [
        f"    {name}: {str(value).lower() if isinstance(value, bool) else value}" for name, value in fields.items()
    ]
    return "".join(line + "\n" for line in lines)


def models_yaml(*entries: str) -> str:
    """A models file of the given models (model_entry)."""
    return "models:\n" + "".join(entries)


def fake_models(url: str, price_in: float = 0.0) -> str:
    """A models file with one OpenAI-compatible model, `fake`, at `url` ($ price_in per 1M input tokens)."""
    return models_yaml(model_entry(url, price_in=price_in, price_out=0.0))


def fake_model_args(pytester: pytest.Pytester, models: str, cases=None, tag: str = "") -> list[str]:
    """Arguments that run `fake` as the models file text `models` defines it (written to
    models[-tag].yaml) over `cases` (None: none given), with its cassettes in cassettes[-tag]."""
    suffix = f"-{tag}" if tag else ""
    path = pytester.path / f"models{suffix}.yaml"
    path.write_text(models, encoding="utf-8")
    args = ["--eval-models-file", str(path), "--model", "fake"]
    if cases is not None:
        args += ["--eval-cases", str(cases)]
    return [*args, "--eval-cassette-dir", str(pytester.path / f"cassettes{suffix}")]


def recording_args(pytester: pytest.Pytester, models: str, cases, tag: str = "", out_dir: bool = False) -> list[str]:
    """fake_model_args of a recording run (`once`, no cache folder); with `out_dir` its results in results[-tag]."""
    args = fake_model_args(pytester, models, cases, tag)
    if out_dir:
        args += ["--eval-out-dir", str(pytester.path / (f"results-{tag}" if tag else "results"))]
    return [*args, "--eval-record-mode", "once", "-p", "no:cacheprovider"]


def fake_run_args(
    pytester: pytest.Pytester, url: str, cases, tag: str = "", price_in: float = 0.0, out_dir: bool = False
) -> list[str]:
    """Arguments of a recording run (`once`, no cache folder) of `fake` at `url` over `cases`; a `tag`
    keeps the models file, cassettes (and with `out_dir` the results) of one test's runs apart."""
    return recording_args(pytester, fake_models(url, price_in), cases, tag, out_dir)


def tagged_run_args(pytester: pytest.Pytester, url: str, tag: str, cases, price_in: float = 0.0) -> list[str]:
    """The eval module's recording run of `fake` at `url` over `cases`, its models file, cassettes and
    results apart by `tag`."""
    return ["test_chaosbench.py", *fake_run_args(pytester, url, cases, tag, price_in, out_dir=True)]


def oracle_shards(pytester: pytest.Pytester, cases: str, shards: int = 2) -> list[Path]:
    """The run directories of the oracle over `cases` run as `shards` shards, each finished."""
    for index in range(shards):
        args = ("--eval-cases", cases, "--eval-num-shards", str(shards), "--eval-shard-index", str(index))
        assert pytester.runpytest("--model", "oracle", *args).ret == 0
    folders = pytester.path / "results"
    return [next(folders.glob(f"oracle_zeroshot*_shard{i}of{shards}")) for i in range(shards)]


def small_bank(path: Path, dialogues: int = 2, turns: int = 3, questions: int = 12) -> Path:
    """A bank of `questions` questions and `dialogues` dialogues of `turns` turns, written to `path`."""
    records = [question(f"q-{i:02d}", "TRUE" if i % 3 else "FALSE") for i in range(questions)]
    for d in range(dialogues):
        for t in range(1, turns + 1):
            records.append(
                question(
                    f"d{d}-t{t}", "TRUE" if (d + t) % 2 else "FALSE", family="multi_hop", dialogue_id=f"d{d}", turn=t
                )
            )
    return write_jsonl(path, records)


def eval_args(pytester: pytest.Pytester, base_url: str, tag: str, price_in: float = 0.0) -> list[str]:
    """The arguments of a recording run of `fake` at `base_url` over small_bank, its files apart by `tag`."""
    return tagged_run_args(pytester, base_url, tag, small_bank(pytester.path / "bank.jsonl"), price_in)


def bodies(server) -> list[str]:
    """The request bodies a fake provider received, sorted."""
    return sorted(json.dumps(r["body"], sort_keys=True) for r in server.requests)


def four_questions(pytester: pytest.Pytester) -> str:
    """A bank of two TRUE and two FALSE questions over three families and two splits, in the pytester folder."""
    records = [
        question("q-true-1", "TRUE"),
        question("q-true-2", "TRUE", family="multi_hop", split="hard"),
        question("q-false-1", "FALSE"),
        question("q-false-2", "FALSE", family="adversarial", split="hard", bias="chaos_is_randomness"),
    ]
    return str(write_jsonl(pytester.path / "bank.jsonl", records))


# A conftest object kept alive by a reference cycle, holding a buffered file it never closed: only
# the interpreter's last collection at exit flushes it (issue 38: a frozen heap at exit left it empty).
CYCLE_CONFTEST = (
    "class Holder:\n"
    "    def __del__(self):\n"
    "        self.f.write('finalised\\n')\n\n"
    "holder = Holder()\n"
    "holder.me = holder\n"
    "holder.f = open('out.txt', 'w')\n"
    "holder.f.write('data\\n')\n"
)


def question_row(id: str, gold: str | None = "TRUE", label: str | None = "TRUE", **fields) -> QuestionRow:
    """A question's summary row (chaosbench/rows.py) whose status and correctness follow from `gold`
    and `label` (None: no gold, an UNKNOWN answer); `fields` set the rest (family, error, epoch, ...)."""
    correct = None if gold is None or label is None else gold == label
    status = "no_gold" if gold is None else "unknown" if label is None else "correct" if correct else "wrong"
    made = {
        "id": id,
        "family": "atomic",
        "split": "core",
        "system_id": "lorenz63",
        "bias": None,
        "predicates": (),
        "label": label,
        "gold": gold,
        "correct": correct,
        "status": status,
        "error": None,
        "provider": "fake",
        "input_tokens": 0,
        "output_tokens": 0,
        "thinking_tokens": 0,
        "cost_usd": 0.0,
        "cassette_hit": None,
    }
    return QuestionRow(**(made | fields))


def run_args(folder: Path, entry: str, tag: str, *more: str) -> list[str]:
    """The options of a run of the `fake` model `entry` (model_entry) in `folder`, its models file,
    cassettes and results named by `tag`, so that two runs of one test (live, batch) stay apart."""
    (folder / f"models-{tag}.yaml").write_text(models_yaml(entry))
    return [
        "--eval-models-file", f"models-{tag}.yaml", "--model", "fake", "--eval-cases", "bank.jsonl",
        "--eval-cassette-dir", f"cassettes-{tag}", "--eval-out-dir", f"results-{tag}",
        "-p", "no:cacheprovider", *more,
    ]  # fmt: skip
