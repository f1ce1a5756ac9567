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
import time
from datetime import datetime
from pathlib import Path

import pytest

from pytest_reasoning_evals.budget import live_cost
from pytest_reasoning_evals.casefiles import CaseFileError
from pytest_reasoning_evals.chaosbench.checkpoints import Checkpoints, ResumeError
from pytest_reasoning_evals.chaosbench.dialogues import dialogue_record
from pytest_reasoning_evals.chaosbench.gates import check_gates
from pytest_reasoning_evals.chaosbench.metrics import api_success_rate, call_counts, summarize
from pytest_reasoning_evals.chaosbench.names import DEFAULT_PROFILE, FAMILIES, run_title
from pytest_reasoning_evals.chaosbench.outputs import write_run_outputs
from pytest_reasoning_evals.chaosbench.profiles import UpstreamPrompt
from pytest_reasoning_evals.chaosbench.prompts import (
    MAX_TOKENS,
    REPROMPT,
    SHIPPED_DATASET,
    PromptTemplate,
    own_cassette_dataset,
)
from pytest_reasoning_evals.chaosbench.questions import (
    Dialogue,
    Question,
    files_digest,
    group_dialogues,
    load_questions,
    sample,
    select,
    select_dialogues,
    unmatched_selection,
)
from pytest_reasoning_evals.chaosbench.records import ItemRecord, RecordPayload
from pytest_reasoning_evals.chaosbench.regression import BaselineError, compare, comparison_lines, load_baseline
from pytest_reasoning_evals.chaosbench.rows import compact
from pytest_reasoning_evals.chaosbench.scoring import failure_reason, score
from pytest_reasoning_evals.chaosbench.settings import DEFAULT_REPROMPT
from pytest_reasoning_evals.chaosbench.shortcut import SHORTCUT
from pytest_reasoning_evals.chaosbench.shortcut import answer as shortcut_answer
from pytest_reasoning_evals.chaosbench.terminal import markdown, summary_lines
from pytest_reasoning_evals.completions import CompletionsLog, CompletionsUnreadable, answered, load_completions
from pytest_reasoning_evals.estimate import CHARS_PER_TOKEN, LONGEST_REPLY, CallEstimate, chars_of
from pytest_reasoning_evals.gates import GateResult, compared, write_gates
from pytest_reasoning_evals.manifest import now, run_manifest, run_meta
from pytest_reasoning_evals.models import UsageProblem
from pytest_reasoning_evals.options import dataset_name, dataset_stem, folder_label
from pytest_reasoning_evals.protocol import UNKNOWN, WRONG, EvalProtocol, NotAskedPayload, send
from pytest_reasoning_evals.providers.base import Completion, Model, Request
from pytest_reasoning_evals.providers.fixed import register_answerer
from pytest_reasoning_evals.providers.wire import sent_temperature
from pytest_reasoning_evals.report import Written, write_run_report
from pytest_reasoning_evals.results import RunDirLock
from pytest_reasoning_evals.sampling import METHOD, ids_sha256
from pytest_reasoning_evals.shipped import shipped

ANSWERED_KEY = "chaosbench_answered"  # workerinput: ids a resumed run does not ask again


