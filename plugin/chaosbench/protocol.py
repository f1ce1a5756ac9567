"""ChaosBench-Logic as a protocol of the session: its items (one per question, one per dialogue),
their records, and on the controller the run directory: completions, checkpoints, summary,
run_meta / run_manifest, CSV tables, gates and the terminal block.

Items carry the marker `chaosbench(family=..., split=...)` (select with
`-m "chaosbench(family='atomic')"`), and their family, split and system id are -k keywords.
"""

from __future__ import annotations

import functools
import hashlib
import json
import secrets
import time
from collections.abc import Iterator
from datetime import datetime

import pytest

from pytest_reasoning_evals.budget import Budget, BudgetedModel
from pytest_reasoning_evals.casefiles import CaseFileError
from pytest_reasoning_evals.chaosbench.checkpoints import Checkpoints, ResumeError
from pytest_reasoning_evals.chaosbench.compare import BaselineError, compare, comparison_lines, load_baseline
from pytest_reasoning_evals.chaosbench.dialogues import dialogue_record
from pytest_reasoning_evals.chaosbench.gates import check_gates
from pytest_reasoning_evals.chaosbench.metrics import api_success_rate, call_counts, record_tally, summarize
from pytest_reasoning_evals.chaosbench.names import FAMILIES
from pytest_reasoning_evals.chaosbench.outputs import write_run_outputs
from pytest_reasoning_evals.chaosbench.prompts import PromptTemplate
from pytest_reasoning_evals.chaosbench.questions import (
    Dialogue,
    Question,
    files_digest,
    group_dialogues,
    load_questions,
    select,
    select_dialogues,
    shard_of,
    unmatched_selection,
)
from pytest_reasoning_evals.chaosbench.report import markdown, summary_lines
from pytest_reasoning_evals.chaosbench.rows import compact
from pytest_reasoning_evals.chaosbench.scoring import failure_reason, score
from pytest_reasoning_evals.completions import CompletionsLog, answered, load_completions
from pytest_reasoning_evals.gates import GateResult, write_gates
from pytest_reasoning_evals.manifest import now, run_manifest, run_meta
from pytest_reasoning_evals.models import UsageProblem
from pytest_reasoning_evals.prefetch import ItemQueue
from pytest_reasoning_evals.progress import Tally
from pytest_reasoning_evals.protocol import UNKNOWN, WRONG, EvalProtocol, send
from pytest_reasoning_evals.providers.base import Completion, Request
from pytest_reasoning_evals.report import Written, write_run_report
from pytest_reasoning_evals.results import RunDirLock, write_json
from pytest_reasoning_evals.shipped import shipped

ANSWERED_KEY = "chaosbench_answered"  # workerinput: ids a resumed run does not ask again
BUDGET_KEY = "chaosbench_budget_token"  # workerinput: what the controller's budget-spent marker holds in this run


