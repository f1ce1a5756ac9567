"""Command-line and ini options of the harness, and the validated settings they produce.

Every option carries the `--eval-` prefix (so no other plugin's option can clash), `--eval-model`
also answers to `--model` unless the project defines a `--model` of its own; each is also an ini
key `eval_<name>` (pytest.ini, tox.ini, setup.cfg or
`[tool.pytest.ini_options]`): the command line wins, then the ini file, then the default.
Relative paths on the command line resolve from the current directory, in an ini file from the
ini file's folder. Defaults: cassettes and results under the pytest rootdir; the prompts, the
question bank, the dialectic cases and variant prompts and the model registry shipped with the
package. Building Settings reads no file: an unused plugin costs nothing.
"""

from __future__ import annotations

import argparse
import math
import re
from pathlib import Path
from typing import NamedTuple

import pytest

RECORD_MODES = ("none", "once", "refresh", "new_episodes", "rewrite")
DEFAULT_MODEL = "smollm2-135m"
DEFAULT_MAX_RETRY_WAIT = 120.0  # seconds one call may spend waiting between its retries
DEFAULT_CONCURRENCY = 4  # model calls in flight per process while recording
MAX_CONCURRENCY = 256
DEFAULT_BATCH_POLL = 30.0  # seconds between two looks at a running batch
MOST_EPOCHS = 100  # --eval-epochs at most: more is a mistake, not a measurement
# --eval-max-tokens: above every real model's output limit (the largest are a few hundred thousand)
MAX_ANSWER_TOKENS = 1_000_000


class Option(NamedTuple):  # NamedTuple, not a dataclass: nothing slow to import at every pytest start
    name: str  # --eval-<name> and ini eval_<name> (dashes -> underscores)
    help: str
    kind: str = "str"  # str | int | float | bool | path | list
    choices: tuple[str, ...] = ()
    metavar: str | None = None
    group: str = "evals"  # a protocol's options: its name (its group in --help)
    narrows: bool = False  # a value selects a subset of the items (the run writes beside the full run)

    @property
    def dest(self) -> str:
        return "eval_" + self.name.replace("-", "_")

    @property
    def flag(self) -> str:
        return f"--eval-{self.name}"


