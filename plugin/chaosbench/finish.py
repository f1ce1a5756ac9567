"""The end of a ChaosBench run on the controller: its summary, gates and output files
(outputs.py writes them), and the terminal block and its Markdown, built from them."""

from __future__ import annotations

import json
import time
from datetime import datetime

import pytest

from pytest_reasoning_evals.chaosbench.early_stop import decided_block, with_decision
from pytest_reasoning_evals.chaosbench.gates import check_gates
from pytest_reasoning_evals.chaosbench.metrics import api_success_rate, call_counts, summarize
from pytest_reasoning_evals.chaosbench.names import FAMILIES, run_title
from pytest_reasoning_evals.chaosbench.outputs import write_run_outputs
from pytest_reasoning_evals.chaosbench.prompts import REPROMPT
from pytest_reasoning_evals.chaosbench.regression import compare, comparison_lines, load_baseline
from pytest_reasoning_evals.chaosbench.shortcut import SHORTCUT
from pytest_reasoning_evals.chaosbench.terminal import markdown, summary_lines
from pytest_reasoning_evals.gates import GateResult, compared
from pytest_reasoning_evals.manifest import now, run_manifest, run_meta
from pytest_reasoning_evals.providers.wire import sent_temperature
from pytest_reasoning_evals.report import Written


