"""--eval-batch for the dialectic protocol (docs/batch.md, "A run with --eval-batch"): before the
items run, the responses of the model under test that no cassette answers go to the provider's batch
API; then the judge panel's calls on every response a cassette now holds, a batch per judge model.
Each reply is saved as that call's ordinary cassette (batch/run.py), so the items replay them.
Resolution turns, follow-ups and cross-provider calls need answers turn by turn: their items ask
them live, as a request the batch did not answer."""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING

import pytest

from pytest_reasoning_evals import epochs
from pytest_reasoning_evals.batch.run import PROVIDERS, say_to, send_in_batches
from pytest_reasoning_evals.dialectic import items as items_module
from pytest_reasoning_evals.dialectic.cases import Case, Variant
from pytest_reasoning_evals.dialectic.runner import judge_request
from pytest_reasoning_evals.protocol import parameter_ids
from pytest_reasoning_evals.providers.base import Request

if TYPE_CHECKING:
    from pytest_reasoning_evals.dialectic.protocol import Protocol


def batch_before_items(protocol: Protocol, items: list[pytest.Item]) -> None:
    """The check items' responses in batches, then the judge items' panels on those that were answered."""
    asked = [(protocol.parameter(item), "dialectic_runner" in item.fixturenames) for item in items]
    _send(protocol, [(value, judged) for value, judged in asked if isinstance(value, tuple)])


def batch_before_collected(protocol: Protocol, ids: list[str]) -> None:
    """The same from the collected node ids (the xdist controller has no items): a check item is
    one of the items module's functions that take `dialectic_item`, a judge item one that also
    takes `dialectic_runner`."""
    cases, variants = protocol.selection
    by_id = {f"{c.id}@{v.name}": (c, v) for c in epochs.expand(cases, protocol.settings.epochs) for v in variants}
    takes = {name: inspect.signature(getattr(items_module, name)).parameters for name in items_module.__all__}
    checks = {name for name, used in takes.items() if "dialectic_item" in used}
    judges = {name for name in checks if "dialectic_runner" in takes[name]}
    asked = []
    for nid, param in zip((nid for nid in ids if nid.endswith("]")), parameter_ids(ids)):
        function = nid.rpartition("::")[2].partition("[")[0]
        if function in checks and param in by_id:
            asked.append((by_id[param], function in judges))
    _send(protocol, asked)


def _send(protocol: Protocol, asked: list[tuple[tuple[Case, Variant], bool]]) -> None:
    """Each (case, variant)'s response once, in the run's order; then the judges of those a judge item grades."""
    runner, model = protocol.runner, protocol.settings.model
    if runner is None or not asked:  # a TRUE/FALSE baseline: nothing is asked
        return
    pairs: dict[tuple[str, str], tuple[Case, Variant]] = {}  # by (case id, variant name), in the run's order
    judged: set[tuple[str, str]] = set()
    for (case, variant), is_judge in asked:
        key = (case.id, variant.name)
        pairs.setdefault(key, (case, variant))
        if is_judge:
            judged.add(key)
    requests = [runner.response_request(case, variant) for case, variant in pairs.values()]
    send_in_batches(protocol.session, protocol.name, model, requests, protocol.run_dir)
    _judge_batches(protocol, _answered(protocol, [pairs[key] for key in pairs if key in judged]))


def _answered(protocol: Protocol, pairs: list[tuple[Case, Variant]]) -> list[tuple[Case, Variant, str]]:
    """(case, variant, response text) of each pair whose response a cassette holds and that a judge
    item would judge (not an error, not empty: runner.not_answered)."""
    models, model, runner = protocol.session.models, protocol.settings.model, protocol.runner
    replay = models.cassette_client(models.http_model(model), "none")
    answered = []
    for case, variant in pairs:
        completion = replay.complete(runner.response_request(case, variant))
        if not completion.error and completion.text.strip():
            answered.append((case, variant, completion.text))
    return answered


def _judge_batches(protocol: Protocol, answered: list[tuple[Case, Variant, str]]) -> None:
    """Each seat's request on each answered response, as the judge item builds it, in a batch per
    judge model; a judge model without a batch API is asked live by the items."""
    session, model = protocol.session, protocol.settings.model
    by_alias: dict[str, list[Request]] = {}
    for case, variant, text in answered:
        for seat in protocol.judges:
            by_alias.setdefault(seat.alias, []).append(judge_request(case, variant, model, text, seat))
    for alias, requests in by_alias.items():
        provider = session.models.spec(alias).provider
        if provider in PROVIDERS:
            send_in_batches(session, protocol.name, alias, requests, protocol.run_dir)
        else:
            say_to(session)(
                f"batch: judge {alias!r} is of provider {provider!r}, whose batch API is not wired in: "
                f"its {len(requests):,} calls are asked live"
            )