OPTIONS = (
    Option("model", f"model alias from the registry (default {DEFAULT_MODEL}); also --model", metavar="ALIAS"),
    Option(
        "max-items",
        "a seeded sample of N selected items (--eval-seed), stratified by family and label "
        "(dialectic: expected mode and category)",
        "int",
        metavar="N",
        narrows=True,
    ),
    Option(
        "out-dir",
        "results go to DIR/<model>_<mode>/ and DIR/<model>_dialectic/, with _<cases>-<hash8> added "
        "for case files other than the shipped ones (default <rootdir>/results)",
        "path",
        metavar="DIR",
    ),
    Option("models-file", "extra model registry YAML; its aliases win over the shipped ones", "path", metavar="FILE"),
    Option(
        "record-mode",
        "cassettes: none = replay only; once, refresh or new_episodes = record what an item's cassette does not "
        "answer (no file yet, a prompt changed) beside what it holds, and an unreadable one anew, replaying the "
        "rest; rewrite = record everything anew "
        "(default: none when the model has cassettes, else once)",
        choices=RECORD_MODES,
    ),
    Option("cassette-dir", "cassette root (default <rootdir>/cassettes)", "path", metavar="DIR"),
    Option(
        "base-url", "override the model's base URL (OpenAI-compatible servers: Ollama, vLLM, llama.cpp)", metavar="URL"
    ),
    Option(
        "seed",
        "seed for the --eval-max-items sample, the random baseline and the spot-check sample (default 42)",
        "int",
        metavar="N",
    ),
    Option(
        "fail-on-regression",
        "gate: fail when accuracy dropped against --eval-baseline and McNemar p < alpha (or the drop exceeds --eval-max-accuracy-drop)",
        "bool",
    ),
    Option("regression-alpha", "significance level of the regression gate (default 0.05)", "float", metavar="ALPHA"),
    Option("num-shards", "split the items into K disjoint shards by id (with --eval-shard-index)", "int", metavar="K"),
    Option(
        "shard-index", "run shard I of K (0-based); results go to DIR/<model>_<mode>_shard<I>of<K>/", "int", metavar="I"
    ),
    Option(
        "max-cost",
        "stop asking once live calls of this run have cost USD; the rest is listed as not asked",
        "float",
        metavar="USD",
    ),
    Option(
        "max-retry-wait",
        f"seconds one call may wait in all between its retries (Retry-After included); "
        f"a server asking for more is not waited for (default {DEFAULT_MAX_RETRY_WAIT:g})",
        "float",
        metavar="SECONDS",
    ),
    Option(
        "concurrency",
        f"model calls in flight per process (each xdist worker) while recording: the next items' "
        f"calls run ahead in threads; 429s lower it, successes raise it back (default {DEFAULT_CONCURRENCY}; "
        "1 = one call at a time)",
        "int",
        metavar="N",
    ),
    Option(
        "max-tokens",
        "most tokens of each answer of the model under test (ChaosBench questions and dialogue turns, dialectic "
        "responses and follow-ups) in every protocol without its own --eval-<protocol>-max-tokens "
        f"(default: ChaosBench 64 zero-shot, 512 CoT; dialectic 512; at most {MAX_ANSWER_TOKENS:,}); "
        "a reasoning model's thinking_budget comes on top",
        "int",
        metavar="N",
    ),
    Option(
        "temperature",
        "sampling temperature of the model under test's answers (default 0; not sent to reasoning models "
        "that refuse one); judges keep their own",
        "float",
        metavar="T",
    ),
    Option(
        "stop-when-decided",
        "with --eval-baseline: ask the questions in a seeded order stratified by family and label, and stop asking "
        "once an always-valid sequential test on the paired differences decides the run is worse than its baseline, "
        "or not worse by more than --eval-max-accuracy-drop; the rest is not asked and the run is complete",
        "bool",
    ),
    Option(
        "batch",
        "while recording: send the first request of every item no cassette answers to the provider's batch API "
        "(OpenAI, Anthropic, Gemini: half the price, within 24 hours), wait, save each reply as its item's cassette, then "
        "run the items from them; a run started again picks up its batch (batch.json); under xdist the controller "
        "sends it before any item is scheduled",
        "bool",
    ),
    Option(
        "prompt-cache",
        "mark the system prompt of every Anthropic request for the provider's prompt cache (cache_control; a cached "
        "read costs a tenth of the input price, a write 1.25x); OpenAI caches long prompts by itself, its requests "
        "do not change; the cassettes record the marked requests, so a replay needs the same setting",
        "bool",
    ),
    Option(
        "batch-poll",
        f"seconds between two looks at a running batch (default {DEFAULT_BATCH_POLL:g})",
        "float",
        metavar="SECONDS",
    ),
    Option(
        "epochs",
        "ask each ChaosBench question and dialogue, and each dialectic response, K times, each epoch its own "
        "item (<id>-e01 ...) and request (seed K-1 on the wire); accuracy is the mean share of epochs right, "
        "with an interval that counts the epochs of a question as one unit (default 1)",
        "int",
        metavar="K",
    ),
    Option(
        "estimate",
        "print the selected items' calls, estimated tokens and dollars (registry prices) per protocol, "
        "then stop: no request is sent, nothing is written, exit 0",
        "bool",
    ),
)
INI_TYPES = {"bool": "bool", "list": "linelist"}


