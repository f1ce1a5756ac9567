"""Fixed-answer models (registry provider `baseline`: always TRUE, always FALSE, random, oracle, and
baselines a protocol answers, such as ChaosBench's shortcut): no HTTP, through the same result path
as real models. Not to be confused with a regression baseline (--eval-baseline)."""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable

from pytest_reasoning_evals.providers.base import Completion, Request
from pytest_reasoning_evals.registry import ModelSpec

# model_id -> its answer to a request, for baselines that need a protocol's knowledge: the protocol
# registers it when it starts (a generic module imports no protocol)
ANSWERERS: dict[str, Callable[[Request], str]] = {}


def register_answerer(model_id: str, answer: Callable[[Request], str]) -> None:
    ANSWERERS[model_id] = answer


class FixedAnswerModel:
    def __init__(self, spec: ModelSpec, seed: int):
        self.spec = spec
        self.seed = seed

    def _answer(self, request: Request) -> str:
        kind = self.spec.model_id
        if kind == "always-true":
            return "TRUE"
        if kind == "always-false":
            return "FALSE"
        if kind == "oracle":
            return request.gold or ""  # no gold: nothing to say, scored UNKNOWN
        if kind != "random":
            # a protocol's baseline; outside that protocol's items it has nothing to say (UNKNOWN)
            return ANSWERERS[kind](request) if kind in ANSWERERS else ""
        # Seeded by item id (and turn), not by call order, so any worker split gives the same answers.
        turn = f":{len(request.messages)}" if len(request.messages) > 1 else ""
        return random.Random(f"{self.seed}:{request.item_id}{turn}").choice(["TRUE", "FALSE"])

    def conversation(self, folder: str, item_id: str) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    def complete(self, request: Request) -> Completion:
        return Completion(
            provider="baseline",
            model=self.spec.model_id,
            text=self._answer(request),
            finish_reason="stop",
        )
