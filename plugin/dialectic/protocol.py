"""The dialectic evaluation as a protocol of the session: its items (per case x variant one item
per rubric check; per case a resolution and a cross-provider item), their records, and on the
controller the outputs under <out>/<model>_dialectic[_<cases>-<hash8>][_e<K>]/, the opt-in gates and the terminal block.

Item ids are `<case>@<variant>`: every item of a case reads one generated response, so its
declaration groups them by case and the scheduler (grouping.py) keeps a case on one worker. Items carry the marker
`dialectic(case=..., variant=...)`. Under --eval-epochs K > 1 each case is asked once per epoch
(plugin/epochs.py): its items are `<case>-e0<e>@<variant>`, grouped by case and epoch.

--eval-max-items (a seeded sample of N cases, stratified by expected mode and category, as
ChaosBench's is by family and label) and shards (by case id) apply; --eval-family/--eval-split
are ChaosBench's and select no dialectic case out; a stopped run is resumed by its cassettes
(each paid call is recorded as it returns, so running again replays it and pays only the rest).
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from pytest_reasoning_evals import epochs
from pytest_reasoning_evals.casefiles import CaseFileError
from pytest_reasoning_evals.dialectic import checks
from pytest_reasoning_evals.dialectic.cases import Case, Variant, cases_sha256, load_cases, load_variants
from pytest_reasoning_evals.dialectic.gates import dialectic_gates
from pytest_reasoning_evals.dialectic.multiturn import MAX_TURNS
from pytest_reasoning_evals.dialectic.panel import PanelError, Seat, expand, seats
from pytest_reasoning_evals.dialectic.records import ItemRecord, PublicResponse, RecordPayload
from pytest_reasoning_evals.dialectic.regression import compare, comparison_lines, load_responses
from pytest_reasoning_evals.dialectic.run_meta import paid, run_meta
from pytest_reasoning_evals.dialectic.summary import cassette_miss_line, cassette_misses, terminal_lines, write_outputs
from pytest_reasoning_evals.errors import UsageProblem
from pytest_reasoning_evals.estimate import CallEstimate
from pytest_reasoning_evals.gates import GateResult, compared, gate_line
from pytest_reasoning_evals.manifest import now
from pytest_reasoning_evals.options import dataset_name
from pytest_reasoning_evals.protocol import EvalProtocol
from pytest_reasoning_evals.providers.base import Request
from pytest_reasoning_evals.report import Written
from pytest_reasoning_evals.results import write_json
from pytest_reasoning_evals.run_dir import RunDirectory
from pytest_reasoning_evals.sampling import stratified_sample
from pytest_reasoning_evals.shipped import shipped
from pytest_reasoning_evals.stash import WRONG, send

MAX_FILE_NAME = 255  # bytes in one file name (NAME_MAX of common file systems)


def _marks(case: Case, variant: Variant) -> list[pytest.MarkDecorator]:
    return [pytest.mark.dialectic(case=case.id, variant=variant.name)]


def _resolution(variants: list[Variant]) -> Variant:
    """The variant of the multi-turn and cross-provider items: the first prompted one."""
    return next((v for v in variants if v.system_prompt is not None), variants[0])


def _dataset(cases: Path) -> str | None:
    """The run directory's name for the case files: None for the shipped ones, else <cases>-<hash8>."""
    if cases.resolve() == shipped("dialectic").resolve():
        return None
    try:
        return dataset_name(cases, cases_sha256(cases))
    except (CaseFileError, OSError):
        return dataset_name(cases, None)  # collection reports it and the run writes nothing