def finite_float(text: str) -> float:
    """argparse type of every float option: nan and inf are not numbers a gate or budget can use."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def add_options(parser: pytest.Parser, protocols: tuple = ()) -> None:
    """The generic options, then each protocol's in a --help group of its own."""
    groups = {"evals": parser.getgroup("evals", "language-model evaluation (pytest-reasoning-evals)")}
    for info in protocols:
        groups[info.name] = parser.getgroup(info.name, f"{info.title} (pytest-reasoning-evals)")
    for option in all_options(protocols):
        kwargs: dict = {"dest": option.dest, "help": option.help}
        if option.kind == "bool":
            kwargs.update(action="store_true", default=None)
        else:
            kwargs.update(action="append" if option.kind == "list" else "store", default=None, metavar=option.metavar)
            if option.kind in ("int", "float"):
                kwargs["type"] = int if option.kind == "int" else finite_float
            if option.choices:
                kwargs["choices"] = option.choices
        groups[option.group].addoption(option.flag, **kwargs)
        parser.addini(
            option.dest,
            f"{option.help} ({option.flag})",
            type=INI_TYPES.get(option.kind, "string"),
            default=[] if option.kind == "list" else None,
        )


def all_options(protocols: tuple = ()) -> tuple[Option, ...]:
    """The generic rows, then each protocol's (a protocol's rows take its name as their group)."""
    return OPTIONS + tuple(option._replace(group=info.name) for info in protocols for option in info.options)


def add_model_flag(parser: pytest.Parser) -> None:
    """`--model`, as in `pytest evals --model=gpt4 -n 8`, added once the project's conftest files
    have added theirs: a project that owns a `--model` of its own keeps it (ours is then
    `--eval-model` only) instead of failing to start."""
    try:
        parser.getgroup("evals").addoption(
            "--model", dest="eval_model", default=None, metavar="ALIAS", help="the model under test (--eval-model)"
        )
    except (ValueError, argparse.ArgumentError):
        pass


def shard_of(item_id: str, num_shards: int) -> int:
    """The shard an item belongs to: a hash of its id."""
    import hashlib  # (lazy: an unused plugin imports nothing it does not need)

    return int.from_bytes(hashlib.sha256(item_id.encode("utf-8")).digest()[:8], "big") % num_shards


def dataset_name(path: Path, sha256: str | None) -> str:
    """How a run directory names case files that are not the shipped ones: the file's or folder's
    stem, as a folder name can hold it, and the first 8 hex digits of their content's sha256 (no
    hash when they cannot be read: such a run stops at collection and writes nothing)."""
    stem = dataset_stem(path)
    return f"{stem}-{sha256[:8]}" if sha256 else stem


def dataset_stem(path: Path) -> str:
    """The words a team named its case files with: the file's stem or the folder's name."""
    return folder_label(path.name if path.is_dir() else path.stem, "cases")


def folder_label(name: str, default: str) -> str:
    """`name` as one folder name can hold it: a person's words kept, anything else a dash."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.")[:40] or default


class Settings(NamedTuple):
    """The generic options; each protocol's own are in `own[name]` (ProtocolInfo.settings)."""

    model: str
    max_items: int | None
    out_dir: Path
    models_file: Path | None
    record_mode: str | None  # None: decided from whether the model has cassettes
    cassette_dir: Path
    base_url: str | None
    seed: int
    fail_on_regression: bool = False
    regression_alpha: float = 0.05
    num_shards: int | None = None
    shard_index: int | None = None
    max_cost: float | None = None
    max_retry_wait: float = DEFAULT_MAX_RETRY_WAIT
    concurrency: int = DEFAULT_CONCURRENCY
    subset: str | None = None  # why this run selects a subset of the items (None: all of them)
    max_tokens: int | None = None  # of the model under test's answers (None: each protocol's default)
    temperature: float | None = None  # ... their temperature (None: 0)
    estimate: bool = False  # print what the selection would cost, send nothing
    epochs: int = 1  # times each question, dialogue and dialectic response is asked
    stop_when_decided: bool = False  # stop asking once the comparison with the baseline is decided (sequential.py)
    batch: bool = False  # recording: first requests through the provider's batch API (batch/run.py)
    batch_poll: float = DEFAULT_BATCH_POLL
    prompt_cache: bool = False  # Anthropic requests mark their system prompt for the prompt cache (wire.cached_prefix)
    own: dict = {}  # protocol name -> its own settings

    @property
    def shard(self) -> tuple[int, int] | None:
        """(index, count) of a sharded run, else None."""
        return None if self.num_shards is None else (self.shard_index, self.num_shards)

    def in_shard(self, item_id: str) -> bool:
        """This run's shard holds the item (always, unsharded): a hash of its id, so shards are
        disjoint, cover every item, and depend neither on file order nor on the other items."""
        return self.shard is None or shard_of(item_id, self.num_shards) == self.shard_index

    def run_dir(self, protocol_part: str, dataset: str | None = None, variant: str | None = None) -> Path:
        """<out>/<model>_<part>[_<dataset>][_<variant>][_shard<i>of<K>][-subset]: a filtered run never
        replaces a full one, nor a run of other case files one of the default ones (`dataset`:
        dataset_name, None for the shipped cases), nor a run of another prompt or option one of the
        default ones (`variant`: <prompt folder>-<hash8>, None for the defaults)."""
        name = f"{self.model}_{protocol_part}" + (f"_{dataset}" if dataset else "") + (f"_{variant}" if variant else "")
        if self.shard is not None:
            name += f"_shard{self.shard_index}of{self.num_shards}"
        if self.subset:
            name += "-subset"
        return self.out_dir / name


