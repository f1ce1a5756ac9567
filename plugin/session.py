"""EvalSession: the per-pytest-session state behind the plugin's hooks.

Workers and the controller each hold one. Workers load questions and call the model; the
controller receives every item's record through pytest's reports (with or without xdist),
and alone writes the run outputs and applies the gates.
"""

from __future__ import annotations

import hashlib
import json
import platform
import time
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

import pytest

from plugin.chaosbench.metrics import summarize
from plugin.chaosbench.prompts import PromptTemplate, suite_name
from plugin.chaosbench.questions import Question, files_digest, load_questions, select
from plugin.gates import GateResult, check_gates
from plugin.options import Settings, settings_from
from plugin.providers import AuthError, Model, build_model, check_can_run, default_record_mode
from plugin.registry import ModelSpec, RegistryError, load_registry, resolve
from plugin.report import summary_lines
from plugin.results import CompletionsLog, accuracy_table, overview_table, write_csv, write_json

EVAL_SESSION = pytest.StashKey["EvalSession"]()
RECORD_KEY = "eval_record"  # the user_properties key that carries an item's record
PACKAGES = ("pytest", "pytest-xdist", "vcrpy", "syrupy", "pytest-regressions", "requests", "PyYAML")


def record_of(report: pytest.TestReport) -> dict | None:
    for key, value in report.user_properties:
        if key == RECORD_KEY:
            return value
    return None


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
            self.spec: ModelSpec = resolve(s.model, load_registry(s.models_file))
            self.record_mode = s.record_mode or default_record_mode(self.spec, s.cassette_dir)
            check_can_run(self.spec, s.cassette_dir, self.record_mode)
            self.prompt = PromptTemplate.load(s.prompts_dir, s.mode)
        except (RegistryError, AuthError, OSError, ValueError) as exc:
            raise pytest.UsageError(str(exc)) from None
        self._model: Model | None = None
        self._questions: list[Question] | None = None
        self.records: list[dict] = []
        self.harness_failures = 0
        self.started = time.monotonic()
        self.started_at = _now()
        self.gates: list[GateResult] = []
        self.summary: dict | None = None
        self.completions = CompletionsLog(self.settings.run_dir / "completions.jsonl")

    # --- collection and items (every process) ---

    def questions(self) -> list[Question]:
        """The selected questions, loaded once per process (CaseFileError propagates)."""
        if self._questions is None:
            s = self.settings
            loaded = load_questions(s.cases)
            self._questions = select(loaded, splits=list(s.splits), families=list(s.families), max_items=s.max_items)
        return self._questions

    @property
    def model(self) -> Model:
        if self._model is None:
            s = self.settings
            self._model = build_model(self.spec, seed=s.seed, cassette_dir=s.cassette_dir,
                                      record_mode=self.record_mode, base_url=s.base_url)
        return self._model

    # --- hooks (registered as a plugin object; each delegates) ---

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        # vcrpy creates missing folders without exist_ok: two xdist workers recording their
        # first cassettes at once would race, so the controller creates them up front.
        if not self.is_worker and self.spec.provider != "baseline" and self.record_mode != "none":
            (self.settings.cassette_dir / self.spec.alias / suite_name(self.settings.mode)).mkdir(parents=True, exist_ok=True)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.add_report(report)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.finish(session)

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if self.summary is not None:
            terminalreporter.write_sep("=", f"eval summary: {self.settings.model} ({self.settings.mode})")
            for line in summary_lines(self.summary, self.gates, self.settings.run_dir):
                terminalreporter.write_line(line)

    # --- controller side ---

    def add_report(self, report: pytest.TestReport) -> None:
        if self.is_worker:
            return
        record = record_of(report) if report.when == "call" else None
        if record is not None:
            self.records.append(record)
            self.completions.append(record)
        elif report.failed:
            self.harness_failures += 1

    def finish(self, session: pytest.Session) -> None:
        if self.is_worker or not self.records:
            return
        s = self.settings
        self.summary = summarize(self.records, model=s.model, mode=s.mode)
        self.gates = check_gates(self.summary, min_accuracy=s.min_accuracy, strict_items=s.strict_items)
        self._write_outputs()
        self._decide_exit_status(session)

    def _decide_exit_status(self, session: pytest.Session) -> None:
        """Wrong answers fail their items but not the session: gates and harness errors decide."""
        if session.exitstatus not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
            return  # interrupted, internal or usage error: leave pytest's verdict
        failed = self.harness_failures > 0 or not all(g.passed for g in self.gates)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED if failed else pytest.ExitCode.OK

    def _write_outputs(self) -> None:
        run_dir = self.settings.run_dir
        run_dir.mkdir(parents=True, exist_ok=True)
        self.completions.finalize(self.records)
        write_json(run_dir / "summary.json", self.summary)
        dataset = self._dataset()
        config_hash = self._config_hash(dataset)
        write_json(run_dir / "run_meta.json", self._run_meta(dataset, config_hash))
        write_json(run_dir / "run_manifest.json", self._manifest(dataset, config_hash))
        write_csv(run_dir / "accuracy_by_task.csv", *accuracy_table(self.summary["task_details"]))
        write_csv(run_dir / "metrics_overview.csv", *overview_table(self.summary))

    def _num_workers(self) -> int:
        return int(self.config.getoption("numprocesses", None) or 0) or 1

    def _dataset(self) -> dict:
        digest = files_digest(self.settings.cases)
        return {
            "version": digest["sha256"][:12],
            "manifest_hash": digest["sha256"],
            "path": str(self.settings.cases),
            "files": digest["files"],
            "total_questions": len(self.records),
        }

    def _config_hash(self, dataset: dict) -> str:
        """What decides the answers: model, prompt, data, selection, seed."""
        s = self.settings
        config = {
            "model": self.spec.to_dict(),
            "mode": s.mode,
            "prompt_sha256": self.prompt.sha256,
            "dataset_sha256": dataset["manifest_hash"],
            "splits": s.splits,
            "families": s.families,
            "max_items": s.max_items,
            "seed": s.seed,
        }
        return hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()

    def _run_meta(self, dataset: dict, config_hash: str) -> dict:
        calls = len(self.records)
        return {
            "model": self.settings.model,
            "mode": self.settings.mode,
            "timestamp": self.started_at,
            "num_workers": self._num_workers(),
            "total_questions": self.summary["total_questions"],
            "num_items_no_gold": self.summary["num_items_no_gold"],
            "dataset_version": dataset["version"],
            "config_hash": config_hash,
            "execution_time_seconds": round(time.monotonic() - self.started, 3),
            "api_success_rate": (calls - self.summary["num_errors"]) / calls,
        }

    def _manifest(self, dataset: dict, config_hash: str) -> dict:
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
                "sharded": False,
                "start_time": self.started_at,
                "end_time": _now(),
                "config_hash": config_hash,
            },
        }
