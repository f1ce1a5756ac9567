"""--eval-resume of a ChaosBench run: the answers an earlier run left in the run directory, checked
against this run's configuration and selection, kept, and not asked again."""

from __future__ import annotations

import pytest

from pytest_reasoning_evals.casefiles import CaseFileError
from pytest_reasoning_evals.chaosbench.checkpoints import ResumeError
from pytest_reasoning_evals.completions import CompletionsUnreadable, answered, load_completions
from pytest_reasoning_evals.errors import UsageProblem

ANSWERED_KEY = "chaosbench_answered"  # workerinput: ids a resumed run does not ask again


class Resume:
    """What the ChaosBench `protocol` (its facade) resumes: the controller reads, the workers are told."""

    def __init__(self, protocol):
        self.protocol = protocol
        self.answered_ids: frozenset[str] = frozenset(
            getattr(protocol.session.config, "workerinput", {}).get(ANSWERED_KEY, ())
        )
        self.notes: list[str] = []  # controller: what a resume could not use, one line each

    def identity_problem(self) -> str | None:
        """Why this run must not overwrite the answers in its run directory (those of another model
        under this alias: checkpoints.check_identity), or None; a resume checks the whole
        configuration itself (start)."""
        p = self.protocol
        if p.own.resume:
            return None
        try:
            p.answers.checkpoints.check_identity(p.configuration.run_config())
        except ResumeError as exc:
            return str(exc)
        return None

    def start(self) -> list[dict] | None:
        """Controller, before any item: with --eval-resume, the answered records of this run's
        selection (held run directory, matching configuration), else None."""
        p = self.protocol
        if not p.own.resume:
            return None
        try:
            p.directory.hold()  # before the answers of the run directory are read
        except UsageProblem as exc:
            raise pytest.UsageError(str(exc)) from None
        answers = p.answers
        if answers.checkpoints.config_file.exists() or answers.completions.path.exists():
            try:
                answers.checkpoints.check_config(p.configuration.run_config())
            except ResumeError as exc:
                raise pytest.UsageError(str(exc)) from None
        try:
            read = load_completions(answers.completions.path)
        except CompletionsUnreadable as exc:
            raise pytest.UsageError(f"--eval-resume: {exc}") from None
        if read.unreadable:
            self.notes.append(read.problem(answers.completions.path))
        records = self._selected([r for r in read.records if answered(r)])
        self.answered_ids = frozenset(r["id"] for r in records)
        return records

    def _selected(self, records: list[dict]) -> list[dict]:
        """Only this run's items: a record of anything else is neither counted nor kept (one note)."""
        try:
            questions, dialogues = self.protocol.selection.shard
        except CaseFileError:
            return records  # collection reports the bad case file and stops the session
        selected = {**{q.id: "question" for q in questions}, **{d.id: "dialogue" for d in dialogues}}
        foreign = [r for r in records if selected.get(r["id"]) != r.get("kind", "question")]
        if foreign:
            self.notes.append(
                f"{self.protocol.answers.completions.path}: {len(foreign)} record(s) of items outside this run's "
                f"selection ignored (first: {sorted(r['id'] for r in foreign)[0]!r}); not counted, and dropped when "
                f"the file is rewritten"
            )
        return [r for r in records if selected.get(r["id"]) == r.get("kind", "question")] if foreign else records

    def worker_input(self) -> dict:
        return {ANSWERED_KEY: sorted(self.answered_ids)}