class Reader:
    """One option's value: the command line, else the ini file, else None."""

    def __init__(self, config: pytest.Config, options: tuple[Option, ...] = OPTIONS):
        self.config = config
        self.by_name = {o.name: o for o in options}
        self.ini_dir = config.inipath.parent if config.inipath else config.rootpath

    def __call__(self, name: str):
        option = self.by_name[name]
        given = self.config.getoption(option.dest)
        if given is not None:
            return given
        raw = self.config.getini(option.dest)
        if option.kind == "list":
            return [str(v).strip() for v in raw if str(v).strip()] or None
        if option.kind == "bool":
            return bool(raw) or None
        if raw is None or not str(raw).strip():
            return None
        text = str(raw).strip()
        try:
            if option.kind == "int":
                return int(text)
            if option.kind == "float":
                return finite_float(text)  # the command line's own check
        except (ValueError, argparse.ArgumentTypeError):
            kind = "finite number" if option.kind == "float" else option.kind
            raise pytest.UsageError(f"ini option {option.dest} must be a {kind}, got {text!r}") from None
        if option.choices and text not in option.choices:
            raise pytest.UsageError(
                f"ini option {option.dest} must be one of {', '.join(option.choices)}, got {text!r}"
            )
        if option.kind == "path":
            path = Path(text).expanduser()
            return path if path.is_absolute() else self.ini_dir / path
        return text

    def path(self, name: str, default: Path | None) -> Path | None:
        value = self(name)
        if value is None:
            return default
        if isinstance(value, str):  # from the command line: relative to where pytest was started
            value = Path(value).expanduser()
            value = value if value.is_absolute() else self.config.invocation_params.dir / value
        return value


def label(name: str) -> str:
    """How an option is named in a message: its flag(s) and its ini key."""
    flags = "--model / --eval-model" if name == "model" else f"--eval-{name}"
    return f"{flags} (ini eval_{name.replace('-', '_')})"


def alias(name: str, alias: str) -> str:
    """A model alias names folders (cassettes/<alias>/, results/<alias>_<mode>/): a name, never a path."""
    from pytest_reasoning_evals.providers.base import alias_problem  # (lazy: only a given alias is checked)

    problem = alias_problem(alias)
    if problem:
        raise pytest.UsageError(f"{label(name)}: {problem}")
    return alias


def aliases(name: str, given: str | list[str]) -> list[str]:
    """The aliases of an option given once comma-separated, or repeated (a list of such texts)."""
    texts = [given] if isinstance(given, str) else given
    aliases = [a.strip() for text in texts for a in str(text).split(",") if a.strip()]
    if not aliases:
        raise pytest.UsageError(
            f"{label(name)}: expected one or more comma-separated model aliases, got {','.join(texts)!r}"
        )
    return [alias(name, a) for a in aliases]


