"""ChaosBench prompt templates: one file per mode under cases/chaosbench/prompts/, hashed into
the run manifest so that a prompt edit is visible in every result it touches."""

from __future__ import annotations

import functools
import hashlib
import os
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from pytest_reasoning_evals.chaosbench.normalize import ENGLISH, AnswerWords, normalize_answer
from pytest_reasoning_evals.chaosbench.questions import Question
from pytest_reasoning_evals.epochs import cassette_id, seed_of
from pytest_reasoning_evals.providers.base import Request

# Generation budget per mode: a label needs few tokens, a chain of thought many.
MAX_TOKENS = {"zeroshot": 64, "cot": 512}
# What an UNKNOWN answer is asked next, in the same conversation (upstream ChaosBench-Logic's own words).
REPROMPT = "Your previous answer was not clear. Reply with EXACTLY one word: TRUE or FALSE."


SHIPPED_DATASET = "chaosbench"  # what names the shipped bank's cassette folders


def cassette_folder_name(mode: str, dataset: str = SHIPPED_DATASET) -> str:
    """The cassette folder of a dataset's answers in a mode (zero-shot and CoT answers to one
    question differ): chaosbench-zeroshot for the shipped bank, questions-cot for questions.jsonl."""
    return f"{dataset}-{mode}"


def own_cassette_dataset(stem: str, mode: str, model_cassettes: Path, ids: Iterable[str]) -> tuple[str, str | None]:
    """What names the cassette folder of a team's questions: their file's stem, or (with a note)
    the shipped bank's name where only that folder holds recordings of them (recorded by earlier versions)."""
    own, legacy = model_cassettes / cassette_folder_name(mode, stem), model_cassettes / cassette_folder_name(mode)
    if own == legacy or own.is_dir() or not any((legacy / f"{i}.yaml").is_file() for i in ids):
        return stem, None
    old, new = _shown(legacy), _shown(own)
    return SHIPPED_DATASET, (
        f"cassettes of {stem} read from {old} (the folder's name in earlier versions); `git mv {old} {new}` "
        "names them after your file (move only their files if it holds others)"
    )


def _shown(path: Path) -> str:
    """A path as the user typed it: relative when under the current directory."""
    relative = os.path.relpath(path)
    return path.as_posix() if relative.startswith("..") else relative


@dataclass(frozen=True)
class PromptTemplate:
    mode: str
    path: Path
    text: str
    max_tokens: int | None = (
        None  # of each answer (--eval-chaosbench-max-tokens, else --eval-max-tokens); None: the mode's MAX_TOKENS
    )
    temperature: float = 0.0  # --eval-temperature
    dataset: str = SHIPPED_DATASET  # names the cassette folder (cassette_folder_name)
    profile = "harness"  # not a field: --eval-profile (profiles.py)

    @classmethod
    def load(
        cls,
        prompts_dir: Path,
        mode: str,
        max_tokens: int | None = None,
        temperature: float | None = None,
        dataset: str = SHIPPED_DATASET,
    ) -> PromptTemplate:
        path = prompts_dir / f"{mode}.txt"
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise FileNotFoundError(f"prompt file for mode {mode!r} not readable: {path} ({exc.strerror})") from None
        if "{question}" not in text:
            raise ValueError(f"{path}: prompt template has no {{question}} placeholder")
        return cls(mode, path, text, max_tokens, temperature or 0.0, dataset)

    @functools.cached_property  # read by every item's record
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    def render(self, question: str) -> str:
        # str.replace, not str.format: questions may contain braces.
        return self.text.replace("{question}", question)

    @property
    def answer_tokens(self) -> int:
        """The max_tokens of every request: --eval-chaosbench-max-tokens or --eval-max-tokens, else the mode's."""
        return MAX_TOKENS[self.mode] if self.max_tokens is None else self.max_tokens

    @property
    def cassette_folder(self) -> str:
        return cassette_folder_name(self.mode, self.dataset)

    def request(
        self,
        question: Question,
        *,
        item_id: str | None = None,
        history: tuple[dict, ...] = (),
        seed: int | None = None,
    ) -> Request:
        """The model call for one question (at --eval-temperature, default 0): a single user turn,
        or (dialogues) the next user turn after `history`, under the dialogue's cassette id and
        seed; a question's epoch (plugin/epochs.py) picks its own cassette id and seed."""
        return Request(
            item_id=item_id or cassette_id(question),
            seed=seed if item_id else seed_of(question),
            cassette_folder=self.cassette_folder,
            messages=(*history, {"role": "user", "content": self.render(question.question)}),
            gold=question.ground_truth,
            max_tokens=self.answer_tokens,
            temperature=self.temperature,
        )

    def label(self, text: str, words: AnswerWords = ENGLISH) -> str | None:
        """The label of a reply (the harness's normaliser, with the team's answer words)."""
        return normalize_answer(text, words)

    @staticmethod
    def reprompt(request: Request, reply: str) -> Request:
        """The same conversation asked again: `request`'s messages, the model's `reply`, then REPROMPT
        (same item, cassette and parameters)."""
        return replace(
            request,
            messages=(
                *request.messages,
                {"role": "assistant", "content": reply},
                {"role": "user", "content": REPROMPT},
            ),
        )
