"""--eval-estimate (issue 28 item 6): a real pytest run against the fake server on 127.0.0.1
prints the selection's calls, tokens and dollars per protocol, sends nothing, writes nothing and
exits 0; the numbers are computed here from the prompts' lengths."""

from __future__ import annotations

import json
import math
import os
import shutil
import tracemalloc

import pytest
from helpers import (
    DEFAULT_PROMPTS,
    DEFAULT_VARIANT_PROMPTS,
    DIALECTIC_MODULE,
    EVAL_MODULE,
    FAKE_KEY_VAR,
    fake_run_args,
    four_questions,
    model_entry,
    models_yaml,
    small_bank,
)

from integration.test_dialectic_run import STRUCTURED, Scripted, cases_file
from integration.test_own_protocol import EXAMPLE, on_path
from pytest_reasoning_evals.chaosbench.prompts import REPROMPT, PromptTemplate
from pytest_reasoning_evals.chaosbench.regression import BASELINE_FORMAT
from pytest_reasoning_evals.dialectic import judge
from pytest_reasoning_evals.dialectic.cases import load_variants
from pytest_reasoning_evals.dialectic.multiturn import MAX_TURNS

PRICE_IN = 1000.0  # $ per 1M input tokens: the test's dollars are visible


def table(stdout: str) -> dict[tuple[str, str, str], tuple]:
    """(protocol, model, call) -> (calls, input tokens, output tokens, USD) of the printed block's
    rows (names left in their header's columns, four figures right)."""
    lines = stdout[stdout.index("eval estimate: no request sent, nothing written") :].splitlines()[1:]
    header = lines[0]
    assert header.split() == ["protocol", "model", "call", "calls", "input", "tokens", "output", "tokens", "USD"]
    model, call = header.index("model"), header.index("call ")
    found = {}
    for line in lines[1:]:
        if line.startswith("estimated:"):
            break
        parts = line[call:].rsplit(maxsplit=4)
        *kind, calls, input_tokens, output_tokens, usd = parts
        numbers = (int(n.replace(",", "")) for n in (calls, input_tokens, output_tokens))
        found[line[:model].strip(), line[model:call].strip(), " ".join(kind)] = (*numbers, usd)
    return found


FOUR = ("q-true-1", "q-true-2", "q-false-1", "q-false-2")  # four_questions' ids


def question_chars() -> list[int]:
    """The characters of the zero-shot prompt of each of four_questions' questions."""
    prompt = PromptTemplate.load(DEFAULT_PROMPTS, "zeroshot")
    return [len(prompt.render(f"Is system {i} deterministic?")) for i in FOUR]


def estimate(pytester, server, *args: str, tag: str = ""):
    pytester.makepyfile(test_chaosbench=EVAL_MODULE)
    run = fake_run_args(pytester, server.openai_base, four_questions(pytester), tag=tag, price_in=PRICE_IN)
    return pytester.runpytest(*run, "--eval-estimate", *args)


def test_the_estimate_sends_nothing_writes_nothing_and_prices_the_selection(pytester, server, monkeypatch):
    monkeypatch.delenv(FAKE_KEY_VAR)  # a key is not needed to price a run
    result = estimate(pytester, server, "--eval-reprompt", "0")
    assert result.ret == 0, result.stdout.str()
    assert server.requests == []
    assert not (pytester.path / "results").exists() and not (pytester.path / "cassettes").exists()
    input_tokens = round(sum(question_chars()) / 4)
    dollars = f"${input_tokens * PRICE_IN / 1e6:,.2f}"
    rows = table(result.stdout.str())
    assert rows["chaosbench", "fake", "question"] == (4, input_tokens, 4 * 64, dollars)
    assert rows["TOTAL", "", ""] == (4, input_tokens, 4 * 64, dollars)
    result.stdout.fnmatch_lines(
        [
            f"estimated: 4 calls, {input_tokens:,} input and 256 output tokens, {dollars} if every call is live*",
            "fake (fake-model, $1000 / $0 per 1M tokens in / out): input = prompt characters / 4 (no cassettes); "
            "output = max_tokens per call, the most it may bill",
        ]
    )


