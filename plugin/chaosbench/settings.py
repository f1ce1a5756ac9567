"""ChaosBench-Logic's own options and the settings they give (the generic ones are options.py's)."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import pytest

from pytest_reasoning_evals.chaosbench.names import DEFAULT_PROFILE, MODES, PROFILES
from pytest_reasoning_evals.chaosbench.normalize import AnswerWords, parse_answer_words
from pytest_reasoning_evals.options import Option, Reader, Settings, answer_tokens, fraction
from pytest_reasoning_evals.shipped import shipped

# A run that reads no TRUE/FALSE in a fifth of its replies measured the parser, not the model.
DEFAULT_MIN_COVERAGE = 0.8
DEFAULT_REPROMPT = 1

OPTIONS = (
    Option("mode", "ChaosBench prompt: zeroshot or cot (default zeroshot)", choices=MODES),
    Option(
        "profile",
        "whose conditions ChaosBench questions are asked under: harness (default: the prompt files, the mode's "
        "max_tokens, the harness's normaliser, reprompts in the conversation) or upstream (upstream "
        "ChaosBench-Logic's `chaosbench eval`: its prompt, max_tokens 16, the reply cut to 200 characters, its "
        "parser and reprompt; zero-shot only, no --eval-prompts or --eval-answer-words)",
        choices=PROFILES,
    ),
    Option(
        "cases",
        "ChaosBench question file or folder: the project's format or upstream v2 JSONL (default: the shipped bank)",
        "path",
        metavar="PATH",
    ),
    Option(
        "prompts",
        "folder with the ChaosBench prompt templates zeroshot.txt and cot.txt (default: the shipped ones); "
        "several, comma-separated: one run per folder, named by the folder, into <out>/<name>/, and their runs table",
        "path",
        metavar="DIR",
    ),
    Option(
        "chaosbench-max-tokens",
        "most tokens of each ChaosBench answer (questions, reprompts, dialogue turns); default --eval-max-tokens, "
        "else 64 zero-shot, 512 CoT",
        "int",
        metavar="N",
    ),
    Option("split", "only this split (repeatable; a name of the case files)", "list", metavar="SPLIT", narrows=True),
    Option("family", "only this family (repeatable; a name of the case files)", "list", metavar="FAMILY", narrows=True),
    Option("strict-items", "gate: any wrong or UNKNOWN answer fails the session", "bool"),
    Option("min-accuracy", "gate: fail the session when overall accuracy < X (0..1)", "float", metavar="X"),
    Option(
        "min-coverage",
        f"gate: fail when coverage (questions answered TRUE/FALSE) < X (0..1; default {DEFAULT_MIN_COVERAGE}; "
        "0 turns it off)",
        "float",
        metavar="X",
    ),
    Option(
        "reprompt",
        f"ask an UNKNOWN answer to a question again, in the same conversation, up to N times (default {DEFAULT_REPROMPT}; 0: never)",
        "int",
        metavar="N",
    ),
    Option(
        "max-fol-violation-rate",
        "gate: fail when the dialogues' FOL violation rate > X (or nothing was checked)",
        "float",
        metavar="X",
    ),
    Option(
        "baseline",
        "compare with an earlier run directory or a baseline file (reasoning-evals baseline); writes comparison.json",
        "path",
        metavar="PATH",
    ),
    Option(
        "max-accuracy-drop",
        "gate: a paired accuracy drop above X is a regression whatever the p-value (0..1)",
        "float",
        metavar="X",
    ),
    Option(
        "baseline-prompt",
        "with several --eval-prompts: compare every other prompt's run with this one's (--eval-baseline; "
        "with --eval-fail-on-regression a worse prompt fails the command)",
        metavar="NAME",
    ),
    Option(
        "answer-words",
        "your own answer words per label, read wherever TRUE/FALSE/YES/NO are (whole words, any case; only English "
        "'not' negates them, so give a negated phrase as a word of the other label), e.g. "
        '"TRUE = wahr, richtig, ja; FALSE = falsch, nein, nicht wahr" or "TRUE = verdadero, cierto; '
        "FALSE = falso, no es verdadero\"; they are part of the run's configuration (config_hash, run directory)",
        metavar="WORDS",
    ),
    Option("resume", "do not ask again the items already answered in the run directory's completions.jsonl", "bool"),
    Option(
        "detect",
        "with --eval-estimate: also the questions a paired comparison needs to detect an accuracy change of X (0..1)",
        "float",
        metavar="X",
    ),
)


class ChaosbenchSettings(NamedTuple):
    mode: str
    cases: Path
    prompts_dir: Path
    splits: tuple[str, ...]
    families: tuple[str, ...]
    strict_items: bool
    min_accuracy: float | None
    # None: not set, the default floor applies (gates.check_gates)
    min_coverage: float | None
    reprompt: int
    max_fol_violation_rate: float | None
    baseline: Path | None
    max_accuracy_drop: float | None
    resume: bool
    answer_words: AnswerWords  # a team's own words per label (ENGLISH: none)
    max_tokens: int | None  # of each answer: its own option, else --eval-max-tokens; None: the mode's default
    profile: str = DEFAULT_PROFILE  # --eval-profile (profiles.py)
    detect: float | None = None  # --eval-detect: the change --eval-estimate says the questions needed for


def chaosbench_settings(get: Reader, generic: Settings) -> ChaosbenchSettings:
    max_fol = get("max-fol-violation-rate")
    if max_fol is not None and max_fol < 0:
        raise pytest.UsageError(f"--eval-max-fol-violation-rate must be >= 0, got {max_fol}")
    baseline = get.path("baseline", None)
    max_drop = fraction(get, "max-accuracy-drop")
    if max_drop is not None and baseline is None:
        raise pytest.UsageError("--eval-max-accuracy-drop needs --eval-baseline PATH")
    if get("baseline-prompt") is not None:
        # several folders are run by prompt_runs before pytest configures: here there is one
        raise pytest.UsageError("--eval-baseline-prompt needs several --eval-prompts folders (comma-separated)")
    reprompt = get("reprompt")
    if reprompt is not None and reprompt < 0:
        raise pytest.UsageError(f"--eval-reprompt must be >= 0, got {reprompt}")
    try:
        answer_words = parse_answer_words(get("answer-words") or "")
    except ValueError as exc:
        raise pytest.UsageError(f"--eval-answer-words (ini eval_answer_words): {exc}") from None
    profile = get("profile") or DEFAULT_PROFILE
    if profile == "upstream":
        _check_upstream(get, reprompt)
    max_tokens = answer_tokens(get, "chaosbench-max-tokens")
    return ChaosbenchSettings(
        mode=get("mode") or "zeroshot",
        cases=get.path("cases", shipped("chaosbench")),
        prompts_dir=get.path("prompts", shipped("chaosbench", "prompts")),
        # checked against the case files
        splits=tuple(get("split") or ()),
        families=tuple(get("family") or ()),
        strict_items=bool(get("strict-items")),
        min_accuracy=fraction(get, "min-accuracy"),
        min_coverage=fraction(get, "min-coverage"),
        reprompt=DEFAULT_REPROMPT if reprompt is None else reprompt,
        max_fol_violation_rate=max_fol,
        baseline=baseline,
        max_accuracy_drop=max_drop,
        resume=bool(get("resume")),
        answer_words=answer_words,
        # upstream's --max-tokens is --eval-chaosbench-max-tokens alone: the generic one is other protocols' too
        max_tokens=max_tokens if profile == "upstream" else max_tokens or generic.max_tokens,
        profile=profile,
        detect=_detect(get),
    )


def _detect(get: Reader) -> float | None:
    wanted = get("detect")
    if wanted is not None and not 0 < wanted <= 1:
        raise pytest.UsageError(f"--eval-detect must be an accuracy change in (0, 1], got {wanted:g}")
    return wanted


def _check_upstream(get: Reader, reprompt: int | None) -> None:
    """What upstream's `chaosbench eval` cannot do is a usage error with --eval-profile=upstream."""
    conflicts = {
        "--eval-prompts (upstream has one prompt)": get("prompts") is not None,
        "--eval-mode=cot (upstream asks zero-shot only)": (get("mode") or "zeroshot") != "zeroshot",
        "--eval-answer-words (upstream's parser reads its own words only)": bool(get("answer-words")),
        "--eval-reprompt above 1 (upstream reprompts once at most)": reprompt is not None and reprompt > 1,
    }
    for what, given in conflicts.items():
        if given:
            raise pytest.UsageError(f"--eval-profile=upstream cannot be used with {what}")
