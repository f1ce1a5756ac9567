"""--eval-epochs K for the dialectic protocol: each epoch's response request, and the "epochs"
block of a variant (epoch_summary.py): the cases, not their epochs, are the units."""

from __future__ import annotations

import pytest

from pytest_reasoning_evals.dialectic.cases import Case, Variant
from pytest_reasoning_evals.dialectic.epoch_summary import epoch_block, epoch_line
from pytest_reasoning_evals.dialectic.runner import DialecticRunner, epoch_fields
from pytest_reasoning_evals.dialectic.settings import PASS_RULE
from pytest_reasoning_evals.epochs import expand

CASE = Case("decide", "ethics", "What should I do?", "dialectic")


def row(case_id: str, epoch: int, score: float | None) -> dict:
    return {"query_id": f"{case_id}-e{epoch:02d}", "case_id": case_id, "epoch": epoch, "score": score}


def test_epoch_one_sends_the_request_of_a_run_without_epochs_and_later_epochs_their_seed() -> None:
    runner = DialecticRunner(lambda alias: None, "fake", ())
    variant = Variant("dialectic", "Think in hypotheses.")
    once = runner.response_request(CASE, variant)
    first, second, third = (runner.response_request(case, variant) for case in expand([CASE], 3))
    assert first == once and (once.item_id, once.seed) == ("decide__dialectic", None)
    assert (second.item_id, second.seed) == ("decide-e02__dialectic", 1)
    assert (third.item_id, third.seed) == ("decide-e03__dialectic", 2)
    assert second.messages == once.messages
    assert epoch_fields(CASE) == {} and epoch_fields(expand([CASE], 3)[2]) == {"case_id": "decide", "epoch": 3}


def test_a_run_without_epochs_has_no_block() -> None:
    assert epoch_block([{"query_id": "a", "score": 80.0}], PASS_RULE) is None


def test_the_block_is_the_mean_per_case_pass_share_with_its_clustered_interval_and_the_agreement() -> None:
    rows = [
        row("a", 1, 80.0),
        row("a", 2, 75.0),  # a: both pass
        row("b", 1, 90.0),
        row("b", 2, 0.0),  # b: a hard fail scores 0: half pass
        row("c", 1, 10.0),
        row("c", 2, None),  # c: its second epoch was not judged and is left out: none pass
        row("d", 1, 40.0),
        row("d", 2, 70.0),  # d: a score at the pass rule's minimum passes: half pass
    ]
    block = epoch_block(rows, PASS_RULE)
    assert {k: block[k] for k in ("k", "cases", "pass_share", "agreement")} == {
        "k": 2,
        "cases": 4,
        "pass_share": 0.5,
        "agreement": 0.5,
    }
    spread = (1 / 6) ** 0.5 / 2  # the standard deviation of the shares (1, 0.5, 0, 0.5) over sqrt(4)
    assert block["pass_share_ci95"] == pytest.approx([0.5 - 1.959964 * spread, 0.5 + 1.959964 * spread])
    line = epoch_line({"variant": "dialectic", "model": "fake", "epochs": block})
    assert line == (
        "variant dialectic (fake): epochs 2 per case, 4 cases: judge pass share 50.0% [10.0%, 90.0%] "
        "(clustered by case), epochs agree on 50.0% of cases"
    )


def test_a_case_with_no_judged_epoch_is_left_out_and_one_case_has_no_interval() -> None:
    block = epoch_block([row("a", 1, 90.0), row("a", 2, 60.0), row("b", 1, None), row("b", 2, None)], PASS_RULE)
    assert (block["cases"], block["pass_share"], block["pass_share_ci95"], block["agreement"]) == (1, 0.5, None, 0.0)
    nothing = epoch_block([row("b", 1, None), row("b", 2, None)], PASS_RULE)
    assert (nothing["cases"], nothing["pass_share"], nothing["agreement"]) == (0, None, None)
    assert "judge pass share n/a (clustered by case), epochs agree on n/a" in epoch_line(
        {"variant": "v", "model": "m", "epochs": nothing}
    )