class Protocol(EvalProtocol):
    name = "chaosbench"

    def __init__(self, session):
        super().__init__(session)
        s = self.settings
        self.run_dir = s.run_dir(s.mode)
        self.lock = RunDirLock.for_session(session.config, self.run_dir)  # one run at a time (results.py)
        self.checkpoints = Checkpoints(self.run_dir)
        workerinput = getattr(session.config, "workerinput", None)
        if workerinput is None:
            workers, token = 1, secrets.token_hex(8)
        else:
            workers, token = workerinput.get("workercount", 1), workerinput.get(BUDGET_KEY, "")
        self.budget = Budget(s.max_cost, self.checkpoints.folder, workers, token)  # each worker spends its share
        self.completions = CompletionsLog(self.run_dir / "completions.jsonl")
        self.records: list[dict] = []
        self.not_asked: list[str] = []
        self.answered_ids: frozenset[str] = frozenset(getattr(session.config, "workerinput", {}).get(ANSWERED_KEY, ()))
        self.summary: dict | None = None
        self.gates: list[GateResult] = []
        self.comparison: dict | None = None
        self.baseline: dict | None = None  # controller: read at the start, before this run writes anything
        self.html_report: Written | None = None  # report.html, or why it was not written
        self.resume_notes: list[str] = []  # controller: what a resume could not use, one line each
        self.started_at = now()
        self._begun = False
        self._queue: ItemQueue | None = None  # the items this process runs next (calls run ahead)

    # --- items (every process that collects) ---

    @functools.cached_property
    def prompt(self) -> PromptTemplate:
        try:
            return PromptTemplate.load(self.settings.prompts_dir, self.settings.mode)
        except (OSError, ValueError) as exc:
            raise UsageProblem(str(exc)) from None

    @functools.cached_property
    def prompt_is_shipped(self) -> bool:
        """The prompt's text is the shipped one (written for ChaosBench's dynamical systems), wherever it was read from."""
        try:
            return self.prompt.text == (shipped("chaosbench", "prompts") / f"{self.settings.mode}.txt").read_text(
                encoding="utf-8"
            )
        except OSError:
            return False

    def _shipped_prompt_note(self) -> str | None:
        """One line when a team's own questions (families outside ChaosBench's) are asked with the
        shipped prompt, which tells the model they are about dynamical systems: silent otherwise."""
        own = sorted({r["family"] for r in self.records} - set(FAMILIES))
        if not own or not self.prompt_is_shipped:
            return None
        names = ", ".join(own[:5]) + (f" and {len(own) - 5} more" if len(own) > 5 else "")
        return (
            f"NOTE: these questions are not the ChaosBench bank (families: {names}) but are asked with the shipped "
            f"{self.settings.mode} prompt, which says they are about dynamical systems; give your own prompt with "
            f"--eval-prompts (ini eval_prompts)"
        )

    @functools.cached_property
    def items(self) -> tuple[list[Question], list[Dialogue]]:
        """The selected questions and dialogues (--eval-split/-family/-max-items, then the shard);
        CaseFileError propagates."""
        s = self.settings
        loaded = load_questions(s.cases)
        problem = unmatched_selection(loaded, splits=list(s.splits), families=list(s.families))
        if problem:
            raise UsageProblem(problem)
        questions = select(loaded, splits=list(s.splits), families=list(s.families))
        dialogues = select_dialogues(group_dialogues(loaded), splits=list(s.splits), families=list(s.families))
        if s.max_items is not None:
            questions = questions[: s.max_items]
            dialogues = dialogues[: max(0, s.max_items - len(questions))]
        if s.shard is not None:
            index, count = s.shard
            questions = [q for q in questions if shard_of(q.id, count) == index]
            dialogues = [d for d in dialogues if shard_of(d.id, count) == index]
        return questions, dialogues

    def parametrize(self, metafunc: pytest.Metafunc) -> None:
        self.session.models.preflight((self.settings.model,))  # unknown alias, missing key: stop here
        self.prompt  # noqa: B018 - a missing or broken prompt file stops collection too
        questions, dialogues = self.items
        self.hold_run_dir()  # before any item: a second run on this run directory stops here
        # one mark per family and split, shared by its items (marks are immutable): 40,000 items need 50
        mark = functools.cache(lambda family, split: pytest.mark.chaosbench(family=family, split=split))
        for name, items in (("chaosbench_question", questions), ("chaosbench_dialogue", dialogues)):
            if name in metafunc.fixturenames:
                metafunc.parametrize(name, [pytest.param(i, id=i.id, marks=mark(i.family, i.split)) for i in items])

    def item_collected(self, item: pytest.Item) -> None:
        """-k matches family, split and system id (`-k lorenz63`, `-k "atomic and core"`)."""
        value = self.parameter(item)
        first = value.turns[0] if isinstance(value, Dialogue) else value
        if first is not None and hasattr(first, "family"):
            item.extra_keyword_matches.update({first.family, first.split, first.system_id})

    def cassette_of(self, item: pytest.Item) -> tuple[str, str] | None:
        """A question and a dialogue read one cassette each."""
        value = self.parameter(item)
        return (self.prompt.suite, value.id) if isinstance(value, (Question, Dialogue)) else None

    def modify_items(self, items: list[pytest.Item]) -> list[pytest.Item]:
        """Drop what a resumed run has answered, and the placeholder pytest makes for an empty
        parameter set (a bank with no dialogues, say)."""
        drop = []
        for item in items:
            value = self.parameter(item)
            if value is None:
                continue
            if not isinstance(value, (Question, Dialogue)):  # pytest's NOTSET for an empty parameter set
                drop.append(item)
            elif value.id in self.answered_ids:
                drop.append(item)
        return drop

    def model_for_items(self) -> BudgetedModel:
        """The model under test as items see it: refused key stops all, a spent budget skips the
        running item (and lists it as not asked). While recording, the next questions' calls run
        ahead (--eval-concurrency) until the budget is spent."""
        run_ahead = (self._upcoming_requests, lambda unclaimed: not self.budget.exhausted(unclaimed))
        model = self.session.models.get(self.settings.model, run_ahead=run_ahead)
        return BudgetedModel(
            model,
            self.budget,
            lambda item_id, calls, paid: send(
                self.session.current_item,
                {"protocol": self.name, "not_asked": item_id, "live_calls": calls, "cost_usd": paid},
            ),
        )

    def _upcoming_requests(self) -> Iterator[Request | None]:
        """The requests of the items this process runs next: a question's; None for anything else
        (a dialogue's turns wait for the answers before them)."""
        if self._queue is None:
            self._queue = ItemQueue(self.session.pytest_session)
        for item in self._queue.after(self.session.current_item):
            params = getattr(item, "callspec", None)
            question = params.params.get("chaosbench_question") if params is not None else None
            yield self.prompt.request(question) if isinstance(question, Question) else None

    def report(self, node: pytest.Item, record: dict) -> None:
        """Send an item's record to the controller; a wrong or UNKNOWN answer fails the item with
        a one-line reason (no traceback). Whether the session fails is up to the gates."""
        send(
            node,
            {"protocol": self.name, "record": record},
            [("eval_status", record["status"]), ("eval_label", record.get("label")), ("eval_gold", record.get("gold"))],
            failure=failure_reason(record),
        )

    def error_record(self, item: pytest.Item, error: str) -> dict | None:
        """An item that raised inside the harness: an error record (no answer, counted in
        num_errors, asked again by --eval-resume)."""
        value = self.parameter(item)
        failed = Completion(provider=None, model=self.settings.model, text="", error=error)
        if isinstance(value, Question):
            return score(value, failed, self.prompt.sha256)
        if isinstance(value, Dialogue):
            return dialogue_record(
                value,
                [
                    {**score(turn, failed, self.prompt.sha256), "turn": turn.turn, "dialogue_id": value.id}
                    for turn in value.turns
                ],
                self.prompt.sha256,
            )
        return None

    def teststatus(self, payload: dict):
        status = (payload.get("record") or {}).get("status")
        if status == "unknown":
            return UNKNOWN, "U", "UNKNOWN"
        if status == "wrong":  # with -v, pytest's full failure section; else one line (session.py)
            return ("failed" if self.session.config.option.verbose > 0 else WRONG), "F", "WRONG"
        return None

    def tally(self, payload: dict) -> Tally:
        if "record" in payload:
            return record_tally(payload["record"])
        return Tally(live=payload["live_calls"], spent=payload["cost_usd"])  # what an item the budget stopped had paid

    # --- resume (controller) ---

    def start(self) -> None:
        s = self.settings
        if s.baseline is not None:  # before this run writes anything: the baseline may be its own run directory
            try:
                self.baseline = load_baseline(s.baseline)
            except BaselineError as exc:
                raise pytest.UsageError(str(exc)) from None
        if not s.resume:
            return
        try:
            self.hold_run_dir()  # before the answers of the run directory are read
        except UsageProblem as exc:
            raise pytest.UsageError(str(exc)) from None
        if self.checkpoints.config_file.exists() or self.completions.path.exists():
            try:
                self.checkpoints.check_config(self.run_config())
            except ResumeError as exc:
                raise pytest.UsageError(str(exc)) from None
        read = load_completions(self.completions.path)
        if read.unreadable:
            self.resume_notes.append(read.problem(self.completions.path))
        records = [r for r in read.records if answered(r)]
        try:
            questions, dialogues = self.items
        except CaseFileError:
            pass  # collection reports the bad case file and stops the session
        else:  # only this run's items: a record of anything else is neither counted nor kept
            selected = {**{q.id: "question" for q in questions}, **{d.id: "dialogue" for d in dialogues}}
            foreign = [r for r in records if selected.get(r["id"]) != r.get("kind", "question")]
            if foreign:
                records = [r for r in records if selected.get(r["id"]) == r.get("kind", "question")]
                self.resume_notes.append(
                    f"{self.completions.path}: {len(foreign)} record(s) of items outside this run's selection ignored "
                    f"(first: {sorted(r['id'] for r in foreign)[0]!r}); not counted, and dropped when the file is rewritten"
                )
        self.records = records
        self.answered_ids = frozenset(r["id"] for r in self.records)
        self.active = bool(self.records)  # a resumed run with nothing left to ask still reports

    def worker_input(self) -> dict:
        return {ANSWERED_KEY: sorted(self.answered_ids), BUDGET_KEY: self.budget.run_token}

    # --- results (controller) ---

    def add(self, payload: dict) -> None:
        if not self._begun:
            self._begin()
        if "not_asked" in payload:
            self.not_asked.append(payload["not_asked"])
            self.budget.charge_unasked(payload["cost_usd"])  # a dialogue's turns paid before the budget stopped it
            return
        record = payload["record"]
        self.count_harness_error(payload)  # its record is an error record
        self.lock.try_hold()  # under xdist the controller shares its workers' lock from the first result on
        self.completions.append(record)
        self.budget.charge(record)
        self.records.append(compact(record))  # what the summary needs; the texts are in completions.jsonl
        if self.checkpoints.record_added():
            self.completions.sync()
            self.checkpoints.write_progress(len(self.records), len(self.not_asked), self.budget.run_spent)

    def _begin(self) -> None:
        """At the first result: the configuration the answers belong to, and the completions
        stream (starting with the resumed records)."""
        self._begun = True
        self.budget.start_run()
        self.checkpoints.write_config(self.run_config())
        self.completions.start(self.records)
        self.records = [compact(r) for r in self.records]

    def finish(self, session: pytest.Session) -> list[GateResult]:
        s = self.settings
        self.lock.try_hold()
        if not self._begun:
            self._begin()
        self.summary = summarize(
            self.records,
            model=s.model,
            mode=s.mode,
            not_asked=self.not_asked,
            stopped=self.incomplete_reason(session),
        )
        # paid by calls made ahead for items that never ran (the run stopped first): in no record
        self.budget.charge_unasked(self.session.unclaimed.get(s.model, 0.0))
        self.summary["cost_usd"] += self.budget.unasked  # ... and by items the budget stopped midway
        self.gates = check_gates(
            self.summary,
            min_accuracy=s.min_accuracy,
            strict_items=s.strict_items,
            min_coverage=s.min_coverage,
            max_fol_violation_rate=s.max_fol_violation_rate,
        )
        dataset = self._dataset()
        calls = call_counts(self.records)
        meta = run_meta(
            model=s.model,
            mode=s.mode,
            started_at=self.started_at,
            num_workers=self.session.num_workers(),
            summary=self.summary,
            dataset_version=dataset["version"],
            config_hash=self.config_hash,
            execution_time_seconds=round(time.monotonic() - self.session.started, 3),
            api_success_rate=api_success_rate(self.summary, calls),
            calls=calls,
            resumed_items=len(self.answered_ids),
            max_cost_usd=s.max_cost,
            spent_usd=self.budget.run_spent,
        )
        if s.baseline is not None:  # comparison.json first: the report reads it
            self.gates += self._compare_with_baseline()
        else:  # an earlier run's comparison is not this run's
            (self.run_dir / "comparison.json").unlink(missing_ok=True)
        write_run_outputs(
            self.run_dir, self.records, self.summary, meta, self._manifest(dataset), completions=self.completions
        )
        write_gates(self.run_dir, self.gates)
        self.checkpoints.write_progress(len(self.records), len(self.not_asked), self.budget.run_spent)
        self.html_report = write_run_report(self.run_dir, len(self.records))
        return self.gates

    def judge_unrun(self) -> list[GateResult]:
        s = self.settings
        gates = check_gates(
            summarize([], model=s.model, mode=s.mode),
            min_accuracy=s.min_accuracy,
            strict_items=s.strict_items,
            min_coverage=s.min_coverage,
            max_fol_violation_rate=s.max_fol_violation_rate,
        )
        if s.baseline is not None and (s.fail_on_regression or s.max_accuracy_drop is not None):
            gates.append(self._nothing_paired())
        return gates

    def _nothing_paired(self) -> GateResult:
        return GateResult(
            "no-regression", False, f"no item is paired with the baseline {self.settings.baseline}: nothing to compare"
        )

    def _compare_with_baseline(self) -> list[GateResult]:
        """comparison.json in the run directory; the regression gate when asked for."""
        s = self.settings
        try:
            baseline = self.baseline or load_baseline(s.baseline)
            self.comparison = compare(baseline, self.records, alpha=s.regression_alpha, max_drop=s.max_accuracy_drop)
        except BaselineError as exc:
            return [GateResult("baseline", False, str(exc))]
        except Exception as exc:  # noqa: BLE001 - the run is paid for: its outputs are written whatever the comparison does
            (self.run_dir / "comparison.json").unlink(missing_ok=True)
            return [
                GateResult(
                    "baseline", False, f"--eval-baseline {s.baseline}: cannot be compared ({type(exc).__name__}: {exc})"
                )
            ]
        write_json(self.run_dir / "comparison.json", self.comparison)
        if not (s.fail_on_regression or s.max_accuracy_drop is not None):
            return []
        c = self.comparison
        if c["n_paired"] == 0:
            return [self._nothing_paired()]
        delta = f"{c['accuracy_delta']:+.4f}"
        return [
            GateResult(
                "no-regression",
                not c["regressed"],
                f"paired accuracy {c['accuracy_baseline']:.4f} -> {c['accuracy_current']:.4f} ({delta}), "
                f"broken {c['broken']}, fixed {c['fixed']}, McNemar p = {c['p_value']:.4g}, alpha {c['alpha']}"
                + (f", max drop {c['max_accuracy_drop']}" if c["max_accuracy_drop"] is not None else ""),
            )
        ]

    def terminal(self) -> tuple[str, list[str]]:
        s = self.settings
        title = f"eval summary: {s.model} ({s.mode})" + (
            f", shard {s.shard_index} of {s.num_shards}" if s.shard else ""
        )
        lines = summary_lines(
            self.summary,
            self.gates,
            self.run_dir,
            calls=call_counts(self.records),
            resumed=len(self.answered_ids),
            comparison=comparison_lines(self.comparison) if self.comparison else [],
            report=self.html_report.note if self.html_report else None,
        )
        lines[:0] = [f"WARNING {note}" for note in self.resume_notes]
        misses = self.summary["errors_by_kind"]["cassette_miss"]
        if misses:
            lines.insert(
                lines.index(f"results: {self.run_dir}"),
                f"CASSETTE MISSES: {misses} items have no matching cassette (a prompt, question or option "
                f"changed since the recording, they were never recorded, or their cassette could not be read); record them with: "
                f"{self.session.record_command(r['error'] for r in self.records if r.get('error'))}",
            )
        note = self._shipped_prompt_note()
        if note:
            lines.insert(lines.index(f"results: {self.run_dir}"), note)
        if s.subset:
            lines.append(
                f"subset run ({s.subset}): written beside the full run, whose results in "
                f"{s.out_dir / f'{s.model}_{s.mode}'} are left untouched"
            )
        return title, lines

    def markdown(self) -> str:
        return markdown(self.terminal()[0], self.summary, self.gates, self.comparison)

    # --- what the answers depend on ---

    @functools.cached_property
    def cases_digest(self) -> dict:
        """sha256 of the case files, read once per run (manifest, config hash, resume check)."""
        return files_digest(self.settings.cases)

    @functools.cached_property
    def answers_config(self) -> dict:
        """What decides the answers: model, prompt, data, selection, seed (not the shard)."""
        s = self.settings
        return {
            "model": self.session.models.spec(s.model).to_dict(),
            "mode": s.mode,
            "prompt_sha256": self.prompt.sha256,
            "dataset_sha256": self.cases_digest["sha256"],
            "splits": list(s.splits),
            "families": list(s.families),
            "max_items": s.max_items,
            "seed": s.seed,
        }

    @functools.cached_property
    def config_hash(self) -> str:
        return hashlib.sha256(json.dumps(self.answers_config, sort_keys=True).encode()).hexdigest()

    def run_config(self) -> dict:
        """checkpoints/config.json: a resumed run must match it."""
        return {
            **self.answers_config,
            "config_hash": self.config_hash,
            "shard": list(self.settings.shard or ()) or None,
        }

    def _dataset(self) -> dict:
        digest = self.cases_digest
        return {
            "version": digest["sha256"][:12],
            "manifest_hash": digest["sha256"],
            "path": str(self.settings.cases),
            "files": digest["files"],
            "total_questions": self.summary["total_questions"],
            "total_dialogues": self.summary["dialogue_details"]["total_dialogues"],
        }

    def _manifest(self, dataset: dict) -> dict:
        s = self.settings
        stamp = datetime.fromisoformat(self.started_at).strftime("%Y%m%d_%H%M%S")
        return run_manifest(
            run_id=f"{s.model}_{s.mode}_{stamp}",
            model_config={
                "model": s.model,
                **self.session.models.spec(s.model).to_dict(),
                "mode": s.mode,
                "temperature": 0.0,
            },
            dataset=dataset,
            prompt={
                "mode": s.mode,
                "path": str(self.prompt.path),
                "sha256": self.prompt.sha256,
                "text": self.prompt.text,
                "shipped_default": self.prompt_is_shipped,
            },
            selection={
                "splits": list(s.splits),
                "families": list(s.families),
                "max_items": s.max_items,
                "subset": s.subset,
            },
            seed=s.seed,
            args=list(self.session.config.invocation_params.args),
            rootdir=self.session.config.rootpath,
            execution={
                "num_workers": self.session.num_workers(),
                "sharded": s.shard is not None,
                "shard_index": s.shard_index,
                "num_shards": s.num_shards,
                "resumed_items": len(self.answered_ids),
                "start_time": self.started_at,
                "end_time": now(),
                "config_hash": self.config_hash,
            },
        )
