"""Every record a replayed run builds has the shape its protocol's records.py declares: exactly
the TypedDict's required keys plus some of its optional ones, each value of the annotated type.
A builder that adds or drops a key without updating its TypedDict fails here.

The runs replay the committed cassettes; a conftest in the run's folder writes each item's
payload (and, for a dialectic check, the worker-side response it checked) as JSON lines, since
those never reach a file of the run directory."""

from __future__ import annotations

import json
import types
from pathlib import Path
from typing import Literal, Union, get_args, get_origin, get_type_hints, is_typeddict

import pytest
from helpers import DIALECTIC_MODULE, add_eval_module, run_dir, use_repo_cassettes

from pytest_reasoning_evals.chaosbench import records as chaosbench
from pytest_reasoning_evals.chaosbench.dialogues import NOT_ASKED
from pytest_reasoning_evals.dialectic import records as dialectic
from pytest_reasoning_evals.options import DEFAULT_MODEL
from pytest_reasoning_evals.stash import NotAskedPayload

SEEN = "seen.jsonl"
# Each item's payload as the controller receives it, before the session consumes it.
RECORDER = f"""
import json

import pytest

from pytest_reasoning_evals.stash import payload_of
from pytest_reasoning_evals.session import EVAL_SESSION

CONFIG = []


def pytest_configure(config):
    CONFIG.append(config)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_logreport(report):
    payload = payload_of(report) if report.when == "call" else None
    if payload is not None:
        seen = {{"payload": payload}}
        key = (payload.get("record") or {{}}).get("response_key")
        if key:
            runner = CONFIG[0].stash[EVAL_SESSION].protocol("dialectic").runner
            seen["response"] = runner.cached(tuple(key))
        with open({SEEN!r}, "a", encoding="utf-8") as out:
            out.write(json.dumps(seen) + "\\n")
    return (yield)
"""

# The first two questions of every family and two dialogues (the bank lists questions first, so
# --eval-max-items alone selects no dialogue).
CHAOSBENCH_ITEMS = "00001 or 00002 or dlg-0001 or dlg-0002"
MISSED_ITEMS = "adversarial-00050 or dlg-0010"
DIALECTIC_CHECKS = {
    "structure": dialectic.ResponseCheckRecord,
    "pcc": dialectic.ResponseCheckRecord,
    "mode": dialectic.ResponseCheckRecord,
    "judge": dialectic.JudgeCheckRecord,
    "resolution": dialectic.ResolutionCheckRecord,
    "cross_provider": dialectic.CrossProviderCheckRecord,
}


def problems(value, annotation, where: str) -> list[str]:
    """How `value` (read from JSON) differs from `annotation`: [] when it fits."""
    if is_typeddict(annotation):
        if not isinstance(value, dict):
            return [f"{where}: {value!r:.60} is not an object ({annotation.__name__})"]
        hints = get_type_hints(annotation)
        out = [
            f"{where}: no key {k!r} ({annotation.__name__})" for k in sorted(annotation.__required_keys__ - set(value))
        ]
        out += [f"{where}: key {k!r} not in {annotation.__name__}" for k in sorted(set(value) - set(hints))]
        for key in sorted(set(value) & set(hints)):
            out += problems(value[key], hints[key], f"{where}.{key}")
        return out
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Literal:
        return [] if value in args else [f"{where}: {value!r:.60} is not one of {args}"]
    if origin in (Union, types.UnionType):
        found = [problems(value, arg, where) for arg in args]
        return [] if [] in found else min(found, key=len)
    if origin is list:
        if not isinstance(value, list):
            return [f"{where}: {value!r:.60} is not a list"]
        return [p for i, item in enumerate(value) for p in problems(item, args[0], f"{where}[{i}]")]
    if origin is dict:
        if not isinstance(value, dict):
            return [f"{where}: {value!r:.60} is not an object"]
        return [p for k, item in value.items() for p in problems(item, args[1], f"{where}[{k!r}]")]
    if annotation is type(None):
        return [] if value is None else [f"{where}: {value!r:.60} is not null"]
    if annotation is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif annotation is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif annotation in (str, bool):
        ok = isinstance(value, annotation)
    else:
        raise TypeError(f"{where}: no check for {annotation!r}")
    return [] if ok else [f"{where}: {value!r:.60} is not {annotation.__name__}"]


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def assert_shapes(checked: list[tuple[object, object, str]]) -> None:
    found = [p for value, annotation, where in checked for p in problems(value, annotation, where)]
    assert not found, "\n".join(found[:20])


