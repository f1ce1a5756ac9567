"""Which ChaosBench items a run has (every process that collects): the questions and dialogues
selected by --eval-split / --eval-family, the --eval-max-items sample, this shard's part, and
their parametrized items."""

from __future__ import annotations

import functools
from collections.abc import Callable

import pytest

from pytest_reasoning_evals.chaosbench.questions import (
    Dialogue,
    Question,
    group_dialogues,
    load_questions,
    sample,
    select,
    select_dialogues,
    unmatched_selection,
)
from pytest_reasoning_evals.epochs import expand
from pytest_reasoning_evals.errors import UsageProblem
from pytest_reasoning_evals.sampling import METHOD, ids_sha256, stratified_order


class Selection:
    """The items of the ChaosBench `protocol` (its facade: the prompt names their cassettes)."""

    def __init__(self, protocol):
        self.protocol = protocol
        self.settings, self.own = protocol.settings, protocol.own

    @functools.cached_property
    def sampled(self) -> tuple[list[Question], list[Dialogue]]:
        """The selected questions and dialogues of every shard (--eval-split/-family, then the
        --eval-max-items sample); CaseFileError propagates."""
        s, o = self.settings, self.own
        loaded = load_questions(o.cases)
        problem = unmatched_selection(loaded, splits=list(o.splits), families=list(o.families))
        if problem:
            raise UsageProblem(problem)
        questions = select(loaded, splits=list(o.splits), families=list(o.families))
        dialogues = select_dialogues(group_dialogues(loaded), splits=list(o.splits), families=list(o.families))
        if s.max_items is None:
            return questions, dialogues
        return sample(questions, dialogues, s.max_items, s.seed)

    @functools.cached_property
    def shard(self) -> tuple[list[Question], list[Dialogue]]:
        """This shard's part of the sampled items (all of them, unsharded), each once per epoch (--eval-epochs)."""
        s = self.settings
        questions, dialogues = (expand(self._ordered(items), s.epochs) for items in self.sampled)
        if s.shard is not None:
            questions = [q for q in questions if s.in_shard(q.id)]
            dialogues = [d for d in dialogues if s.in_shard(d.id)]
        return questions, dialogues

    def _ordered(self, items: list) -> list:
        """--eval-stop-when-decided asks in a seeded order stratified by family and label (it may stop
        after any block); else the files' order."""
        if not self.settings.stop_when_decided:
            return items
        label = lambda item: "dialogue" if isinstance(item, Dialogue) else str(item.ground_truth)  # noqa: E731
        return stratified_order(items, self.settings.seed, lambda item: f"{item.family}/{label(item)}", lambda i: i.id)

    def parametrize(self, metafunc: pytest.Metafunc, hold: Callable[[], None]) -> None:
        """Its fixtures' items; `hold` holds the run directory once they are known, before any item."""
        self.protocol.session.models.preflight((self.settings.model,))  # unknown alias, missing key: stop here
        self._check_batch()
        self.protocol.prompt  # noqa: B018 - a missing or broken prompt file stops collection too
        questions, dialogues = self.shard
        hold()  # a second run on this run directory stops here
        # one mark per family and split, shared by its items (marks are immutable): 40,000 items need 50
        mark = functools.cache(lambda family, split: pytest.mark.chaosbench(family=family, split=split))
        for name, items in (("chaosbench_question", questions), ("chaosbench_dialogue", dialogues)):
            if name in metafunc.fixturenames:
                metafunc.parametrize(name, [pytest.param(i, id=i.id, marks=mark(i.family, i.split)) for i in items])

    def _check_batch(self) -> None:
        """--eval-batch needs a model whose provider's batch API is wired in (batch/run.py)."""
        if not self.settings.batch:
            return
        from pytest_reasoning_evals.batch.run import check_provider

        check_provider(self.protocol.session.models, self.settings.model)

    def is_item(self, value) -> bool:
        """`value` (a parameter) is a question or a dialogue, not pytest's placeholder of an empty set."""
        return isinstance(value, (Question, Dialogue))

    def keywords(self, value) -> set[str]:
        """-k matches family, split and system id (`-k lorenz63`, `-k "atomic and core"`)."""
        first = value.turns[0] if isinstance(value, Dialogue) else value
        return {first.family, first.split, first.system_id} if hasattr(first, "family") else set()

    def question_ids(self) -> set[str]:
        """The parametrize ids of this shard's questions."""
        return {question.id for question in self.shard[0]}

    def sample_record(self) -> dict | None:
        """What --eval-max-items drew (every shard's part of it): None without it."""
        s = self.settings
        if s.max_items is None:
            return None
        questions, dialogues = self.sampled
        return {
            "n": s.max_items,
            "seed": s.seed,
            "method": METHOD,
            "strata": ["family", "label"],
            "questions": len(questions),
            "dialogues": len(dialogues),
            "ids_sha256": ids_sha256([*(q.id for q in questions), *(d.id for d in dialogues)]),
        }