class RunEnd:
    """What the ChaosBench `protocol` (its facade) ends its run with."""

    def __init__(self, protocol):
        self.protocol = protocol
        self.session, self.settings, self.own = protocol.session, protocol.settings, protocol.own
        self.summary: dict | None = None
        self.gates: list[GateResult] = []
        self.comparison: dict | None = None
        self.baseline: dict | None = None  # read at the start, before this run writes anything
        self.html_report: Written | None = None  # report.html, or why it was not written
        self.started_at = now()

    def finish(self, session: pytest.Session) -> list[GateResult]:
        p, s = self.protocol, self.settings
        answers = p.answers
        p.directory.try_hold()
        answers.begin()
        records = answers.records
        decision = p.early.decision if p.early is not None else None
        self.summary = summarize(
            records,
            model=s.model,
            mode=self.own.mode,
            not_asked=answers.not_asked,
            stopped=p.directory.incomplete_reason(session, p.harness_note()),
            decided=decided_block(decision, len(answers.not_asked), answers.paid(), len(records)),
        )
        # paid for no record's reply: calls made ahead for items that never ran, items stopped midway
        self.summary["cost_usd"] += answers.paid(for_no_record=True)
        dataset = self._dataset()
        calls = call_counts(records)
        meta = run_meta(
            model=s.model,
            mode=self.own.mode,
            started_at=self.started_at,
            num_workers=self.session.num_workers(),
            summary=self.summary,
            dataset_version=dataset["version"],
            config_hash=p.configuration.config_hash,
            execution_time_seconds=round(time.monotonic() - self.session.started, 3),
            api_success_rate=api_success_rate(self.summary, calls),
            calls=calls,
            resumed_items=len(p.resume.answered_ids),
            max_cost_usd=s.max_cost,
            spent_usd=answers.paid(),
        )
        self.gates = self.judge(self.summary)
        manifest = run_manifest_of(p, dataset, self.started_at)
        write_run_outputs(p.run_dir, records, self.summary, meta, manifest, completions=answers.completions)
        answers.write_progress()
        self.html_report = p.directory.close(self.gates, len(records))
        return self.gates

    def judge(self, summary: dict, ran: bool = True) -> list[GateResult]:
        """All its verdicts; with a baseline, comparison.json first (the report reads it)."""
        o, s = self.own, self.settings
        failed: list[GateResult] = []
        # nothing ran: the last run's directory stays as it was
        if ran:
            self.comparison, failed = compared(
                self.protocol.run_dir,
                o.baseline,
                "baseline",
                "--eval-baseline",
                lambda: with_decision(
                    compare(
                        self.baseline or load_baseline(o.baseline),
                        self.protocol.answers.records,
                        alpha=s.regression_alpha,
                        max_drop=o.max_accuracy_drop,
                    ),
                    summary.get("decided_early"),
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

    def judge_unrun(self) -> list[GateResult]:
        return self.judge(summarize([], model=self.settings.model, mode=self.own.mode), ran=False)

    def title(self) -> str:
        s = self.settings
        families = [name for name, d in self.summary["task_details"].items() if d["total"]]
        return f"eval summary: {run_title(s.model, self.own.mode, families, self.own.cases.name)}" + (
            f", shard {s.shard_index} of {s.num_shards}" if s.shard else ""
        )

    def terminal(self) -> tuple[str, list[str]]:
        p, s = self.protocol, self.settings
        lines = summary_lines(
            self.summary,
            self.gates,
            p.run_dir,
            calls=call_counts(p.answers.records),
            resumed=len(p.resume.answered_ids),
            comparison=comparison_lines(self.comparison) if self.comparison else [],
            report=self.html_report.note if self.html_report else None,
            floor=self.shortcut_floor(),
            notes=self._notes(),
        )
        notes = [*p.resume.notes, *filter(None, [p.configuration.epochs_warning()])]
        warnings = [f"WARNING {note}" for note in notes]
        subset = [
            f"subset run ({s.subset}): written beside the full run, whose results in "
            f"{p.configuration.sibling(subset=None, num_shards=None, shard_index=None)} are left untouched"
        ]
        return self.title(), [*warnings, *lines, *(subset if s.subset else [])]

    def markdown(self) -> str:
        return markdown(self.title(), self.summary, self.gates, self.comparison)

    def _notes(self) -> list[str]:
        """What the terminal says before the results line: the cassette misses and how to record
        them, the shipped prompt asked of a team's own questions, older recordings' folder."""
        misses = self.summary["errors_by_kind"]["cassette_miss"]
        records = self.protocol.answers.records
        missed = (
            f"CASSETTE MISSES: {misses} items have no matching cassette (a prompt, question or option "
            f"changed since the recording, they were never recorded, or their cassette could not be read); record them with: "
            f"{self.session.end.record_command(r.error for r in records if r.error)}"
        )
        notes = [
            missed if misses else None,
            self._shipped_prompt_note(),
            self.protocol.configuration.cassette_dataset[1],
        ]
        return [note for note in notes if note]

    def _shipped_prompt_note(self) -> str | None:
        """One line when a team's own questions (families outside ChaosBench's) are asked with the
        shipped prompt, which tells the model they are about dynamical systems: silent otherwise."""
        own = sorted({r.family for r in self.protocol.answers.records} - set(FAMILIES))
        if not own or not self.protocol.configuration.prompt_is_shipped:
            return None
        names = ", ".join(own[:5]) + (f" and {len(own) - 5} more" if len(own) > 5 else "")
        return (
            f"NOTE: these questions are not the ChaosBench bank (families: {names}) but are asked with the shipped "
            f"{self.own.mode} prompt, which says they are about dynamical systems; give your own prompt with "
            f"--eval-prompts (ini eval_prompts)"
        )

    def shortcut_floor(self) -> float | None:
        """The shortcut baseline's accuracy from its run directory for this mode, dataset and
        selection in the same out dir, when it has been run (and this run is not it)."""
        if self.settings.model == SHORTCUT:
            return None
        sibling = self.protocol.configuration.sibling
        for folder in (sibling(model=SHORTCUT), sibling(None, model=SHORTCUT)):  # it reads no prompt
            try:
                accuracy = json.loads((folder / "summary.json").read_text(encoding="utf-8"))["overall_accuracy"]
            except (OSError, ValueError, TypeError, KeyError):
                continue
            return accuracy if type(accuracy) in (int, float) else None
        return None

    def _dataset(self) -> dict:
        digest = self.protocol.configuration.cases_digest
        return {
            "version": digest["sha256"][:12],
            "manifest_hash": digest["sha256"],
            "path": str(self.own.cases),
            "files": digest["files"],
            "total_questions": self.summary["total_questions"],
            "total_dialogues": self.summary["dialogue_details"]["total_dialogues"],
        }


def run_manifest_of(protocol, dataset: dict, started_at: str) -> dict:
    """run_manifest.json of the ChaosBench `protocol`'s run (manifest.run_manifest)."""
    s, o, c = protocol.settings, protocol.own, protocol.configuration
    session, prompt = protocol.session, c.prompt
    spec = session.models.spec(s.model)
    stamp = datetime.fromisoformat(started_at).strftime("%Y%m%d_%H%M%S")
    return run_manifest(
        run_id=f"{s.model}_{o.mode}_{stamp}",
        model_config={
            "model": s.model,
            **spec.to_dict(),
            "mode": o.mode,
            # what each request sent (temperature None: none is sent to this reasoning model)
            "max_tokens": prompt.answer_tokens,
            "temperature": sent_temperature(spec, prompt.temperature),
        },
        dataset=dataset,
        prompt={
            "name": c.prompt_name,  # what runs.html calls it
            "mode": o.mode,
            "path": str(prompt.path),
            "sha256": prompt.sha256,
            "text": prompt.text,
            "shipped_default": c.prompt_is_shipped,
            # an UNKNOWN answer asked again up to this many times, with this text
            "reprompt": {"times": o.reprompt, "text": REPROMPT},
            "profile": o.profile,  # --eval-profile: whose prompt, parser and reprompt
            **c.words_config,  # the team's answer words, read beside TRUE/FALSE/YES/NO
        },
        selection={
            "splits": list(o.splits),
            "families": list(o.families),
            "max_items": s.max_items,
            "sample": protocol.selection.sample_record(),
            "subset": s.subset,
        },
        seed=s.seed,
        args=list(session.config.invocation_params.args),
        rootdir=session.config.rootpath,
        execution={
            "num_workers": session.num_workers(),
            "sharded": s.shard is not None,
            "shard_index": s.shard_index,
            "num_shards": s.num_shards,
            "resumed_items": len(protocol.resume.answered_ids),
            "start_time": started_at,
            "end_time": now(),
            "config_hash": c.config_hash,
            # where `reasoning-evals merge` puts the whole run of its shards
            "run_name": c.sibling(num_shards=None, shard_index=None).name,
        },
    )