def test_with_batch_the_questions_are_priced_at_the_batch_price_and_reprompts_live(pytester, server):
    """--eval-batch sends each question's first request in a batch (half the list price for openai);
    a reprompt needs an answer first, so it stays live at the list price."""
    plain = table(estimate(pytester, server, "--eval-reprompt", "1").stdout.str())
    result = estimate(pytester, server, "--eval-reprompt", "1", "--eval-batch", tag="b")
    assert result.ret == 0, result.stdout.str()
    assert server.requests == []
    rows = table(result.stdout.str())
    input_tokens = round(sum(question_chars()) / 4)
    half = f"${input_tokens * PRICE_IN / 2 / 1e6:,.2f}"
    assert rows["chaosbench", "fake", "question at the batch price"] == (4, input_tokens, 4 * 64, half)
    assert ("chaosbench", "fake", "question") not in rows
    assert rows["chaosbench", "fake", "reprompt"] == plain["chaosbench", "fake", "reprompt"]  # live: list price
    assert plain["chaosbench", "fake", "question"] == (
        4,
        input_tokens,
        4 * 64,
        f"${input_tokens * PRICE_IN / 1e6:,.2f}",
    )
    result.stdout.fnmatch_lines(
        [
            "estimated: 8 calls, * if every call is sent (4 in a batch, at the batch price; a call replayed*",
            "fake (fake-model, $1000 / $0 per 1M tokens in / out, $500 / $0 at the batch price): *",
        ]
    )
    assert "at the batch price" not in estimate(pytester, server, "--eval-reprompt", "1").stdout.str()


def test_with_batch_dialogue_turns_are_priced_at_the_batch_price_unless_rewritten(pytester, server):
    """A dialogue's turns go in batches a round each (chaosbench/batching.py); a rewrite asks them live."""
    pytester.makepyfile(test_chaosbench=EVAL_MODULE)
    bank = small_bank(pytester.path / "talk.jsonl", dialogues=2, turns=3, questions=2)
    run = [*fake_run_args(pytester, server.openai_base, bank, price_in=PRICE_IN), "--eval-estimate", "--eval-batch"]
    rows = table(pytester.runpytest(*run).stdout.str())
    assert rows["chaosbench", "fake", "dialogue turn at the batch price"][0] == 2 * 3
    assert ("chaosbench", "fake", "dialogue turn") not in rows
    rewritten = table(pytester.runpytest(*run, "--eval-record-mode", "rewrite").stdout.str())
    assert rewritten["chaosbench", "fake", "dialogue turn"][0] == 2 * 3
    assert rewritten["chaosbench", "fake", "question at the batch price"][0] == 2


def test_the_estimate_counts_the_worst_case_reprompts(pytester, server):
    """Every question may be asked --eval-reprompt more times, each with the conversation so far:
    its prompt, a reply as long as max_tokens allows, and the reprompt."""
    result = estimate(pytester, server, "--eval-reprompt", "2")
    assert result.ret == 0, result.stdout.str()
    reply = "x" * 4 * 64
    first = [[{"role": "user", "content": "x" * chars}] for chars in question_chars()]
    chars = 0
    for messages in first:
        for _ in range(2):
            messages = [*messages, {"role": "assistant", "content": reply}, {"role": "user", "content": REPROMPT}]
            chars += sum(len(m["content"]) for m in messages)
    rows = table(result.stdout.str())
    assert rows["chaosbench", "fake", "reprompt"][:3] == (8, round(chars / 4), 8 * 64)
    assert rows["chaosbench", "all", ""][0] == 12


def test_the_estimate_takes_every_selection_option_and_max_tokens(pytester, server):
    result = estimate(pytester, server, "-k", "q-true", "--eval-max-tokens", "10", "-n", "2")
    assert result.ret == 0, result.stdout.str()
    assert server.requests == []
    input_tokens = round(sum(question_chars()[:2]) / 4)
    assert table(result.stdout.str())["chaosbench", "fake", "question"][:3] == (2, input_tokens, 20)


def test_the_estimate_takes_each_protocols_own_max_tokens(pytester, server):
    result = estimate(pytester, server, "--eval-max-tokens", "10", "--eval-chaosbench-max-tokens", "3")
    assert table(result.stdout.str())["chaosbench", "fake", "question"][:3][::2] == (4, 4 * 3)
    result = dialectic_estimate(pytester, server, "--eval-max-tokens", "10", "--eval-dialectic-max-tokens", "256")
    assert result.ret == 0, result.stdout.str()
    rows = table(result.stdout.str())
    assert (rows["dialectic", "fake", "response"][2], rows["dialectic", "fake", "follow-up"][2]) == (
        2 * 256,
        2 * (MAX_TURNS - 1) * 256,
    )


