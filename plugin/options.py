"""Command-line and ini options of the harness, and the validated settings they produce."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from plugin.chaosbench.prompts import MODES
from plugin.chaosbench.questions import FAMILIES, SPLITS

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CASES = PROJECT_ROOT / "cases" / "chaosbench"
DEFAULT_PROMPTS = DEFAULT_CASES / "prompts"
DEFAULT_CASSETTES = PROJECT_ROOT / "cassettes"
DEFAULT_DIALECTIC_CASES = PROJECT_ROOT / "cases" / "dialectic"
DEFAULT_VARIANT_PROMPTS = PROJECT_ROOT / "cases" / "prompts"
RECORD_MODES = ("none", "once", "new_episodes", "rewrite")
DEFAULT_MODEL = "smollm2-135m"


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("evals", "language-model evaluation (ChaosBench-Logic, dialectic)")
    group.addoption("--model", default=None, help=f"model alias from the registry (default: ini eval_model or {DEFAULT_MODEL})")
    group.addoption("--mode", choices=MODES, default="zeroshot", help="ChaosBench prompt: zeroshot or cot (default zeroshot)")
    group.addoption("--cases", default=None, metavar="PATH", help="question file or directory: the project's bank or upstream v2 JSONL (default cases/chaosbench)")
    group.addoption("--split", action="append", choices=SPLITS, default=None, help="only this split (repeatable)")
    group.addoption("--family", action="append", choices=FAMILIES, default=None, help="only this family (repeatable)")
    group.addoption("--max-items", type=int, default=None, metavar="N", help="only the first N selected questions")
    group.addoption("--out-dir", default="results", metavar="DIR", help="results go to DIR/<model>_<mode>/ (default results)")
    group.addoption("--models-file", default=None, metavar="FILE", help="extra model registry YAML; its aliases win over the shipped ones")
    group.addoption("--record-mode", choices=RECORD_MODES, default=None,
                    help="cassettes: none = replay only; once / new_episodes / rewrite record "
                         "(default: none when the model has cassettes, else once)")
    group.addoption("--cassette-dir", default=None, metavar="DIR", help="cassette root (default cassettes/)")
    group.addoption("--base-url", default=None, metavar="URL", help="override the model's base URL (OpenAI-compatible servers: Ollama, vLLM, llama.cpp)")
    group.addoption("--seed", type=int, default=42, help="seed for the random baseline (default 42)")
    group.addoption("--strict-items", action="store_true", default=False, help="any wrong or UNKNOWN answer fails the session")
    group.addoption("--min-accuracy", type=float, default=None, metavar="X", help="gate: fail the session when overall accuracy < X (0..1)")
    group.addoption("--num-shards", type=int, default=None, metavar="K", help="split the items into K disjoint shards by id (with --shard-index)")
    group.addoption("--shard-index", type=int, default=None, metavar="I", help="run shard I of K (0-based); results go to DIR/<model>_<mode>_shard<I>of<K>/")
    group.addoption("--resume", action="store_true", default=False,
                    help="do not ask again the items already answered in the run directory's completions.jsonl")
    group.addoption("--max-cost", type=float, default=None, metavar="USD",
                    help="stop asking once live calls of this run have cost USD; the rest is listed as not asked (resume later)")
    dialectic = parser.getgroup("dialectic", "dialectical-reasoning evaluation (evals/test_dialectic.py)")
    dialectic.addoption("--dialectic-cases", default=None, metavar="PATH", help="dialectic case YAML file or directory (default cases/dialectic)")
    dialectic.addoption("--variant", action="append", default=None, metavar="NAME",
                        help="prompt variant: baseline (no system prompt) or a file stem in cases/prompts/ (repeatable; default all)")
    dialectic.addoption("--judge-model", default=None, metavar="ALIASES",
                        help="judge model alias(es), comma-separated, used in turn (default: ini eval_judge_model, else the model under test)")
    dialectic.addoption("--n-judges", type=int, default=3, metavar="N", help="judges per response (default 3)")
    dialectic.addoption("--compare-models", default=None, metavar="ALIASES",
                        help="cross-provider comparison: comma-separated aliases (default: the model under test)")
    dialectic.addoption("--max-hard-fails", type=int, default=None, metavar="N", help="gate: fail the session with more than N PCC hard fails")
    dialectic.addoption("--require-variant-pass", action="append", default=None, metavar="VARIANT",
                        help="gate: this variant must pass (no hard fails, mean score >= 70, mode accuracy >= 0.9; repeatable)")
    parser.addini("eval_judge_model", "default judge model alias(es) for dialectic runs (empty: the model under test)", default="")
    parser.addini("eval_model", "default model alias for eval runs", default=DEFAULT_MODEL)
    parser.addini("eval_min_accuracy", "gate: minimum overall accuracy (0..1); --min-accuracy wins", default="")


@dataclass(frozen=True)
class Settings:
    model: str
    mode: str
    cases: Path
    prompts_dir: Path
    splits: tuple[str, ...]
    families: tuple[str, ...]
    max_items: int | None
    out_dir: Path
    models_file: Path | None
    record_mode: str | None  # None: decided from whether the model has cassettes
    cassette_dir: Path
    base_url: str | None
    seed: int
    strict_items: bool
    min_accuracy: float | None
    num_shards: int | None = None
    shard_index: int | None = None
    resume: bool = False
    max_cost: float | None = None
    dialectic_cases: Path = DEFAULT_DIALECTIC_CASES
    variants: tuple[str, ...] = ()
    judges: tuple[str, ...] = (DEFAULT_MODEL,) * 3
    compare_models: tuple[str, ...] = ()
    max_hard_fails: int | None = None
    require_variant_pass: tuple[str, ...] = ()

    @property
    def shard(self) -> tuple[int, int] | None:
        """(index, count) of a sharded run, else None."""
        return None if self.num_shards is None else (self.shard_index, self.num_shards)

    @property
    def run_dir(self) -> Path:
        name = f"{self.model}_{self.mode}"
        if self.shard is not None:
            name += f"_shard{self.shard_index}of{self.num_shards}"
        return self.out_dir / name

    def to_dict(self) -> dict:
        return {k: (str(v) if isinstance(v, Path) else v) for k, v in self.__dict__.items()}


def _path(value: str | None, base: Path, default: Path | None) -> Path | None:
    if value is None:
        return default
    path = Path(value).expanduser()
    return path if path.is_absolute() else base / path


def _min_accuracy(config: pytest.Config) -> float | None:
    raw = config.getoption("min_accuracy")
    if raw is None:
        ini = str(config.getini("eval_min_accuracy")).strip()
        try:
            raw = float(ini) if ini else None
        except ValueError:
            raise pytest.UsageError(f"ini option eval_min_accuracy must be a number, got {ini!r}") from None
    if raw is not None and not 0.0 <= raw <= 1.0:
        raise pytest.UsageError(f"--min-accuracy must be between 0 and 1, got {raw}")
    return raw


def _aliases(text: str) -> list[str]:
    aliases = [a.strip() for a in str(text).split(",") if a.strip()]
    if not aliases:
        raise pytest.UsageError(f"expected one or more comma-separated model aliases, got {text!r}")
    return aliases


def _shards(config: pytest.Config) -> tuple[int | None, int | None]:
    count, index = config.getoption("num_shards"), config.getoption("shard_index")
    if count is None and index is None:
        return None, None
    if count is None or index is None:
        raise pytest.UsageError("--num-shards and --shard-index go together")
    if count < 1 or not 0 <= index < count:
        raise pytest.UsageError(f"--shard-index must be in 0..{count - 1} for --num-shards {count}, got {index}")
    return count, index


def settings_from(config: pytest.Config) -> Settings:
    here = config.invocation_params.dir
    max_items = config.getoption("max_items")
    if max_items is not None and max_items < 1:
        raise pytest.UsageError(f"--max-items must be at least 1, got {max_items}")
    max_cost = config.getoption("max_cost")
    if max_cost is not None and max_cost < 0:
        raise pytest.UsageError(f"--max-cost must be a number of USD >= 0, got {max_cost}")
    num_shards, shard_index = _shards(config)
    n_judges = config.getoption("n_judges")
    if n_judges < 1:
        raise pytest.UsageError(f"--n-judges must be at least 1, got {n_judges}")
    model = config.getoption("model") or config.getini("eval_model") or DEFAULT_MODEL
    judge_aliases = _aliases(config.getoption("judge_model") or config.getini("eval_judge_model") or model)
    return Settings(
        model=model,
        mode=config.getoption("mode"),
        cases=_path(config.getoption("cases"), here, DEFAULT_CASES),
        prompts_dir=DEFAULT_PROMPTS,
        splits=tuple(config.getoption("split") or ()),
        families=tuple(config.getoption("family") or ()),
        max_items=max_items,
        out_dir=_path(config.getoption("out_dir"), here, None),
        models_file=_path(config.getoption("models_file"), here, None),
        record_mode=config.getoption("record_mode"),
        cassette_dir=_path(config.getoption("cassette_dir"), here, DEFAULT_CASSETTES),
        base_url=config.getoption("base_url"),
        seed=config.getoption("seed"),
        strict_items=config.getoption("strict_items"),
        min_accuracy=_min_accuracy(config),
        num_shards=num_shards,
        shard_index=shard_index,
        resume=config.getoption("resume"),
        max_cost=max_cost,
        dialectic_cases=_path(config.getoption("dialectic_cases"), here, DEFAULT_DIALECTIC_CASES),
        variants=tuple(config.getoption("variant") or ()),
        judges=tuple(judge_aliases[k % len(judge_aliases)] for k in range(n_judges)),
        compare_models=tuple(_aliases(config.getoption("compare_models") or model)),
        max_hard_fails=config.getoption("max_hard_fails"),
        require_variant_pass=tuple(config.getoption("require_variant_pass") or ()),
    )
