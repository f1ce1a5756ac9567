"""ChaosBench-Logic as a protocol of the session: its items (one per question, one per dialogue),
their records, and on the controller the run directory: completions, checkpoints, summary,
run_meta / run_manifest, CSV tables, gates and the terminal block.

`Protocol` is the session's face of it (EvalProtocol); the work is its collaborators', one per
job: configuration.py (the prompt, what the answers depend on, the run directory's name),
selection.py (collect and select), resume.py (--eval-resume), answers.py (requests, records as
they arrive) and finish.py (summary, gates, outputs, the terminal block).

Items carry the marker `chaosbench(family=..., split=...)` (select with
`-m "chaosbench(family='atomic')"`), and their family, split and system id are -k keywords.
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from pytest_reasoning_evals.casefiles import CaseFileError
from pytest_reasoning_evals.chaosbench.answers import Answers, error_record, estimate_calls
from pytest_reasoning_evals.chaosbench.batching import send_batches
from pytest_reasoning_evals.chaosbench.configuration import RunConfig
from pytest_reasoning_evals.chaosbench.early_stop import EarlyStop
from pytest_reasoning_evals.chaosbench.finish import RunEnd
from pytest_reasoning_evals.chaosbench.prompts import PromptTemplate
from pytest_reasoning_evals.chaosbench.questions import Dialogue, Question
from pytest_reasoning_evals.chaosbench.records import ItemRecord, RecordPayload
from pytest_reasoning_evals.chaosbench.regression import load_baseline
from pytest_reasoning_evals.chaosbench.resume import Resume
from pytest_reasoning_evals.chaosbench.scoring import failure_reason
from pytest_reasoning_evals.chaosbench.selection import Selection
from pytest_reasoning_evals.chaosbench.shortcut import SHORTCUT
from pytest_reasoning_evals.chaosbench.shortcut import answer as shortcut_answer
from pytest_reasoning_evals.epochs import cassette_id, question_of
from pytest_reasoning_evals.errors import UsageProblem
from pytest_reasoning_evals.estimate import CallEstimate
from pytest_reasoning_evals.gates import GateResult
from pytest_reasoning_evals.protocol import EvalProtocol, parameter_ids
from pytest_reasoning_evals.providers.base import Model, Request
from pytest_reasoning_evals.providers.fixed import register_answerer
from pytest_reasoning_evals.run_dir import RunDirectory
from pytest_reasoning_evals.stash import UNKNOWN, WRONG, NotAskedPayload, send


class Protocol(EvalProtocol):
    name = "chaosbench"

    def __init__(self, session):
        super().__init__(session)
        register_answerer(SHORTCUT, shortcut_answer)
        self.configuration = RunConfig(self)
        self.selection = Selection(self)
        self.resume = Resume(self)
        self.answers = Answers(self)
        self.end = RunEnd(self)
        self.early: EarlyStop | None = None  # controller, --eval-stop-when-decided: the decision so far

    @functools.cached_property
    def directory(self) -> RunDirectory:
        """Keyed by model, mode, dataset and request shape (configuration.RunConfig.run_dir)."""
        return RunDirectory(self.session, self.name, self.configuration.run_dir)

    @property
    def run_dir(self) -> Path:
        return self.directory.path

    @property
    def prompt(self) -> PromptTemplate:
        """The prompt of its items (the chaosbench_prompt fixture)."""
        return self.configuration.prompt

    def hold_run_dir(self) -> None:
        """The lock, then: a run directory whose answers are of another model under this alias is
        not overwritten (a usage error naming both)."""
        self.directory.hold(self.resume.identity_problem)

    # --- items (every process that collects) ---

    def parametrize(self, metafunc: pytest.Metafunc) -> None:
        self.selection.parametrize(metafunc, self.hold_run_dir)

    def item_collected(self, item: pytest.Item) -> None:
        item.extra_keyword_matches.update(self.selection.keywords(self.parameter(item)))

    def cassette_of(self, item: pytest.Item) -> tuple[str, str] | None:
        """A question and a dialogue read one cassette each."""
        value = self.parameter(item)
        return (self.prompt.cassette_folder, cassette_id(value)) if self.selection.is_item(value) else None

    def placeholder(self, item: pytest.Item) -> bool:
        value = self.parameter(item)
        return value is not None and not self.selection.is_item(value)  # pytest's NOTSET

    def modify_items(self, items: list[pytest.Item]) -> list[pytest.Item]:
        """Drop what a resumed run has answered."""
        answered = self.resume.answered_ids
        return [item for item in items if getattr(self.parameter(item), "id", None) in answered] if answered else []

    def model_for_items(self) -> Model:
        """The model under test on the session's call path (models.py): refused key stops all, a
        spent budget skips the running item (listed as not asked); while recording, the next
        questions' calls run ahead (--eval-concurrency) until the budget is spent."""
        return self.session.models.get(self.settings.model)

    def item_ids(self, fixture: str) -> set[str]:
        """The questions (its `runs_ahead` fixture), whatever a team named the test function that asks them."""
        return self.selection.question_ids() if fixture == "chaosbench_question" else set()

    def ahead_request(self, item: pytest.Item) -> Request | None:
        """A question's request; None for a dialogue (its turns wait for the answers before them)."""
        params = getattr(item, "callspec", None)
        question = params.params.get("chaosbench_question") if params is not None else None
        return self.prompt.request(question) if isinstance(question, Question) else None

    def before_items(self, items: list[pytest.Item]) -> None:
        """--eval-batch: the questions' first requests, then the dialogues' turns round by round,
        answered in batches and saved as their cassettes (batching.py)."""
        if self.settings.batch:
            values = [self.parameter(item) for item in items]
            questions = [v for v in values if isinstance(v, Question)]
            send_batches(self, questions, [v for v in values if isinstance(v, Dialogue)])

    def before_collected(self, ids: list[str]) -> None:
        """--eval-batch under xdist (the controller): the same for the collected questions and dialogues."""
        if not self.settings.batch:
            return
        wanted = set(parameter_ids(ids))
        try:
            questions, dialogues = self.selection.shard
        except (CaseFileError, UsageProblem):  # the workers' collection said why; nothing of it runs
            return
        picked = [q for q in questions if q.id in wanted], [d for d in dialogues if d.id in wanted]
        if any(picked):
            send_batches(self, *picked)

    def estimate(self, items: list[pytest.Item]) -> list[CallEstimate]:
        """Every question's and dialogue turn's calls, worst case (answers.estimate_calls); with
        --eval-batch those batching.py sends in batches at the batch price."""
        values = [self.parameter(item) for item in items]
        calls = estimate_calls(values, self.prompt, self.settings.model, self.own.reprompt)
        if not self.settings.batch:
            return calls
        models = self.session.models
        # a question's first request and (but when rewriting) each dialogue turn; reprompts are live
        batched = {"question"} | (
            {"dialogue turn"} if models.record_mode_for(models.spec(self.settings.model)) != "rewrite" else set()
        )
        return [c._replace(batch=True) if c.kind in batched else c for c in calls]

    def estimate_notes(self, items: list[pytest.Item]) -> list[str]:
        """What a paired comparison of the selected questions could detect (detect.py)."""
        from pytest_reasoning_evals.chaosbench.detect import detect_lines

        ids = list(dict.fromkeys(question_of(v) for v in map(self.parameter, items) if isinstance(v, Question)))
        s = self.settings
        return detect_lines(ids, self.own.baseline, s.regression_alpha, self.own.detect, s.epochs)

    def send_record(self, node: pytest.Item, record: ItemRecord) -> None:
        """Send an item's record to the controller; a wrong or UNKNOWN answer fails the item with
        a one-line reason (no traceback). Whether the session fails is up to the gates."""
        send(
            node,
            {"protocol": self.name, "record": record},
            [("eval_status", record["status"]), ("eval_label", record.get("label")), ("eval_gold", record.get("gold"))],
            failure=failure_reason(record),
        )

    def error_record(self, item: pytest.Item, error: str) -> ItemRecord | None:
        """An item that raised inside the harness: an error record (no answer, counted in
        num_errors, asked again by --eval-resume)."""
        return error_record(self.parameter(item), self.prompt, self.settings.model, error)

    def teststatus(self, payload: dict):
        status = (payload.get("record") or {}).get("status")
        if status == "unknown":
            return UNKNOWN, "U", "UNKNOWN"
        if status == "wrong":  # with -v, pytest's full failure section; else one line (session.py)
            return ("failed" if self.session.config.option.verbose > 0 else WRONG), "F", "WRONG"
        return None

    # --- the run (controller) ---

    def start(self) -> None:
        # before this run writes anything: the baseline may be its own run directory
        self.end.baseline = self.directory.previous(self.own.baseline, load_baseline)
        s = self.settings
        if s.stop_when_decided and self.end.baseline is not None:
            self.early = EarlyStop(self.end.baseline["items"], s.epochs, s.regression_alpha, self.own.max_accuracy_drop)
        records = self.resume.start()
        if records is not None:
            self.answers.resumed = records
            self.active = bool(records)  # a resumed run with nothing left to ask still reports

    def worker_input(self) -> dict:
        return self.resume.worker_input()

    def add(self, payload: RecordPayload | NotAskedPayload) -> None:
        row = self.answers.add(payload)
        if self.early is not None and row is not None and self.early.add(row):
            self.session.budget.stop_asking(self.early.reason())  # every process skips what is left

    def finish(self, session: pytest.Session) -> list[GateResult]:
        return self.end.finish(session)

    def judge_unrun(self) -> list[GateResult]:
        return self.end.judge_unrun()

    def terminal(self) -> tuple[str, list[str]]:
        return self.end.terminal()

    def markdown(self) -> str:
        return self.end.markdown()