def test_the_checker_catches_an_added_a_dropped_and_a_mistyped_key() -> None:
    good = {"name": "Chaotic", "polarity": "positive"}
    assert problems(good, chaosbench.Predicate, "p") == []
    assert problems({**good, "extra": 1}, chaosbench.Predicate, "p") == ["p: key 'extra' not in Predicate"]
    assert problems({"name": "Chaotic"}, chaosbench.Predicate, "p") == ["p: no key 'polarity' (Predicate)"]
    assert problems({**good, "polarity": "maybe"}, chaosbench.Predicate, "p") == [
        "p.polarity: 'maybe' is not one of ('positive', 'negative')"
    ]
    # optional keys may be absent; a bool is not a number
    assert problems({"protocol": "dialectic", "record": 1}, dialectic.RecordPayload, "r") != []
    assert problems(True, float, "x") == ["x: True is not float"]
    assert problems(3, float | None, "x") == []


@pytest.mark.slow
def test_chaosbench_records_have_their_declared_shapes(pytester) -> None:
    add_eval_module(pytester)
    pytester.makeconftest(RECORDER)
    result = pytester.runpytest_subprocess("-k", CHAOSBENCH_ITEMS, "-p", "no:cacheprovider")
    assert result.ret == 0, result.stdout.str()
    assert "cassette miss" not in result.stdout.str()
    # failed calls: chain-of-thought has no cassette of these, so a dialogue's later turns are not asked
    misses = ("--eval-mode", "cot", "-k", MISSED_ITEMS, "--eval-base-url", "http://127.0.0.1:9/v1")
    result = pytester.runpytest_subprocess(*misses, "-p", "no:cacheprovider")
    assert result.ret == 1 and "gate failed-calls: FAILED" in result.stdout.str(), result.stdout.str()

    written = lines(run_dir(pytester, DEFAULT_MODEL, subset=True) / "completions.jsonl")
    missed = lines(run_dir(pytester, DEFAULT_MODEL, "cot", subset=True) / "completions.jsonl")
    payloads = [seen["payload"] for seen in lines(pytester.path / SEEN)]
    kinds = [r.get("kind", "question") for r in written + missed]
    assert (kinds.count("question"), kinds.count("dialogue"), len(payloads)) == (21, 3, 24)
    assert [t["error"] == NOT_ASKED for t in missed[1]["turns"]] == [False, True, True, True]
    assert_shapes(
        [
            (r, chaosbench.DialogueRecord if r.get("kind") == "dialogue" else chaosbench.QuestionRecord, r["id"])
            for r in written + missed
        ]
        + [(p, chaosbench.RecordPayload | NotAskedPayload, f"payload {i}") for i, p in enumerate(payloads)]
    )


@pytest.mark.slow
def test_dialectic_records_have_their_declared_shapes(pytester) -> None:
    pytester.makepyfile(test_dialectic=DIALECTIC_MODULE)
    use_repo_cassettes(pytester)
    pytester.makeconftest(RECORDER)
    # nothing listens there: every call is a replay
    result = pytester.runpytest_subprocess(
        "--eval-max-items", "2", "--eval-base-url", "http://127.0.0.1:9/v1", "-p", "no:cacheprovider"
    )
    assert result.ret == 0, result.stdout.str()
    assert "cassette miss" not in result.stdout.str()

    out = run_dir(pytester, DEFAULT_MODEL, "dialectic", subset=True)
    seen = lines(pytester.path / SEEN)
    records = [s["payload"]["record"] for s in seen]
    assert sorted({r["check"] for r in records}) == sorted(DIALECTIC_CHECKS)
    assert sum("response" in s["payload"] for s in seen) == 4  # 2 cases x 2 variants, each sent once
    conversations = json.loads((out / "multiturn_summary.json").read_text())["conversations_detail"]
    comparisons = json.loads((out / "cross_provider_summary.json").read_text())["comparisons"]
    per_response = lines(out / "per_response.jsonl")
    queue = lines(out / "spotcheck_queue.jsonl")
    key = json.loads((out / "spotcheck_key.json").read_text())
    assert (len(per_response), len(conversations), len(comparisons)) == (4, 2, 2)
    assert queue and key
    assert_shapes(
        [(s["payload"], dialectic.RecordPayload, f"payload of {s['payload']['record']['id']}") for s in seen]
        + [(r, DIALECTIC_CHECKS[r["check"]], r["id"]) for r in records]
        + [
            (s["response"], dialectic.ResponseRecord, f"response {s['response']['query_id']}")
            for s in seen
            if "response" in s
        ]
        + [(r, dialectic.PerResponseRecord, f"per_response {r['query_id']}") for r in per_response]
        + [(c, dialectic.ConversationRecord, f"conversation {c['query_id']}") for c in conversations]
        + [(c, dialectic.CrossProviderRecord, f"comparison {c['query_id']}") for c in comparisons]
        + [(e, dialectic.SpotcheckEntry, f"spot-check {e['review_id']}") for e in queue]
        + [(k, dialectic.SpotcheckKey, f"spot-check key {rid}") for rid, k in key.items()]
    )