def directory_problem(path: Path) -> str | None:
    """Why `path` cannot be (or become) a folder: it, or a folder above it, is an existing file."""
    for part in (path, *path.parents):
        try:
            if part.exists():
                return None if part.is_dir() else f"{part} is a file, not a folder"
        except OSError:
            return None  # unreadable: whoever writes there reports it
    return None


def _folder(get: Reader, name: str, default: Path, check_default: bool) -> Path:
    """A folder option; a value that is (or lies under) an existing file is a usage error. The
    default is checked only when `check_default` (the run directory is opened at session start):
    otherwise a session that collects no eval item must not care (Models.preflight checks it)."""
    path = get.path(name, None)
    if path is None and not check_default:
        return default
    path = default if path is None else path
    problem = directory_problem(path)
    if problem:
        raise pytest.UsageError(f"{label(name)} {path}: {problem}")
    return path


def _subset(config: pytest.Config, get: Reader, options: tuple[Option, ...]) -> str | None:
    """Why the run does not select every item: options that narrow it, -k/-m, --deselect,
    --last-failed, or node ids on the command line. Such a run writes beside the full run, never over it."""
    reasons = [option.flag for option in options if option.narrows and get(option.name) is not None]
    option = config.option
    reasons += [
        flag
        for flag, value in (
            ("-k", getattr(option, "keyword", "")),
            ("-m", getattr(option, "markexpr", "")),
            ("--deselect", getattr(option, "deselect", None)),
            ("--last-failed", getattr(option, "lf", False)),
        )
        if value
    ]
    if any("::" in str(arg) for arg in config.args):
        reasons.append("node ids")
    return ", ".join(reasons) or None


def is_set(value) -> bool:
    """An option given a value (0 is a value: `--eval-max-hard-fails 0`)."""
    return value is not None and value is not False and value != ()


def answer_tokens(get: Reader, name: str) -> int | None:
    """A max-tokens option (the generic one, a protocol's own): from 1 to MAX_ANSWER_TOKENS, or None."""
    value = get(name)
    if value is not None and value < 1:
        raise pytest.UsageError(f"{label(name)} must be a number of tokens >= 1, got {value}")
    if value is not None and value > MAX_ANSWER_TOKENS:
        raise pytest.UsageError(f"{label(name)} must be at most {MAX_ANSWER_TOKENS:,} tokens, got {value}")
    return value


def fraction(get: Reader, name: str) -> float | None:
    """An option that is a share from 0 to 1, or None."""
    value = get(name)
    if value is not None and not 0.0 <= value <= 1.0:
        raise pytest.UsageError(f"--eval-{name} must be between 0 and 1, got {value}")
    return value


def _check_numbers(get: Reader) -> None:
    """The generic numeric options in their ranges, each a one-line usage error."""
    max_items, max_cost = get("max-items"), get("max-cost")
    if max_items is not None and max_items < 1:
        raise pytest.UsageError(f"--eval-max-items must be at least 1, got {max_items}")
    if max_cost is not None and max_cost < 0:
        raise pytest.UsageError(f"{label('max-cost')} must be a number of USD >= 0, got {max_cost:g}")
    max_retry_wait = get("max-retry-wait")
    if max_retry_wait is not None and max_retry_wait < 0:
        raise pytest.UsageError(f"{label('max-retry-wait')} must be a number of seconds >= 0, got {max_retry_wait:g}")
    concurrency = get("concurrency")
    if concurrency is not None and not 1 <= concurrency <= MAX_CONCURRENCY:
        raise pytest.UsageError(
            f"{label('concurrency')} must be a number of calls from 1 to {MAX_CONCURRENCY}, got {concurrency}"
        )
    temperature = get("temperature")
    if temperature is not None and not 0 <= temperature <= 2:
        raise pytest.UsageError(f"{label('temperature')} must be from 0 to 2, got {temperature:g}")
    epochs = get("epochs")
    if epochs is not None and not 1 <= epochs <= MOST_EPOCHS:
        raise pytest.UsageError(f"{label('epochs')} must be a number of epochs from 1 to {MOST_EPOCHS}, got {epochs}")
    alpha = get("regression-alpha")
    if alpha is not None and not 0.0 < alpha < 1.0:
        raise pytest.UsageError(f"--eval-regression-alpha must be between 0 and 1, got {alpha}")


