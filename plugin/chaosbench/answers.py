"""A ChaosBench run's answers: what its items ask (their requests, made ahead or estimated, and the
record of one that raised) and, on the controller, their records as they arrive: completions.jsonl,
checkpoints and what the run paid (read from the session's spend ledger)."""

from __future__ import annotations

import functools

from pytest_reasoning_evals.chaosbench.checkpoints import Checkpoints
from pytest_reasoning_evals.chaosbench.dialogues import dialogue_record
from pytest_reasoning_evals.chaosbench.prompts import PromptTemplate
from pytest_reasoning_evals.chaosbench.questions import Dialogue, Question
from pytest_reasoning_evals.chaosbench.records import ItemRecord, RecordPayload
from pytest_reasoning_evals.chaosbench.rows import Row, compact
from pytest_reasoning_evals.chaosbench.scoring import score
from pytest_reasoning_evals.completions import CompletionsLog
from pytest_reasoning_evals.epochs import cassette_id, seed_of
from pytest_reasoning_evals.estimate import CHARS_PER_TOKEN, LONGEST_REPLY, CallEstimate, chars_of
from pytest_reasoning_evals.providers.base import Completion, Request
from pytest_reasoning_evals.stash import NotAskedPayload


class Answers:
    """Controller: the records of the ChaosBench `protocol` (its facade: its run directory and configuration)."""

    def __init__(self, protocol):
        self.protocol = protocol
        self.records: list[Row] = []  # the summary rows (rows.py) of the records so far
        self.resumed: list[ItemRecord] = []  # --eval-resume's records kept, until begin() writes them
        self.not_asked: list[str] = []
        self._begun = False

    @functools.cached_property
    def checkpoints(self) -> Checkpoints:
        return Checkpoints(self.protocol.run_dir)

    @functools.cached_property
    def completions(self) -> CompletionsLog:
        return CompletionsLog(self.protocol.run_dir / "completions.jsonl")

    def add(self, payload: RecordPayload | NotAskedPayload) -> Row | None:
        """One payload as it arrives -> its row (None: an item not asked)."""
        self.begin()
        if "not_asked" in payload:
            self.not_asked.append(payload["not_asked"])
            return None
        record = payload["record"]
        self.protocol.count_harness_error(payload)
        self.protocol.directory.try_hold()
        self.completions.append(record)
        row = compact(record)  # what the summary needs; the texts are in completions.jsonl
        self.records.append(row)
        if self.checkpoints.record_added():
            self.completions.sync()
            self.write_progress()
        return row

    def paid(self, for_no_record: bool = False) -> float:
        """What this run's items paid and the model under test's calls made ahead for items that never
        ran; `for_no_record`: only what no record's reply holds (those calls made ahead, items the
        budget stopped midway, a dialogue's turns before it, items that raised midway)."""
        ledger = self.protocol.session.ledger
        items = ledger.spent(self.protocol.name, answered=False if for_no_record else None)
        return items + ledger.unclaimed.get(self.protocol.settings.model, 0.0)

    def begin(self) -> None:
        """At the first result (or the end): the configuration the answers belong to, and the
        completions stream (starting with the resumed records)."""
        if self._begun:
            return
        self._begun = True
        self.checkpoints.write_config(self.protocol.configuration.run_config())
        self.completions.start(self.resumed)
        self.records, self.resumed = [compact(r) for r in self.resumed], []

    def write_progress(self) -> None:
        self.checkpoints.write_progress(len(self.records), len(self.not_asked), self.paid())


def error_record(value, prompt: PromptTemplate, model: str, error: str) -> ItemRecord | None:
    """The record of a question or dialogue whose item raised inside the harness (no answer, counted
    in num_errors, asked again by --eval-resume); None for anything else."""
    failed = Completion(provider=None, model=model, text="", error=error)
    if isinstance(value, Question):
        return score(value, failed, prompt.sha256)
    if isinstance(value, Dialogue):
        turns = [
            {**score(turn, failed, prompt.sha256), "turn": turn.turn, "dialogue_id": value.id} for turn in value.turns
        ]
        return dialogue_record(value, turns, prompt.sha256)
    return None


def estimate_calls(values: list, prompt: PromptTemplate, alias: str, reprompts: int) -> list[CallEstimate]:
    """A call per question and `reprompts` more (worst case: every reply unreadable, each
    reprompt's history holding the earlier replies as long as max_tokens allows); one per
    dialogue turn (turns are not reprompted; its history holds every earlier answer)."""
    longest = CHARS_PER_TOKEN * prompt.answer_tokens
    reply = {"role": "assistant", "content": LONGEST_REPLY}
    calls = []

    def call(kind: str, request: Request) -> None:
        chars = chars_of(request.messages, longest)
        calls.append(CallEstimate(alias, kind, prompt.cassette_folder, chars, request.max_tokens))

    for value in values:
        if isinstance(value, Question):
            request = prompt.request(value)
            call("question", request)
            for _ in range(reprompts):
                request = prompt.reprompt(request, LONGEST_REPLY)
                call("reprompt", request)
        elif isinstance(value, Dialogue):
            history: tuple[dict, ...] = ()
            for turn in value.turns:
                request = prompt.request(turn, item_id=cassette_id(value), history=history, seed=seed_of(value))
                call("dialogue turn", request)
                history = (*request.messages, reply)
    return calls