def test_with_cassettes_the_estimate_uses_the_models_recorded_tokens(pytester, server):
    server.usage.prompt, server.usage.completion = 30, 5
    pytester.makepyfile(test_chaosbench=EVAL_MODULE)
    recording = fake_run_args(pytester, server.openai_base, four_questions(pytester), price_in=PRICE_IN)
    assert pytester.runpytest(*recording).ret == 0
    asked = len(server.requests)

    result = estimate(pytester, server)
    assert result.ret == 0, result.stdout.str()
    assert len(server.requests) == asked  # nothing more
    # the same four prompts: 30 recorded tokens each, 5 completion tokens each
    assert table(result.stdout.str())["chaosbench", "fake", "question"][:3] == (4, 4 * 30, 4 * 5)
    assert "mean recorded completion tokens (bank-zeroshot 5.0)" in result.stdout.str()
    assert "4 recorded calls' tokens per character" in result.stdout.str()
    # a recording may not say more than this run's max_tokens lets a call bill
    capped = estimate(pytester, server, "--eval-max-tokens", "2")
    assert table(capped.stdout.str())["chaosbench", "fake", "question"][:3] == (4, 4 * 30, 4 * 2)


def dialectic_estimate(pytester, server, *args: str, provider: str = "openai_compatible"):
    """The estimate of the dialectic checks of two cases and their cross-provider item (fake, of
    `provider`, and other), judged by a panel of three."""
    server.responder = Scripted({"c1": STRUCTURED, "c2": STRUCTURED})
    pytester.makepyfile(test_dialectic=DIALECTIC_MODULE)
    fake = model_entry(server.openai_base, provider=provider, price_in=1000.0, price_out=2000.0)
    other = model_entry(
        server.openai_base,
        "other",
        model_id="other-model",
        price_in=4000.0,
        price_out=8000.0,
        reasoning=True,
        thinking_budget=100,
    )
    (pytester.path / "models.yaml").write_text(models_yaml(fake, other))
    cases = cases_file(pytester.path / "cases.yaml", ("c1", "dialectic"), ("c2", "dialectic"))
    return pytester.runpytest(
        "--eval-models-file",
        str(pytester.path / "models.yaml"),
        "--model",
        "fake",
        "--eval-dialectic-cases",
        str(cases),
        "--eval-variant",
        "dialectic",
        "--eval-judge-model",
        "fake",
        "--eval-n-judges",
        "3",
        "--eval-compare-models",
        "fake,other",
        "--eval-estimate",
        "-p",
        "no:cacheprovider",
        *args,
    )


def test_the_dialectic_estimate_counts_responses_judges_resolution_turns_and_follow_ups(pytester, server):
    result = dialectic_estimate(pytester, server)
    assert result.ret == 0, result.stdout.str()
    assert server.requests == []
    rows = table(result.stdout.str())
    (variant,) = load_variants(DEFAULT_VARIANT_PROMPTS, ["dialectic"])
    chars = sum(sum(len(m["content"]) for m in variant.messages(f"What should I do about {c}?")) for c in ("c1", "c2"))
    # a response per case and model: the checks' and the cross-provider item's share fake's
    assert rows["dialectic", "fake", "response"][:3] == (2, round(chars / 4), 2 * 512)
    # a reasoning model may bill its thinking budget too
    assert rows["dialectic", "other", "response"][:3] == (2, round(chars / 4), 2 * (512 + 100))
    # three seats judge each of the two models' responses to each case, worst case replies of 512 tokens
    judged = [judge.prompt(f"What should I do about {c}?", "x" * 4 * 512) for c in ("c1", "c2")]
    chars = sum(len(m["content"]) for messages in judged for m in messages)
    assert rows["dialectic", "fake", "judge"][:3] == (3 * 2 * 2, round(3 * 2 * chars / 4), 3 * 2 * 2 * judge.MAX_TOKENS)
    # never resolved: MAX_TURNS resolution turns and a follow-up between each two, per case
    assert rows["dialectic", "fake", "resolution turn"][0] == 2 * MAX_TURNS
    assert rows["dialectic", "fake", "follow-up"][0] == 2 * (MAX_TURNS - 1)
    total = 2 + 2 + 12 + 2 * MAX_TURNS + 2 * (MAX_TURNS - 1)
    assert rows["dialectic", "all", ""][0] == total
    assert rows["TOTAL", "", ""][0] == total