def _checked_base_url(get: Reader) -> str | None:
    base_url = get("base-url")
    if base_url is not None:
        from pytest_reasoning_evals.providers.base import url_problem  # (lazy: only a given URL is checked)

        problem = url_problem(base_url)
        if problem:
            raise pytest.UsageError(f"{label('base-url')} {problem}")
    return base_url


def _checked_batch(get: Reader) -> bool:
    batch, poll = bool(get("batch")), get("batch-poll")
    if poll is not None and poll <= 0:
        raise pytest.UsageError(f"{label('batch-poll')} must be a number of seconds > 0, got {poll:g}")
    return batch


def _checked_shard(get: Reader) -> tuple[int | None, int | None]:
    count, index = get("num-shards"), get("shard-index")
    if (count is None) != (index is None):
        raise pytest.UsageError("--eval-num-shards and --eval-shard-index go together")
    if count is not None and (count < 1 or not 0 <= index < count):
        raise pytest.UsageError(
            f"--eval-shard-index must be in 0..{count - 1} for --eval-num-shards {count}, got {index}"
        )
    return count, index


def settings_from(config: pytest.Config, protocols: tuple = ()) -> Settings:
    options = all_options(protocols)
    get = Reader(config, options)
    rootdir = config.rootpath
    _check_numbers(get)
    max_items, max_cost, max_retry_wait = get("max-items"), get("max-cost"), get("max-retry-wait")
    concurrency, alpha, base_url = get("concurrency"), get("regression-alpha"), _checked_base_url(get)
    max_tokens, temperature = answer_tokens(get, "max-tokens"), get("temperature")
    count, index = _checked_shard(get)
    generic = Settings(
        model=alias("model", get("model")) if get("model") else DEFAULT_MODEL,  # the default is a good name
        max_items=max_items,
        out_dir=rootdir / "results",
        models_file=get.path("models-file", None),
        record_mode=get("record-mode"),
        cassette_dir=_folder(get, "cassette-dir", rootdir / "cassettes", check_default=False),
        base_url=base_url,
        seed=42 if get("seed") is None else get("seed"),
        fail_on_regression=bool(get("fail-on-regression")),
        regression_alpha=0.05 if alpha is None else alpha,
        num_shards=count,
        shard_index=index,
        max_cost=max_cost,
        max_retry_wait=DEFAULT_MAX_RETRY_WAIT if max_retry_wait is None else max_retry_wait,
        concurrency=DEFAULT_CONCURRENCY if concurrency is None else concurrency,
        subset=_subset(config, get, options),
        max_tokens=max_tokens,
        temperature=temperature,
        estimate=bool(get("estimate")),
        epochs=get("epochs") or 1,
        stop_when_decided=bool(get("stop-when-decided")),
        batch=_checked_batch(get),
        batch_poll=DEFAULT_BATCH_POLL if get("batch-poll") is None else get("batch-poll"),
        prompt_cache=bool(get("prompt-cache")),
    )
    own = {info.name: info.settings(get, generic) for info in protocols if info.settings is not None}
    baselines = [info.baseline_option for info in protocols if info.baseline_option]
    for flag, given in (
        ("fail-on-regression", generic.fail_on_regression),
        ("stop-when-decided", generic.stop_when_decided),
    ):
        if given and not any(get(name) is not None for name in baselines):
            raise pytest.UsageError(f"--eval-{flag} needs " + " or ".join(f"--eval-{name} PATH" for name in baselines))
    # an option that opens the run directory at session start (a budget, a resume) checks the default folder too
    eager = max_cost is not None or any(
        is_set(getattr(own[info.name], name)) for info in protocols if info.name in own for name in info.eager_options
    )
    return generic._replace(out_dir=_folder(get, "out-dir", rootdir / "results", check_default=eager), own=own)
