"""The dialectic protocol's own options and the settings they give (the generic ones are options.py's)."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import pytest

from pytest_reasoning_evals.dialectic.panel import DEFAULT_TEMPERATURE
from pytest_reasoning_evals.dialectic.verdict import PassRule
from pytest_reasoning_evals.gates import MAX_ERROR_RATE
from pytest_reasoning_evals.options import Option, Reader, Settings, aliases, answer_tokens
from pytest_reasoning_evals.shipped import shipped

# the numbers of a variant's pass (verdict.py): the rule, the gate's line and the option's help read them here
PASS_RULE = PassRule(min_score=70.0, min_mode_accuracy=0.9)

OPTIONS = (
    Option(
        "dialectic-cases",
        "dialectic case YAML file or folder (default: the shipped cases)",
        "path",
        metavar="PATH",
    ),
    Option(
        "variant-prompts",
        "folder of dialectic prompt variants, one system prompt per <name>.txt (default: the shipped ones)",
        "path",
        metavar="DIR",
    ),
    Option(
        "variant",
        "prompt variant: baseline (no system prompt) or a file stem in the variant folder (repeatable; default all)",
        "list",
        metavar="NAME",
    ),
    Option(
        "dialectic-max-tokens",
        "most tokens of each dialectic answer of the model under test (responses, follow-ups, "
        "--eval-compare-models responses); default --eval-max-tokens, else 512; judges keep their own",
        "int",
        metavar="N",
    ),
    Option(
        "judge-model",
        "judge model aliases, comma-separated or the flag repeated, used in turn, or the name of a judge panel of "
        "the models file (default: the model under test)",
        "list",
        metavar="ALIASES",
    ),
    Option("n-judges", "judges per response (default 3, or every judge model named when more)", "int", metavar="N"),
    Option(
        "judge-temperature",
        "temperature of a judge model that sits more than once on the panel; each repeat also gets its own seed (default 0.7; > 0)",
        "float",
        metavar="T",
    ),
    Option(
        "compare-models",
        "cross-provider comparison: aliases, comma-separated or the flag repeated (default: the model under test)",
        "list",
        metavar="ALIASES",
    ),
    Option(
        "dialectic-baseline",
        "compare with an earlier <model>_dialectic run directory per variant; writes comparison.json (the regression gate: --eval-fail-on-regression)",
        "path",
        metavar="PATH",
    ),
    Option(
        "max-hard-fails",
        "gate: fail the session with more than N PCC hard fails",
        "int",
        metavar="N",
    ),
    Option(
        "max-failed-judge-share",
        "gate: the share of judge and resolution items allowed no usable judgement or a failed call "
        f"(default {MAX_ERROR_RATE:g})",
        "float",
        metavar="X",
    ),
    Option(
        "require-variant-pass",
        f"gate: this variant must pass ({PASS_RULE.words()}; repeatable)",
        "list",
        metavar="VARIANT",
    ),
)


class DialecticSettings(NamedTuple):
    cases: Path
    variant_prompts: Path
    variants: tuple[str, ...]
    judge_models: tuple[str, ...]  # judge aliases, or one judge panel's name (Protocol.panel seats them)
    n_judges: int | None  # None: 3, or every judge model when more are named
    judge_temperature: float  # of a judge model that sits more than once
    compare_models: tuple[str, ...]
    baseline: Path | None
    max_hard_fails: int | None
    require_variant_pass: tuple[str, ...]
    max_failed_judge_share: float | None  # None: gates.MAX_ERROR_RATE
    max_tokens: int | None  # of each answer: its own option, else --eval-max-tokens; None: runner.MAX_TOKENS
    pass_rule: PassRule = PASS_RULE  # a variant's pass, and a judged response's


def dialectic_settings(get: Reader, generic: Settings) -> DialecticSettings:
    n_judges = get("n-judges")
    if n_judges is not None and n_judges < 1:
        raise pytest.UsageError(f"--eval-n-judges must be at least 1, got {n_judges}")
    temperature = get("judge-temperature")
    if temperature is not None and not 0 < temperature <= 2:
        raise pytest.UsageError(f"--eval-judge-temperature must be above 0 and at most 2, got {temperature}")
    share = get("max-failed-judge-share")
    if share is not None and not 0 <= share <= 1:
        raise pytest.UsageError(f"--eval-max-failed-judge-share must be between 0 and 1, got {share}")
    return DialecticSettings(
        cases=get.path("dialectic-cases", shipped("dialectic")),
        variant_prompts=get.path("variant-prompts", shipped("prompts")),
        variants=tuple(get("variant") or ()),
        judge_models=tuple(aliases("judge-model", get("judge-model")) if get("judge-model") else (generic.model,)),
        n_judges=n_judges,
        judge_temperature=DEFAULT_TEMPERATURE if temperature is None else temperature,
        compare_models=tuple(
            aliases("compare-models", get("compare-models")) if get("compare-models") else (generic.model,)
        ),
        baseline=get.path("dialectic-baseline", None),
        max_hard_fails=get("max-hard-fails"),
        require_variant_pass=tuple(get("require-variant-pass") or ()),
        max_failed_judge_share=share,
        max_tokens=answer_tokens(get, "dialectic-max-tokens") or generic.max_tokens,
    )