def test_with_batch_every_dialectic_call_is_priced_at_the_batch_price_and_the_turns_live_under_a_rewrite(
    pytester, server
):
    """--eval-batch sends the responses (the model under test's and the compared models'), then their
    judges' calls and the resolution turns and follow-ups round by round, in batches
    (dialectic/batching.py); a rewrite asks the conversations live."""
    plain = table(dialectic_estimate(pytester, server, provider="openai").stdout.str())
    result = dialectic_estimate(pytester, server, "--eval-batch", provider="openai")
    assert result.ret == 0, result.stdout.str()
    rows = table(result.stdout.str())
    batched = lambda alias, kind: rows["dialectic", alias, f"{kind} at the batch price"]  # noqa: E731
    assert batched("fake", "response")[:3] == plain["dialectic", "fake", "response"][:3]  # the same two responses
    assert batched("other", "response")[:3] == plain["dialectic", "other", "response"][:3]  # a cross-provider item's
    assert (
        batched("fake", "judge")[:3] == plain["dialectic", "fake", "judge"][:3]
    )  # three seats on both models' responses
    for kind in ("resolution turn", "follow-up"):
        assert batched("fake", kind)[:3] == plain["dialectic", "fake", kind][:3]
    assert [key for key in rows if key[0] == "dialectic" and key[1] != "all" and "batch" not in key[2]] == []
    dollars = lambda cell: float(cell[-1].lstrip("$").replace(",", ""))  # noqa: E731
    assert dollars(batched("fake", "response")) == pytest.approx(
        dollars(plain["dialectic", "fake", "response"]) / 2, rel=0.01
    )
    assert rows["TOTAL", "", ""][0] == plain["TOTAL", "", ""][0]  # the same calls, cheaper

    rewritten = table(
        dialectic_estimate(
            pytester, server, "--eval-batch", "--eval-record-mode", "rewrite", provider="openai"
        ).stdout.str()
    )
    for kind in ("resolution turn", "follow-up"):
        assert rewritten["dialectic", "fake", kind] == plain["dialectic", "fake", kind]
    assert rewritten["dialectic", "fake", "response at the batch price"] == batched("fake", "response")


def traced(run) -> tuple[pytest.RunResult, int]:
    """A run's result and the most bytes Python held at once while it ran."""
    tracemalloc.start()
    try:
        return run(), tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_the_longest_replies_are_counted_not_built(pytester, server):
    """At --eval-max-tokens 1,000,000 (the bound) a worst-case reply is 4,000,000 characters: the
    reprompts' histories, the judges' prompts and the resolution turns count them without building
    them (a string as long as max_tokens allows once took 4 GB at 1e9)."""
    tokens = 1_000_000
    estimate(pytester, server, "--eval-reprompt", "2")  # imports and caches: not what is measured
    small, small_peak = traced(lambda: estimate(pytester, server, "--eval-reprompt", "2", "--eval-max-tokens", "1"))
    large, large_peak = traced(
        lambda: estimate(pytester, server, "--eval-reprompt", "2", "--eval-max-tokens", str(tokens))
    )
    assert small.ret == large.ret == 0, large.stdout.str()
    assert large_peak - small_peak < 2**20, (small_peak, large_peak)
    reply = 4 * tokens
    # each question's two reprompts: the prompt and one reply, then the prompt and two replies
    chars = sum(2 * q + 3 * reply + 3 * len(REPROMPT) for q in question_chars())
    assert table(large.stdout.str())["chaosbench", "fake", "reprompt"][:3] == (8, round(chars / 4), 8 * tokens)

    dialectic_estimate(pytester, server)
    small, small_peak = traced(lambda: dialectic_estimate(pytester, server, "--eval-max-tokens", "1"))
    large, large_peak = traced(lambda: dialectic_estimate(pytester, server, "--eval-max-tokens", str(tokens)))
    assert small.ret == large.ret == 0, large.stdout.str()
    assert large_peak - small_peak < 2**20, (small_peak, large_peak)
    judged = [judge.prompt(f"What should I do about {c}?", "") for c in ("c1", "c2")]
    chars = sum(len(m["content"]) for messages in judged for m in messages) + 2 * reply
    assert table(large.stdout.str())["dialectic", "fake", "judge"][:2] == (12, round(3 * 2 * chars / 4))
    follow_ups = table(large.stdout.str())["dialectic", "fake", "follow-up"]
    assert follow_ups[2] == 2 * (MAX_TURNS - 1) * tokens and follow_ups[1] > 2 * (MAX_TURNS - 1) * tokens