class Protocol(EvalProtocol):
    name = "chaosbench"

    def __init__(self, session):
        super().__init__(session)
        register_answerer(SHORTCUT, shortcut_answer)
        self.spent = 0.0  # controller: the live cost of this run's items (the budget's own count is the session's)
        self.unasked = 0.0  # ... of it, what was paid for no reply in a record (an item stopped or raised midway)
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

    # --- the run directory (keyed by model, mode and dataset) ---

    @functools.cached_property
    def dataset(self) -> str | None:
        """How the run directory names case files that are not the shipped bank (<stem>-<hash8>), else None."""
        if self.own.cases.resolve() == shipped("chaosbench").resolve():
            return None
        try:
            digest = self.cases_digest["sha256"]
        except (CaseFileError, OSError):
            digest = None  # collection reports it and the run writes nothing
        return dataset_name(self.own.cases, digest)

    @functools.cached_property
    def variant(self) -> str | None:
        """How the run directory names a prompt or option that is not the default one: <the prompt's
        folder, or "shipped">-<hash8> of what shapes the requests, so an edit runs beside the last
        run instead of over it; None for the shipped prompt with the mode's defaults."""
        # the team's answer words decide labels: a run with them is a configuration of its own
        shape = {**self.request_shape, **self.words_config}
        default = {
            "prompt_sha256": hashlib.sha256(self.shipped_prompt_text.encode("utf-8")).hexdigest(),
            "max_tokens": MAX_TOKENS[self.own.mode],
            "temperature": 0.0,
            "reprompt": DEFAULT_REPROMPT,
        }
        if shape == default:
            return None
        label = "shipped" if self.prompt_is_shipped else folder_label(self.own.prompts_dir.name, "prompt")
        label = self.own.profile if self.own.profile != DEFAULT_PROFILE else label
        return f"{label}-{hashlib.sha256(json.dumps(shape, sort_keys=True).encode()).hexdigest()[:8]}"

    @functools.cached_property
    def request_shape(self) -> dict:
        """What the requests are made of beside the model and the questions."""
        prompt = self.prompt
        return {
            "prompt_sha256": prompt.sha256,
            "max_tokens": prompt.answer_tokens,
            "temperature": prompt.temperature,
            "reprompt": self.own.reprompt,
            **self.profile_config,
        }

    @functools.cached_property
    def profile_config(self) -> dict:
        """{} for the harness profile (its configuration stays what it was), else the profile's name."""
        return {} if self.own.profile == DEFAULT_PROFILE else {"profile": self.own.profile}

    @functools.cached_property
    def run_dir(self) -> Path:
        """<out>/<model>_<mode>[_<cases>-<hash8>][_<prompt>-<hash8>][_shard<i>of<K>][-subset] (options.Settings.run_dir)."""
        return self.settings.run_dir(self.own.mode, self.dataset, self.variant)

    def sibling(self, variant: str | None = "", **changes) -> Path:
        """The run directory of this run with other settings (the whole run of a shard or subset);
        `variant` another prompt's part (None: the defaults')."""
        return self.settings._replace(**changes).run_dir(
            self.own.mode, self.dataset, self.variant if variant == "" else variant
        )

    @functools.cached_property
    def lock(self) -> RunDirLock:
        """One run at a time per run directory (results.py)."""
        return RunDirLock.for_session(self.session.config, self.run_dir)

    @functools.cached_property
    def checkpoints(self) -> Checkpoints:
        return Checkpoints(self.run_dir)

    @functools.cached_property
    def completions(self) -> CompletionsLog:
        return CompletionsLog(self.run_dir / "completions.jsonl")

    def hold_run_dir(self) -> None:
        """The lock, then: a run directory whose answers are of another model under this alias is
        not overwritten (checkpoints.check_identity), a usage error naming both (another prompt,
        option or dataset has a directory of its own); a resume checks the whole configuration
        itself (start)."""
        super().hold_run_dir()
        if self.own.resume:
            return
        try:
            self.checkpoints.check_identity(self.run_config())
        except ResumeError as exc:
            raise UsageProblem(str(exc)) from None

    # --- items (every process that collects) ---

    @functools.cached_property
    def prompt(self) -> PromptTemplate:
        try:
            s = self.settings
            dataset = self.cassette_dataset[0]
            if self.own.profile == "upstream":
                return UpstreamPrompt.make(self.own.max_tokens, s.temperature, dataset)
            return PromptTemplate.load(self.own.prompts_dir, self.own.mode, self.own.max_tokens, s.temperature, dataset)
        except (OSError, ValueError) as exc:
            raise UsageProblem(str(exc)) from None

    @functools.cached_property
    def cassette_dataset(self) -> tuple[str, str | None]:
        """What names the cassette folder (<it>-<mode>), and a note when older recordings decide it."""
        if self.dataset is None:
            return SHIPPED_DATASET, None
        try:
            ids = [item.id for items in self.sampled for item in items]
        except (CaseFileError, OSError):
            ids = []  # collection reports the broken file
        cassettes = self.settings.cassette_dir / self.settings.model
        return own_cassette_dataset(dataset_stem(self.own.cases), self.own.mode, cassettes, ids)

    @property
    def prompt_name(self) -> str:
        """Its folder's name (--eval-prompts); "shipped" for the shipped folder."""
        folder = self.own.prompts_dir
        return "shipped" if folder.resolve() == shipped("chaosbench", "prompts").resolve() else folder.name

    @functools.cached_property
    def shipped_prompt_text(self) -> str:
        """The shipped prompt of this mode ("" when it cannot be read)."""
        try:
            return (shipped("chaosbench", "prompts") / f"{self.own.mode}.txt").read_text(encoding="utf-8")
        except OSError:
            return ""

    @functools.cached_property
    def prompt_is_shipped(self) -> bool:
        """The prompt's text is the shipped one (written for ChaosBench's dynamical systems), wherever it was read from."""
        return self.prompt.text == self.shipped_prompt_text

    def _shipped_prompt_note(self) -> str | None:
        """One line when a team's own questions (families outside ChaosBench's) are asked with the
        shipped prompt, which tells the model they are about dynamical systems: silent otherwise."""
        own = sorted({r["family"] for r in self.records} - set(FAMILIES))
        if not own or not self.prompt_is_shipped:
            return None
        names = ", ".join(own[:5]) + (f" and {len(own) - 5} more" if len(own) > 5 else "")
        return (
            f"NOTE: these questions are not the ChaosBench bank (families: {names}) but are asked with the shipped "
            f"{self.own.mode} prompt, which says they are about dynamical systems; give your own prompt with "
            f"--eval-prompts (ini eval_prompts)"
        )

    @functools.cached_property
    def sampled(self) -> tuple[list[Question], list[Dialogue]]:
        """The selected questions and dialogues of every shard (--eval-split/-family, then the
        --eval-max-items sample); CaseFileError propagates."""
        s = self.settings
        loaded = load_questions(self.own.cases)
        problem = unmatched_selection(loaded, splits=list(self.own.splits), families=list(self.own.families))
        if problem:
            raise UsageProblem(problem)
        questions = select(loaded, splits=list(self.own.splits), families=list(self.own.families))
        dialogues = select_dialogues(
            group_dialogues(loaded), splits=list(self.own.splits), families=list(self.own.families)
        )
        if s.max_items is None:
            return questions, dialogues
        return sample(questions, dialogues, s.max_items, s.seed)

    @functools.cached_property
    def selection(self) -> tuple[list[Question], list[Dialogue]]:
        """This shard's part of the sampled items (all of them, unsharded)."""
        s = self.settings
        questions, dialogues = self.sampled
        if s.shard is not None:
            questions = [q for q in questions if s.in_shard(q.id)]
            dialogues = [d for d in dialogues if s.in_shard(d.id)]
        return questions, dialogues

    def parametrize(self, metafunc: pytest.Metafunc) -> None:
        self.session.models.preflight((self.settings.model,))  # unknown alias, missing key: stop here
        self.prompt  # noqa: B018 - a missing or broken prompt file stops collection too
        questions, dialogues = self.selection
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
        return (self.prompt.cassette_folder, value.id) if isinstance(value, (Question, Dialogue)) else None

    def placeholder(self, item: pytest.Item) -> bool:
        value = self.parameter(item)
        return value is not None and not isinstance(value, (Question, Dialogue))  # pytest's NOTSET

    def modify_items(self, items: list[pytest.Item]) -> list[pytest.Item]:
        """Drop what a resumed run has answered."""
        answered = self.answered_ids
        return [item for item in items if getattr(self.parameter(item), "id", None) in answered] if answered else []

    def model_for_items(self) -> Model:
        """The model under test on the session's call path (models.py): refused key stops all, a
        spent budget skips the running item (listed as not asked); while recording, the next
        questions' calls run ahead (--eval-concurrency) until the budget is spent."""
        model = self.session.models.get(self.settings.model)
        return model

    def runs_ahead(self, param_ids: set[str]) -> bool:
        """Questions run ahead, whatever a team named the test function that asks them."""
        return not param_ids.isdisjoint(question.id for question in self.selection[0])

    def ahead_request(self, item: pytest.Item) -> Request | None:
        """A question's request; None for a dialogue (its turns wait for the answers before them)."""
        params = getattr(item, "callspec", None)
        question = params.params.get("chaosbench_question") if params is not None else None
        return self.prompt.request(question) if isinstance(question, Question) else None

    def estimate(self, items: list[pytest.Item]) -> list[CallEstimate]:
        """A call per question and --eval-reprompt more (worst case: every reply unreadable, each
        reprompt's history holding the earlier replies as long as max_tokens allows); one per
        dialogue turn (turns are not reprompted; its history holds every earlier answer)."""
        prompt, alias = self.prompt, self.settings.model
        longest = CHARS_PER_TOKEN * prompt.answer_tokens
        reply = {"role": "assistant", "content": LONGEST_REPLY}
        calls = []

        def call(kind: str, request: Request) -> None:
            chars = chars_of(request.messages, longest)
            calls.append(CallEstimate(alias, kind, prompt.cassette_folder, chars, request.max_tokens))

        for item in items:
            value = self.parameter(item)
            if isinstance(value, Question):
                request = prompt.request(value, item_id=value.id)
                call("question", request)
                for _ in range(self.own.reprompt):
                    request = prompt.reprompt(request, LONGEST_REPLY)
                    call("reprompt", request)
            elif isinstance(value, Dialogue):
                history: tuple[dict, ...] = ()
                for turn in value.turns:
                    request = prompt.request(turn, item_id=value.id, history=history)
                    call("dialogue turn", request)
                    history = (*request.messages, reply)
        return calls

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

    # --- resume (controller) ---

    def start(self) -> None:
        if self.own.baseline is not None:  # before this run writes anything: the baseline may be its own run directory
            try:
                self.baseline = load_baseline(self.own.baseline)
            except BaselineError as exc:
                raise pytest.UsageError(str(exc)) from None
        if not self.own.resume:
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
        try:
            read = load_completions(self.completions.path)
        except CompletionsUnreadable as exc:
            raise pytest.UsageError(f"--eval-resume: {exc}") from None
        if read.unreadable:
            self.resume_notes.append(read.problem(self.completions.path))
        records = [r for r in read.records if answered(r)]
        try:
            questions, dialogues = self.selection
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
        return {ANSWERED_KEY: sorted(self.answered_ids)}

    # --- results (controller) ---

    def add(self, payload: RecordPayload | NotAskedPayload) -> None:
        if not self._begun:
            self._begin()
        if "not_asked" in payload:
            self.not_asked.append(payload["not_asked"])
            # a dialogue's turns paid before the budget stopped it
            self._charge_unasked(payload.get("calls", {}).get("spent", 0.0))
            return
        record = payload["record"]
        if self.count_harness_error(payload):  # its record is an error record: what its calls paid is in no reply
            self._charge_unasked(payload.get("calls", {}).get("spent", 0.0))
        self.lock.try_hold()  # under xdist the controller shares its workers' lock from the first result on
        self.completions.append(record)
        self.spent += live_cost(record)
        self.records.append(compact(record))  # what the summary needs; the texts are in completions.jsonl
        if self.checkpoints.record_added():
            self.completions.sync()
            self.checkpoints.write_progress(len(self.records), len(self.not_asked), self.spent)

    def _charge_unasked(self, paid: float) -> None:
        """What was paid for no record: items the budget stopped midway or that raised midway, calls
        made ahead for items that never ran."""
        self.unasked += paid
        self.spent += paid

    def _begin(self) -> None:
        """At the first result: the configuration the answers belong to, and the completions
        stream (starting with the resumed records)."""
        self._begun = True
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
            mode=self.own.mode,
            not_asked=self.not_asked,
            stopped=self.incomplete_reason(session),
        )
        # paid by calls made ahead for items that never ran (the run stopped first): in no record
        self._charge_unasked(self.session.unclaimed.get(s.model, 0.0))
        self.summary["cost_usd"] += self.unasked  # ... and by items the budget stopped midway
        dataset = self._dataset()
        calls = call_counts(self.records)
        meta = run_meta(
            model=s.model,
            mode=self.own.mode,
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
            spent_usd=self.spent,
        )
        self.gates = self._gates(self.summary)
        write_run_outputs(
            self.run_dir, self.records, self.summary, meta, self._manifest(dataset), completions=self.completions
        )
        write_gates(self.run_dir, self.gates)
        self.checkpoints.write_progress(len(self.records), len(self.not_asked), self.spent)
        self.html_report = write_run_report(self.run_dir, len(self.records), self.session.page_writer(self.name))
        return self.gates

    def judge_unrun(self) -> list[GateResult]:
        return self._gates(summarize([], model=self.settings.model, mode=self.own.mode), ran=False)

    def _gates(self, summary: dict, ran: bool = True) -> list[GateResult]:
        """All its verdicts; with a baseline, comparison.json first (the report reads it)."""
        o, s = self.own, self.settings
        failed: list[GateResult] = []
        # nothing ran: the last run's directory stays as it was
        if ran:
            self.comparison, failed = compared(
                self.run_dir,
                o.baseline,
                "baseline",
                "--eval-baseline",
                lambda: compare(
                    self.baseline or load_baseline(o.baseline),
                    self.records,
                    alpha=s.regression_alpha,
                    max_drop=o.max_accuracy_drop,
                ),
            )
        asked = o.baseline is not None and (s.fail_on_regression or o.max_accuracy_drop is not None)
        return (
            check_gates(
                summary,
                min_accuracy=o.min_accuracy,
                strict_items=o.strict_items,
                min_coverage=o.min_coverage,
                max_fol_violation_rate=o.max_fol_violation_rate,
                regression=(str(o.baseline), self.comparison) if asked and not failed else None,
            )
            + failed
        )

    def terminal(self) -> tuple[str, list[str]]:
        s = self.settings
        families = [name for name, d in self.summary["task_details"].items() if d["total"]]
        title = f"eval summary: {run_title(s.model, self.own.mode, families, self.own.cases.name)}" + (
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
            floor=self.shortcut_floor(),
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
        for note in (self._shipped_prompt_note(), self.cassette_dataset[1]):
            if note:
                lines.insert(lines.index(f"results: {self.run_dir}"), note)
        if s.subset:
            lines.append(
                f"subset run ({s.subset}): written beside the full run, whose results in "
                f"{self.sibling(subset=None, num_shards=None, shard_index=None)} are left untouched"
            )
        return title, lines

    def shortcut_floor(self) -> float | None:
        """The shortcut baseline's accuracy from its run directory for this mode, dataset and
        selection in the same out dir, when it has been run (and this run is not it)."""
        if self.settings.model == SHORTCUT:
            return None
        for folder in (self.sibling(model=SHORTCUT), self.sibling(None, model=SHORTCUT)):  # it reads no prompt
            try:
                accuracy = json.loads((folder / "summary.json").read_text(encoding="utf-8"))["overall_accuracy"]
            except (OSError, ValueError, TypeError, KeyError):
                continue
            return accuracy if type(accuracy) in (int, float) else None
        return None

    def markdown(self) -> str:
        return markdown(self.terminal()[0], self.summary, self.gates, self.comparison)

    # --- what the answers depend on ---

    @functools.cached_property
    def cases_digest(self) -> dict:
        """sha256 of the case files, read once per run (manifest, config hash, resume check)."""
        return files_digest(self.own.cases)

    @functools.cached_property
    def words_config(self) -> dict:
        """The team's own answer words (--eval-answer-words), when given: {} without them, so the
        configuration (its hash, a resume's check) of a run without them stays what it was."""
        words = self.own.answer_words
        if not (words.true or words.false):
            return {}
        return {"answer_words": {"TRUE": list(words.true), "FALSE": list(words.false)}}

    @functools.cached_property
    def answers_config(self) -> dict:
        """What decides the answers: model, prompt, data, selection, seed, answer words (not the shard)."""
        s = self.settings
        return {
            "model": self.session.models.spec(s.model).to_dict(),
            "mode": self.own.mode,
            "prompt_sha256": self.prompt.sha256,
            "max_tokens": self.prompt.answer_tokens,
            "temperature": self.prompt.temperature,
            "dataset_sha256": self.cases_digest["sha256"],
            "splits": list(self.own.splits),
            "families": list(self.own.families),
            "max_items": s.max_items,
            "seed": s.seed,
            "reprompt": self.own.reprompt,
            **self.words_config,
            **self.profile_config,
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
            "path": str(self.own.cases),
            "files": digest["files"],
            "total_questions": self.summary["total_questions"],
            "total_dialogues": self.summary["dialogue_details"]["total_dialogues"],
        }

    def _sample_record(self) -> dict | None:
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

    def _manifest(self, dataset: dict) -> dict:
        s = self.settings
        stamp = datetime.fromisoformat(self.started_at).strftime("%Y%m%d_%H%M%S")
        return run_manifest(
            run_id=f"{s.model}_{self.own.mode}_{stamp}",
            model_config={
                "model": s.model,
                **self.session.models.spec(s.model).to_dict(),
                "mode": self.own.mode,
                # what each request sent (temperature None: none is sent to this reasoning model)
                "max_tokens": self.prompt.answer_tokens,
                "temperature": sent_temperature(self.session.models.spec(s.model), self.prompt.temperature),
            },
            dataset=dataset,
            prompt={
                "name": self.prompt_name,  # what runs.html calls it
                "mode": self.own.mode,
                "path": str(self.prompt.path),
                "sha256": self.prompt.sha256,
                "text": self.prompt.text,
                "shipped_default": self.prompt_is_shipped,
                # an UNKNOWN answer asked again up to this many times, with this text
                "reprompt": {"times": self.own.reprompt, "text": REPROMPT},
                "profile": self.own.profile,  # --eval-profile: whose prompt, parser and reprompt
                **self.words_config,  # the team's answer words, read beside TRUE/FALSE/YES/NO
            },
            selection={
                "splits": list(self.own.splits),
                "families": list(self.own.families),
                "max_items": s.max_items,
                "sample": self._sample_record(),
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
                # where `reasoning-evals merge` puts the whole run of its shards
                "run_name": self.sibling(num_shards=None, shard_index=None).name,
            },
        )
