"""EvalSession: the per-pytest-session state behind the plugin's hooks.

Workers and the controller each hold one. Workers load the items and call the model; the
controller receives every item's record through pytest's reports (with or without xdist),
and alone streams completions, writes checkpoints and the run outputs, and applies the gates.
"""

from __future__ import annotations

import functools
import hashlib
import json
import platform
import time
from datetime import datetime, timezone
from importlib import metadata

import pytest

from plugin.chaosbench.metrics import api_success_rate, call_counts, summarize
from plugin.chaosbench.prompts import PromptTemplate, suite_name
from plugin.chaosbench.questions import (CaseFileError, Dialogue, Question, files_digest, group_dialogues,
                                         load_questions, select, select_dialogues, shard_of)
from plugin.checkpoints import CHECKPOINT_EVERY, Checkpoints, ResumeError, answered, read_completions
from plugin.dialectic.cases import Case, Variant, load_cases, load_variants
from plugin.dialectic.summary import PassRule, terminal_lines, write_outputs
from plugin.gates import GateResult, check_dialectic_gates, check_gates
from plugin.guard import NOT_ASKED_KEY, Budget, CallGuard, StopOnRefusedKey, live_cost
from plugin.options import DEFAULT_VARIANT_PROMPTS, Settings, settings_from
from plugin.providers import AuthError, Model, build_model, check_can_run, default_record_mode
from plugin.registry import ModelSpec, RegistryError, load_registry, resolve
from plugin.report import summary_lines
from plugin.results import CompletionsLog, write_run_outputs

EVAL_SESSION = pytest.StashKey["EvalSession"]()
RECORD_KEY = "eval_record"  # the user_properties key that carries an item's record
ANSWERED_KEY = "eval_answered"  # workerinput key: ids a resumed run does not ask again
PACKAGES = ("pytest", "pytest-xdist", "vcrpy", "syrupy", "pytest-regressions", "requests", "PyYAML")
RESUMABLE_PARAMS = ("chaosbench_question", "chaosbench_dialogue")  # the items --resume can skip


def record_of(report: pytest.TestReport) -> dict | None:
    for key, value in report.user_properties:
        if key == RECORD_KEY:
            return value
    return None


def _property(report: pytest.TestReport, wanted: str):
    return next((value for key, value in report.user_properties if key == wanted), None)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _versions() -> dict[str, str | None]:
    found = {}
    for name in PACKAGES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = None
    return found


