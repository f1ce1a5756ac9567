"""The short-answer protocol: one item per case, its answer scored by exact or regex match; on the
controller <out>/<model>_shortanswer/ gets summary.json and gates.json, and the terminal a block."""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

import pytest

from pytest_reasoning_evals.casefiles import CaseFileError, check_id, numbered_lines, parse_json
from pytest_reasoning_evals.errors import UsageProblem
from pytest_reasoning_evals.gates import GateResult, at_least, gate_line, incomplete, write_gates
from pytest_reasoning_evals.protocol import WRONG, EvalProtocol, send
from pytest_reasoning_evals.providers.base import Completion, Request
from pytest_reasoning_evals.results import RunDirLock, write_json

SUITE = "shortanswer"  # cassettes/<model>/shortanswer/<case id>.yaml
SYSTEM = "Answer with one word or one number only."


class Case(NamedTuple):
    id: str
    question: str
    gold: str  # the answer (match "exact", case and end punctuation aside), or a regex found in it
    match: str = "exact"

    def correct(self, answer: str) -> bool:
        if self.match == "regex":
            return re.search(self.gold, answer, re.IGNORECASE) is not None
        return answer.strip().rstrip(".!").strip().casefold() == self.gold.casefold()


def load_cases(path) -> list[Case]:
    """The cases of a JSONL file; CaseFileError naming file:line for a bad line."""
    cases = []
    for where, line in numbered_lines(path):
        data = parse_json(line, where)
        try:
            case = Case(**data)
        except TypeError as exc:
            raise CaseFileError(f"{where}: {exc} (keys: id, question, gold, match)") from None
        if case.match not in ("exact", "regex"):
            raise CaseFileError(f"{where}: match must be exact or regex, got {case.match!r}")
        cases.append(case._replace(id=check_id(case.id, where)))
    return cases


class ShortAnswer(EvalProtocol):
    name = "shortanswer"

    def __init__(self, session):
        super().__init__(session)
        self.run_dir = self.settings.run_dir(self.name)
        self.lock = RunDirLock.for_session(session.config, self.run_dir)
        self.records: list[dict] = []
        self.gates: list[GateResult] = []
        self.summary: dict = {}

    # --- items (every process that collects) ---

    def parametrize(self, metafunc: pytest.Metafunc) -> None:
        if self.own.cases is None:
            raise UsageProblem("short-answer items need --eval-shortanswer-cases (ini eval_shortanswer_cases)")
        self.session.models.preflight((self.settings.model,))
        s = self.settings
        cases = [c for c in load_cases(self.own.cases)[: s.max_items] if s.in_shard(c.id)]
        self.hold_run_dir()
        # the protocol's marker on each item: -m "shortanswer(match='regex')", and the session knows it
        params = [pytest.param(c, id=c.id, marks=pytest.mark.shortanswer(match=c.match)) for c in cases]
        metafunc.parametrize("shortanswer_case", params)

    @functools.cached_property
    def model(self):
        return self.session.models.get(self.settings.model)

    def request(self, case: Case) -> Request:
        messages = ({"role": "system", "content": SYSTEM}, {"role": "user", "content": case.question})
        return Request(item_id=case.id, cassette_folder=SUITE, messages=messages, max_tokens=16)

    def score(self, case: Case, completion: Completion) -> None:
        """Score the answer and send its record; a wrong one fails its item in one line."""
        answer = completion.error or completion.text
        correct = completion.error is None and case.correct(completion.text)
        record = {"id": case.id, "answer": answer, "gold": case.gold, "correct": correct}
        failure = None if correct else f"expected {case.gold} ({case.match}), got {answer!r}"
        send(self.session.current_item, {"protocol": self.name, "record": record}, failure=failure)

    def teststatus(self, payload: dict):
        # a wrong answer: one line in the list of wrong answers, not a failure section each
        return None if payload["record"]["correct"] else (WRONG, "F", "WRONG")

    # --- results (controller) ---

    def add(self, payload: dict) -> None:
        if not self.count_harness_error(payload):
            self.records.append(payload["record"])

    def finish(self, session: pytest.Session) -> list[GateResult]:
        self.lock.try_hold()
        right = sum(r["correct"] for r in self.records)
        accuracy = right / len(self.records) if self.records else None
        self.summary = {"model": self.settings.model, "total": len(self.records), "correct": right}
        self.summary |= {"accuracy": accuracy, "wrong": sorted(r["id"] for r in self.records if not r["correct"])}
        self.gates = self._gates(accuracy) + incomplete("complete", self.incomplete_reason(session))
        write_json(self.run_dir / "summary.json", self.summary)
        write_gates(self.run_dir, self.gates)
        return self.gates

    def judge_unrun(self) -> list[GateResult]:
        return self._gates(None)

    def _gates(self, accuracy: float | None) -> list[GateResult]:
        bound = self.own.min_accuracy
        return [] if bound is None else [at_least("min-accuracy", accuracy, bound, "accuracy {}", "none (no answer)")]

    def terminal(self) -> tuple[str, list[str]]:
        s = self.summary
        lines = [f"accuracy: {s['accuracy']:.4f} ({s['correct']}/{s['total']})" if s["total"] else "no answer"]
        lines += [gate_line(gate) for gate in self.gates]
        return f"short answers: {self.settings.model}", [*lines, f"results: {self.run_dir}"]
