"""Its own options: --eval-shortanswer-cases and --eval-shortanswer-min-accuracy (also ini keys)."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from pytest_reasoning_evals.options import Option, Reader, Settings, fraction

OPTIONS = (
    Option("shortanswer-cases", "JSONL file of short-answer cases (id, question, gold, match)", "path", metavar="PATH"),
    Option("shortanswer-min-accuracy", "gate: fail when short-answer accuracy < X (0..1)", "float", metavar="X"),
)


class ShortAnswerSettings(NamedTuple):
    cases: Path | None
    min_accuracy: float | None


def shortanswer_settings(get: Reader, generic: Settings) -> ShortAnswerSettings:
    # read at every pytest start: check values, read no file
    return ShortAnswerSettings(get.path("shortanswer-cases", None), fraction(get, "shortanswer-min-accuracy"))