# the child pytest's address space is capped a little above what it has: a regression that reads
# /dev/zero fails with MemoryError instead of filling the machine's memory
MEMORY_CAP = """
import resource
import re
from pathlib import Path

size = int(re.search(r"VmSize:\\s+(\\d+) kB", Path("/proc/self/status").read_text())[1]) * 1024
resource.setrlimit(resource.RLIMIT_AS, (size + 2**31, resource.getrlimit(resource.RLIMIT_AS)[1]))
"""


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda path: path.symlink_to("/dev/zero"), "not a regular file"),
        (lambda path: os.mkfifo(path), "not a regular file"),
        (lambda path: path.write_text("interactions: [\n"), "not a readable cassette (*Error)"),
    ],
    ids=["dev-zero-link", "fifo", "damaged"],
)
def test_a_sampled_cassette_that_cannot_be_read_is_skipped_with_a_warning(pytester, server, make, reason):
    """The estimate reads cassettes as a replay does: a link to /dev/zero is not read (it would
    fill memory), a FIFO is not waited on; the line names the file and the estimate goes on by the
    rule of thumb. In a child pytest with a timeout, so a regression fails this test, not the suite."""
    pytester.makepyfile(test_chaosbench=EVAL_MODULE)
    pytester.makeconftest(MEMORY_CAP)
    run = fake_run_args(pytester, server.openai_base, four_questions(pytester), price_in=PRICE_IN)
    folder = pytester.path / "cassettes" / "fake" / "bank-zeroshot"
    folder.mkdir(parents=True)
    make(folder / "q-true-1.yaml")
    result = pytester.runpytest_subprocess(*run, "--eval-estimate", "--eval-reprompt", "0", timeout=60)
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines([f"warning: cassette {folder / 'q-true-1.yaml'} skipped: {reason}"])
    input_tokens = round(sum(question_chars()) / 4)
    assert table(result.stdout.str())["chaosbench", "fake", "question"][:3] == (4, input_tokens, 4 * 64)
    assert server.requests == []


@pytest.mark.slow
def test_a_protocol_without_an_estimate_says_so(pytester, monkeypatch):
    shutil.copytree(EXAMPLE, pytester.path, dirs_exist_ok=True, ignore=shutil.ignore_patterns("results", "*.egg-info"))
    site = on_path(pytester, monkeypatch, "shortanswer", "shortanswer:PROTOCOL")
    shutil.move(pytester.path / "shortanswer", site / "shortanswer")
    result = pytester.runpytest_subprocess("--eval-estimate")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["shortanswer*(its protocol gives no estimate)"])
    assert not (pytester.path / "results").exists()


def test_the_estimate_says_what_change_the_selection_can_detect_and_what_a_named_one_needs(pytester, server):
    """Issue 42: the paired change a comparison of the selected questions could detect (80% power,
    the gate's alpha), from a stated default or from --eval-baseline, and --eval-detect's questions."""
    plain = estimate(pytester, server, "--eval-regression-alpha", "0.1")
    assert plain.ret == 0, plain.stdout.str()
    z = 1.6448536 + 0.8416212  # alpha 0.1 two-sided, 80% power
    plain.stdout.fnmatch_lines(
        [
            f"detectable: a paired comparison of these 4 questions detects an accuracy change of about "
            f"{min(1.0, z * math.sqrt(0.2 / 4)):.1%} or more (80% power, alpha 0.1, discordance 0.20: a default*"
        ]
    )
    baseline = pytester.path / "baseline.json"
    items = {i: {"correct": i.startswith("q-true"), "failed": False, "gold": True} for i in FOUR}
    baseline.write_text(
        json.dumps(
            {
                "format": BASELINE_FORMAT,
                "items": {k: v | {"family": "atomic", "split": "core"} for k, v in items.items()},
            }
        )
    )
    named = estimate(pytester, server, f"--eval-baseline={baseline}", "--eval-detect", "0.05", tag="b")
    assert named.ret == 0, named.stdout.str()
    needed = math.ceil((1.959964 + 0.8416212) ** 2 * 0.5 / 0.05**2)  # accuracy 1/2: discordance 2 p (1 - p)
    named.stdout.fnmatch_lines(
        [
            "detectable: * (80% power, alpha 0.05, discordance 0.50: from *baseline.json: accuracy 50.0% on 4 of these questions)",
            f"to detect a change of 5.0%: about {needed:,} questions at that discordance (more than the 4 selected)",
        ]
    )
    refused = estimate(pytester, server, "--eval-detect", "0", tag="c")
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    refused.stderr.fnmatch_lines(["*--eval-detect must be an accuracy change in (0, 1], got 0*"])
