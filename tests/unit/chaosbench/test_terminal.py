"""The ChaosBench terminal block, built from data: the notes a run has are said before its results
line, and a block without notes is the lines it always was."""

from __future__ import annotations

from pathlib import Path

from pytest_reasoning_evals.chaosbench.metrics import summarize
from pytest_reasoning_evals.chaosbench.terminal import summary_lines
from pytest_reasoning_evals.gates import GateResult, gate_line


def test_the_notes_come_after_the_gates_and_before_the_results_line_and_the_report() -> None:
    summary = summarize([], model="fake", mode="zeroshot")
    gates = [GateResult("min-coverage", False, "coverage none (no answer), required >= 0.2")]
    notes = ["CASSETTE MISSES: 3 items have no matching cassette", "NOTE: these questions are not the bank"]
    plain = summary_lines(summary, gates, Path("out/fake_zeroshot"), report="report: out/fake_zeroshot/report.html")
    noted = summary_lines(
        summary, gates, Path("out/fake_zeroshot"), report="report: out/fake_zeroshot/report.html", notes=notes
    )
    assert plain[-3:] == [gate_line(gates[0]), "results: out/fake_zeroshot", "report: out/fake_zeroshot/report.html"]
    assert noted == [*plain[:-2], *notes, *plain[-2:]]