class Protocol(EvalProtocol):
    name = "dialectic"

    def __init__(self, session):
        super().__init__(session)
        self.records: list[ItemRecord] = []
        self.not_asked = 0  # controller: items the spent budget skipped
        self.responses: dict[tuple, PublicResponse] = {}  # controller: each response as sent, by (case, variant, model)
        self._sent: set[tuple] = set()  # worker: responses already sent to the controller
        self.summaries: dict | None = None
        self.gates: list[GateResult] = []
        self.comparison: dict | None = None
        # controller: read at the start, before this run writes anything
        self.baseline: tuple[str, list[dict]] | None = None
        self.html_report: Written | None = None  # report.html, or why it was not written
        self.started_at = now()

    @functools.cached_property
    def directory(self) -> RunDirectory:
        """<out>/<model>_dialectic/, with _<cases>-<hash8> for case files that are not the shipped ones
        and _e<K> under --eval-epochs K > 1 (a run with epochs never replaces one without)."""
        s = self.settings
        epochs_part = f"e{s.epochs}" if s.epochs > 1 else None
        return RunDirectory(self.session, self.name, s.run_dir("dialectic", _dataset(self.own.cases), epochs_part))

    @property
    def run_dir(self) -> Path:
        return self.directory.path

    # --- items (every process that collects) ---

    @functools.cached_property
    def selection(self) -> tuple[list[Case], list[Variant]]:
        """Cases (the --eval-max-items sample, then the shard) and variants; CaseFileError propagates."""
        s = self.settings
        cases = load_cases(self.own.cases)
        if s.max_items is not None:
            # like ChaosBench's: seeded, stratified by expected mode, then by category
            cases = stratified_sample(
                cases, s.max_items, s.seed, (lambda c: c.expected_mode, lambda c: c.category), lambda c: c.id
            )
        if s.shard is not None:
            cases = [c for c in cases if s.in_shard(c.id)]
        variants = load_variants(self.own.variant_prompts, list(self.own.variants))
        self._check_name_lengths(cases, variants)
        return cases, variants

    def _check_name_lengths(self, cases: list[Case], variants: list[Variant]) -> None:
        """A case id and a variant name make cassette file names (runner.py): the longest must fit
        in a file name, or CaseFileError naming the case, instead of an OSError per item."""
        if not cases or not variants:
            return
        s = self.settings
        suffixes = [f"__{seat.alias}__judge{seat.number}" for seat in self.judges]
        suffixes += [f"__{s.model}__turn{MAX_TURNS}", f"__followup{MAX_TURNS}"]
        case = max(cases, key=lambda c: len(c.id.encode()))
        variant = max(variants, key=lambda v: len(v.name.encode()))
        named = epochs.epoch_id(case.id, s.epochs) if s.epochs > 1 else case.id  # the last epoch's cassettes
        longest = max(len(f"{named}__{variant.name}{suffix}.yaml".encode()) for suffix in suffixes)
        if longest > MAX_FILE_NAME:
            raise CaseFileError(
                f"{case.source}: case id {case.id!r} with variant {variant.name!r} makes cassette file "
                f"names of {longest} bytes (at most {MAX_FILE_NAME}); shorten the id or the variant's name"
            )

    @functools.cached_property
    def judges(self) -> tuple[Seat, ...]:
        """The judge panel's seats: --eval-judge-model (a judge panel's name expanded through the
        models file), --eval-n-judges and --eval-judge-temperature."""
        from pytest_reasoning_evals.registry import RegistryError

        o = self.own
        try:
            return seats(expand(o.judge_models, self.session.models.judge_panels), o.n_judges, o.judge_temperature)
        except RegistryError as exc:
            raise UsageProblem(str(exc)) from None
        except PanelError as exc:
            raise UsageProblem(f"--eval-judge-model: {exc}") from None

    @property
    def resolution_variant(self) -> Variant:
        """The variant the multi-turn and cross-provider items use: the first prompted one."""
        return _resolution(self.selection[1])

    def aliases(self) -> tuple[str, ...]:
        s = self.settings
        return (
            s.model,
            *sorted({*(seat.alias for seat in self.judges), *self.own.compare_models} - {s.model}),
        )  # the model under test first

    def parametrize(self, metafunc: pytest.Metafunc) -> None:
        self.session.models.preflight(self.aliases())
        if self.settings.batch:
            from pytest_reasoning_evals.batch.run import check_provider

            check_provider(self.session.models, self.settings.model)
        cases, variants = self.selection
        cases = epochs.expand(cases, self.settings.epochs)  # each case's items once per epoch (plugin/epochs.py)
        if self.runner is not None:
            self.directory.hold()  # before any item: a second run on this run directory stops here (baselines write nothing)
        if "dialectic_item" in metafunc.fixturenames:
            metafunc.parametrize(
                "dialectic_item",
                [pytest.param((c, v), id=f"{c.id}@{v.name}", marks=_marks(c, v)) for c in cases for v in variants],
            )
        if "dialectic_case" in metafunc.fixturenames:
            v = self.resolution_variant
            metafunc.parametrize(
                "dialectic_case", [pytest.param(c, id=f"{c.id}@{v.name}", marks=_marks(c, v)) for c in cases]
            )

    def groups(self, fixture: str) -> dict[str, str]:
        """By case (by case and epoch under --eval-epochs: an epoch's items read its own response): a
        check item per variant, a resolution or cross-provider item with the resolution variant. From
        the case and prompt files alone (no judge panel, no model): the controller of any xdist
        session asks; ids left out by a sample or shard are never collected."""
        variants = load_variants(self.own.variant_prompts, list(self.own.variants))
        variants = [_resolution(variants)] if fixture == "dialectic_case" and variants else variants
        cases = epochs.expand(load_cases(self.own.cases), self.settings.epochs)
        return {f"{c.id}@{v.name}": c.id for c in cases for v in variants}

    @functools.cached_property
    def runner(self):
        from pytest_reasoning_evals.dialectic.runner import DialecticRunner

        s = self.settings
        if self.session.models.spec(s.model).provider == "baseline":
            # oracle / always-true / random answer TRUE-FALSE questions; there is nothing to judge
            return None
        return DialecticRunner(self.session.models.get, s.model, self.judges, self.own.max_tokens, s.temperature)

    def send_record(self, node: pytest.Item, record: ItemRecord) -> None:
        """Send a check's record (with its response, the first time this process sends it); a
        check that does not pass fails its item with its one-line reason."""
        payload: RecordPayload = {"protocol": self.name, "record": record}
        key = tuple(record.get("response_key") or ())
        if key and key not in self._sent:
            self._sent.add(key)
            payload["response"] = checks.public(self.runner.cached(key))
        send(
            node,
            payload,
            [("eval_check", record["check"]), ("eval_passed", record["passed"])],
            failure=None if record["passed"] else record["reason"],
        )

    def teststatus(self, payload: RecordPayload):
        if "record" not in payload or payload["record"]["passed"] or self.session.config.option.verbose > 0:
            return None  # with -v, pytest's full failure section
        return WRONG, "F", "FAILED"

    def ahead_request(self, item: pytest.Item) -> Request | None:
        """A check item's (case, variant) response, unless this process has it already (a case's
        check items share one); judges and follow-ups need the answers, so they are asked in order."""
        value = self.parameter(item)
        if not isinstance(value, tuple) or self.runner is None or self.runner.has_response(*value):
            return None
        return self.runner.response_request(*value)

    def before_items(self, items: list[pytest.Item]) -> None:
        """--eval-batch: the responses, then their judges' calls and the resolution conversations'
        calls round by round, answered in batches (batching.py)."""
        if self.settings.batch:
            from pytest_reasoning_evals.dialectic.batching import batch_before_items

            batch_before_items(self, items)

    def before_collected(self, ids: list[str]) -> None:
        """--eval-batch under xdist (the controller): the same, from the collected ids."""
        if self.settings.batch:
            from pytest_reasoning_evals.dialectic.batching import batch_before_collected

            batch_before_collected(self, ids)

    def estimate(self, items: list[pytest.Item]) -> list[CallEstimate]:
        """Its responses, judge panels and resolutions' worst cases (runner.estimate_calls); with
        --eval-batch those batching.py sends in batches at the batch price."""
        from pytest_reasoning_evals.batch.run import PROVIDERS
        from pytest_reasoning_evals.dialectic.runner import estimate_calls

        if self.runner is None:
            return []
        values = [(self.parameter(item), item.fixturenames) for item in items]
        s, models = self.settings, self.session.models
        batchable = lambda alias: s.batch and models.spec(alias).provider in PROVIDERS  # noqa: E731
        # a rewrite asks the conversations live (batch_rounds.py)
        rewrite = any(models.record_mode_for(models.spec(a)) == "rewrite" for a in (s.model, self.judges[0].alias))
        return estimate_calls(
            self.runner,
            values,
            s.model,
            self.own.compare_models,
            lambda: self.resolution_variant,
            batchable,
            turns_in_batch=s.batch and not rewrite,
        )

    # --- results (controller) ---

    def start(self) -> None:
        """Before any item: the baseline (it may be this run's own directory, which the run rewrites)."""
        self.baseline = self.directory.previous(self.own.baseline, load_responses)

    def add(self, payload: RecordPayload) -> None:
        if "not_asked" in payload:  # skipped: the --eval-max-cost budget was spent
            self.not_asked += 1
            return
        if self.count_harness_error(payload):  # no record: only counted
            return
        record = payload["record"]
        self.directory.try_hold()
        if "response" in payload:
            self.responses[tuple(record["response_key"])] = payload["response"]
        self.records.append(record)

    def finish(self, session: pytest.Session) -> list[GateResult]:
        s = self.settings
        self.directory.try_hold()
        self.summaries = write_outputs(self.run_dir, self.records, self.responses, seed=s.seed, rule=self.own.pass_rule)
        self.gates = self._gates("; ".join(filter(None, (self.harness_note(), self._budget_note()))) or None)
        write_json(self.run_dir / "run_meta.json", run_meta(self, session))
        self.html_report = self.directory.close(self.gates, len(self.records))
        return self.gates

    def judge_unrun(self) -> list[GateResult]:
        return self._gates(None, ran=False)

    def _gates(self, harness_note: str | None, ran: bool = True) -> list[GateResult]:
        """All its verdicts; with a baseline, comparison.json first (the report reads it)."""
        o, s = self.own, self.settings
        failed: list[GateResult] = []
        # nothing ran: the last run's directory stays as it was
        if ran:
            self.comparison, failed = compared(
                self.run_dir,
                o.baseline,
                "dialectic-baseline",
                "--eval-dialectic-baseline",
                lambda: compare(
                    self.baseline or load_responses(o.baseline),
                    self.summaries["per_response"],
                    alpha=s.regression_alpha,
                ),
            )
        asked = o.baseline is not None and s.fail_on_regression
        variants = self.summaries["variants"] if ran else []
        return (
            dialectic_gates(
                list(self.responses.values()) if ran else [],
                self.records if ran else [],
                variants,
                max_hard_fails=o.max_hard_fails,
                required=o.require_variant_pass,
                rule=o.pass_rule,
                harness_note=harness_note,
                regression=(str(o.baseline), self.comparison, s.regression_alpha) if asked and not failed else None,
                max_failed_judge_share=o.max_failed_judge_share,
            )
            + failed
        )

    def _budget_note(self) -> str | None:
        n = self.not_asked
        return f"{n} item{'s' if n > 1 else ''} not asked (--eval-max-cost budget spent)" if n else None

    def incomplete_reason(self, session: pytest.Session) -> str | None:
        return self.directory.incomplete_reason(session, self.harness_note(), self._budget_note())

    def terminal(self) -> tuple[str, list[str]]:
        s = self.settings
        copies = self.runner and epochs.copies_warning(s.epochs, self.session.models.spec(s.model), s.temperature)
        lines = [f"WARNING {copies}"] if copies else []
        lines += terminal_lines(self.summaries, self.run_dir, paid(self))
        missed = cassette_miss_line(
            cassette_misses(list(self.responses.values()), self.records), self.session.end.record_command
        )
        lines += [missed] if missed else []
        if self.comparison is not None:
            lines += comparison_lines(self.comparison)
        lines += [gate_line(g) for g in self.gates]
        if self.html_report is not None:
            lines.append(self.html_report.note)
        if s.subset:
            lines.append(f"subset run ({s.subset}): written beside the full run's results")
        return f"dialectic summary: {s.model}", lines