class EvalSession:
    def __init__(self, config: pytest.Config):
        self.config = config
        self.settings: Settings = settings_from(config)
        self.is_worker = hasattr(config, "workerinput")
        s = self.settings
        try:
            self.registry = load_registry(s.models_file)
            self.spec: ModelSpec = resolve(s.model, self.registry)
            self.record_mode = self.record_mode_for(self.spec)
            self.prompt = PromptTemplate.load(s.prompts_dir, s.mode)
            for alias in [s.model, *sorted({*s.judges, *s.compare_models} - {s.model})]:  # the model under test first
                spec = resolve(alias, self.registry)
                check_can_run(spec, s.cassette_dir, self.record_mode_for(spec))
        except (RegistryError, AuthError, OSError, ValueError) as exc:
            raise pytest.UsageError(str(exc)) from None
        self.checkpoints = Checkpoints(s.run_dir)
        self._guard: CallGuard | None = None
        self._models: dict[str, Model] = {}
        self._pytest_session: pytest.Session | None = None
        self._dialectic: tuple[list[Case], list[Variant]] | None = None
        self._dialectic_runner = None
        self.dialectic_records: list[dict] = []
        self.dialectic_summaries: dict | None = None
        self._items: tuple[list[Question], list[Dialogue]] | None = None
        self.records: list[dict] = []
        self.not_asked: list[str] = []
        self.harness_failures = 0
        self.spent = 0.0  # controller: live cost of every item reported this run
        self.started = time.monotonic()
        self.started_at = _now()
        self.gates: list[GateResult] = []
        self.summary: dict | None = None
        self.completions = CompletionsLog(s.run_dir / "completions.jsonl")
        self.answered_ids = self._answered_ids()
        self._begun = False

    def record_mode_for(self, spec: ModelSpec) -> str:
        """--record-mode, else replay when the model has cassettes and record when it has none."""
        return self.settings.record_mode or default_record_mode(spec, self.settings.cassette_dir)

    # --- items (every process) ---

    def _in_shard(self, item_id: str) -> bool:
        shard = self.settings.shard
        return shard is None or shard_of(item_id, shard[1]) == shard[0]

    def items(self) -> tuple[list[Question], list[Dialogue]]:
        """The selected questions and dialogues (--split, --family, --max-items, then the shard),
        loaded and selected once per process; CaseFileError propagates."""
        if self._items is None:
            self._items = self._select(load_questions(self.settings.cases))
        return self._items

    def _select(self, loaded: list[Question]) -> tuple[list[Question], list[Dialogue]]:
        s = self.settings
        questions = select(loaded, splits=list(s.splits), families=list(s.families))
        dialogues = select_dialogues(group_dialogues(loaded), splits=list(s.splits), families=list(s.families))
        if s.max_items is not None:
            questions = questions[: s.max_items]
            dialogues = dialogues[: max(0, s.max_items - len(questions))]
        return [q for q in questions if self._in_shard(q.id)], [d for d in dialogues if self._in_shard(d.id)]

    @property
    def guard(self) -> CallGuard:
        """The model (built once per process) behind the key and budget checks."""
        if self._guard is None:
            s = self.settings
            model = build_model(self.spec, seed=s.seed, cassette_dir=s.cassette_dir,
                                record_mode=self.record_mode, base_url=s.base_url)
            self._guard = CallGuard(StopOnRefusedKey(model, lambda: self._pytest_session),
                                    Budget(s.max_cost, self.checkpoints.budget_marker))
        return self._guard

    # --- dialectic items (every process) ---

    def dialectic_items(self) -> tuple[list[Case], list[Variant]]:
        """Cases and variants, loaded once (CaseFileError propagates)."""
        if self._dialectic is None:
            s = self.settings
            self._dialectic = (load_cases(s.dialectic_cases), load_variants(DEFAULT_VARIANT_PROMPTS, list(s.variants)))
        return self._dialectic

    def resolution_variant(self) -> Variant:
        """The variant the multi-turn and cross-provider items use: the first prompted one."""
        variants = self.dialectic_items()[1]
        return next((v for v in variants if v.system_prompt is not None), variants[0])

    def model_for(self, alias: str) -> Model:
        """Any model by alias, built once per process, behind the refused-key rule; --base-url
        applies to the model under test."""
        if alias not in self._models:
            s = self.settings
            if alias == s.model:
                self._models[alias] = self.guard.model
            else:
                spec = resolve(alias, self.registry)
                model = build_model(spec, seed=s.seed, cassette_dir=s.cassette_dir, record_mode=self.record_mode_for(spec))
                self._models[alias] = StopOnRefusedKey(model, lambda: self._pytest_session)
        return self._models[alias]

    @property
    def dialectic_runner(self):
        if self._dialectic_runner is None:
            from plugin.dialectic.runner import DialecticRunner

            self._dialectic_runner = DialecticRunner(self.model_for, self.settings.model, list(self.settings.judges))
        return self._dialectic_runner

    # --- resume ---

    def _answered_ids(self) -> frozenset[str]:
        """Controller: load what an earlier run answered (--resume); workers get the ids from it."""
        if self.is_worker:
            return frozenset(self.config.workerinput.get(ANSWERED_KEY, ()))
        if not self.settings.resume:
            return frozenset()
        if self.checkpoints.config_file.exists() or self.completions.path.exists():
            try:
                self.checkpoints.check_config(self.run_config())
            except ResumeError as exc:
                raise pytest.UsageError(str(exc)) from None
        self.records = [r for r in read_completions(self.completions.path) if answered(r)]
        return frozenset(r["id"] for r in self.records)

    # --- hooks (registered as a plugin object; each delegates) ---

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node) -> None:
        """xdist controller -> worker: the ids a resumed run must not ask again."""
        node.workerinput[ANSWERED_KEY] = sorted(self.answered_ids)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log):
        """With loadgroup, group a dialectic case's items ourselves (see plugin/grouping.py)."""
        if config.getvalue("dist") != "loadgroup":
            return None
        from plugin.grouping import CaseGroupScheduling, dialectic_groups

        try:
            groups = dialectic_groups(*self.dialectic_items())
        except CaseFileError:
            groups = {}  # the workers report the bad case file when they collect
        return CaseGroupScheduling(config, log, groups)

    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        """Deselect the items a resumed run already has, and the placeholder pytest makes for an
        empty parameter set (a bank with no dialogues, say), which would show as skipped."""
        keep, drop = [], []
        for item in items:
            params = getattr(item, "callspec", None)
            params = params.params if params else {}
            ids = [getattr(params.get(name), "id", None) for name in RESUMABLE_PARAMS]
            skip = item.get_closest_marker("skip")
            empty = skip is not None and str(skip.kwargs.get("reason", "")).startswith("got empty parameter set")
            (drop if empty or any(i in self.answered_ids for i in ids if i) else keep).append(item)
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = keep

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self._pytest_session = session
        if self.is_worker:
            return
        # vcrpy creates missing folders without exist_ok: two xdist workers recording their
        # first cassettes at once would race, so the controller creates them up front.
        if self.spec.provider != "baseline" and self.record_mode != "none":
            (self.settings.cassette_dir / self.spec.alias / suite_name(self.settings.mode)).mkdir(parents=True, exist_ok=True)
        self._make_dialectic_cassette_dirs()
        self.checkpoints.budget_marker.unlink(missing_ok=True)  # a new run has a new budget

    def _make_dialectic_cassette_dirs(self) -> None:
        from plugin.dialectic.runner import JUDGE_SUITE, RESOLUTION_SUITE, SUITE

        s = self.settings
        wanted = [(a, SUITE) for a in {s.model, *s.compare_models}] + [(a, x) for a in s.judges for x in (JUDGE_SUITE, RESOLUTION_SUITE)]
        for alias, suite in wanted:
            spec = resolve(alias, self.registry)
            if spec.provider != "baseline" and self.record_mode_for(spec) != "none":
                (s.cassette_dir / alias / suite).mkdir(parents=True, exist_ok=True)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.add_report(report)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.finish(session)

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if self.dialectic_summaries is not None:
            terminalreporter.write_sep("=", f"dialectic summary: {self.settings.model}")
            for line in terminal_lines(self.dialectic_summaries, self.settings.out_dir / "dialectic"):
                terminalreporter.write_line(line)
            for gate in self.gates if self.summary is None else []:
                terminalreporter.write_line(f"gate {gate.name}: {'passed' if gate.passed else 'FAILED'} ({gate.detail})")
        if self.summary is not None:
            s = self.settings
            title = f"eval summary: {s.model} ({s.mode})" + (f", shard {s.shard_index} of {s.num_shards}" if s.shard else "")
            terminalreporter.write_sep("=", title)
            for line in summary_lines(self.summary, self.gates, s.run_dir, calls=call_counts(self.records),
                                      resumed=len(self.answered_ids)):
                terminalreporter.write_line(line)

    # --- controller side ---

    def add_report(self, report: pytest.TestReport) -> None:
        if self.is_worker:
            return
        record = record_of(report) if report.when == "call" else None
        not_asked = _property(report, NOT_ASKED_KEY) if report.when == "call" else None
        if record is not None and record.get("suite") == "dialectic":
            self.dialectic_records.append(record)
            return
        if (record is not None or not_asked is not None) and not self._begun:
            self._begin()
        if record is not None:
            self.records.append(record)
            self.completions.append(record)
            self._spend(live_cost(record))
            if len(self.records) % CHECKPOINT_EVERY == 0:
                self.completions.sync()
                self.checkpoints.write_progress(len(self.records), len(self.not_asked), self.spent)
        elif not_asked is not None:
            self.not_asked.append(not_asked)
        elif report.failed:
            self.harness_failures += 1

    def _begin(self) -> None:
        """At the first eval item (sessions without one write nothing): the configuration the
        answers belong to, and the completions stream (starting with the resumed records)."""
        self._begun = True
        self.checkpoints.write_config(self.run_config())
        self.completions.start(self.records)

    def _spend(self, cost: float) -> None:
        self.spent += cost
        max_cost = self.settings.max_cost
        if max_cost is not None and self.spent >= max_cost and not self.checkpoints.budget_marker.exists():
            self.checkpoints.mark_budget_spent()

    def finish(self, session: pytest.Session) -> None:
        if self.is_worker:
            return
        s = self.settings
        if self.dialectic_records:
            rule = PassRule()
            self.dialectic_summaries = write_outputs(s.out_dir / "dialectic", self.dialectic_records, seed=s.seed, rule=rule)
            self.gates += check_dialectic_gates(self.dialectic_summaries["variants"], max_hard_fails=s.max_hard_fails,
                                                required=s.require_variant_pass)
        if self.records or self.not_asked:
            if not self._begun:
                self._begin()  # a resumed run with nothing left to ask
            self.summary = summarize(self.records, model=s.model, mode=s.mode, not_asked=self.not_asked)
            self.gates = check_gates(self.summary, min_accuracy=s.min_accuracy, strict_items=s.strict_items) + self.gates
            dataset = self._dataset()
            write_run_outputs(s.run_dir, self.records, self.summary, self._run_meta(dataset), self._manifest(dataset),
                              completions=self.completions)
            self.checkpoints.write_progress(len(self.records), len(self.not_asked), self.spent)
        if self.summary is not None or self.dialectic_summaries is not None:
            self._decide_exit_status(session)

    def _decide_exit_status(self, session: pytest.Session) -> None:
        """Wrong answers fail their items but not the session: gates and harness errors decide.
        A resumed run with nothing left to ask (every item deselected) is judged the same way."""
        settled = (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED, pytest.ExitCode.NO_TESTS_COLLECTED)
        if session.exitstatus not in settled or (session.exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED
                                                 and not self.answered_ids):
            return  # interrupted, internal or usage error: leave pytest's verdict
        failed = self.harness_failures > 0 or not all(g.passed for g in self.gates)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED if failed else pytest.ExitCode.OK

    def _num_workers(self) -> int:
        return int(self.config.getoption("numprocesses", None) or 0) or 1

    @functools.cached_property
    def cases_digest(self) -> dict:
        """sha256 of the case files, read once per run (manifest, config hash, resume check)."""
        return files_digest(self.settings.cases)

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

    @functools.cached_property
    def answers_config(self) -> dict:
        """What decides the answers: model, prompt, data, selection, seed (not the shard)."""
        s = self.settings
        return {
            "model": self.spec.to_dict(),
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
        return {**self.answers_config, "config_hash": self.config_hash, "shard": list(self.settings.shard or ()) or None}

    def _run_meta(self, dataset: dict) -> dict:
        calls = call_counts(self.records)
        return {
            "model": self.settings.model,
            "mode": self.settings.mode,
            "timestamp": self.started_at,
            "num_workers": self._num_workers(),
            "total_questions": self.summary["total_questions"],
            "total_dialogues": self.summary["dialogue_details"]["total_dialogues"],
            "num_items_no_gold": self.summary["num_items_no_gold"],
            "dataset_version": dataset["version"],
            "config_hash": self.config_hash,
            "execution_time_seconds": round(time.monotonic() - self.started, 3),
            "api_success_rate": api_success_rate(self.summary, calls),
            "calls": calls,
            "resumed_items": len(self.answered_ids),
            "max_cost_usd": self.settings.max_cost,
            "spent_usd": self.spent,
        }

    def _manifest(self, dataset: dict) -> dict:
        s = self.settings
        stamp = datetime.fromisoformat(self.started_at).strftime("%Y%m%d_%H%M%S")
        return {
            "run_id": f"{s.model}_{s.mode}_{stamp}",
            "model_config": {"model": s.model, **self.spec.to_dict(), "mode": s.mode, "temperature": 0.0},
            "dataset_config": dataset,
            "prompt": {"mode": s.mode, "path": str(self.prompt.path), "sha256": self.prompt.sha256},
            "selection": {"splits": list(s.splits), "families": list(s.families), "max_items": s.max_items},
            "environment": {
                "python_version": platform.python_version(),
                "platform": platform.platform(),
                "seed": s.seed,
                "packages": _versions(),
                "args": list(self.config.invocation_params.args),
            },
            "execution": {
                "num_workers": self._num_workers(),
                "sharded": s.shard is not None,
                "shard_index": s.shard_index,
                "num_shards": s.num_shards,
                "resumed_items": len(self.answered_ids),
                "start_time": self.started_at,
                "end_time": _now(),
                "config_hash": self.config_hash,
            },
        }
