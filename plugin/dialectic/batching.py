"""--eval-batch for the dialectic protocol (docs/batch.md, "A run with --eval-batch"): before the
items run, every call the selected items make goes to the provider's batch API once the answers it
needs are in, a batch per model and round. First the responses: the model under test's (check and
resolution items) and each --eval-compare-models model's (cross-provider items); then the judge
panel's calls on every response a cassette now holds that a judge or cross-provider item grades,
with each resolution conversation's first judge turn; then each conversation's next call, a round
each (batch_rounds.py). Each reply is saved as that call's ordinary cassette (batch/run.py), so the
items replay them. A call to a model whose provider has no batch API, one a batch did not answer,
and under a rewrite the conversations are asked live by their items."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pytest

from pytest_reasoning_evals import epochs
from pytest_reasoning_evals.dialectic import items as items_module
from pytest_reasoning_evals.dialectic.batch_rounds import replayer, send_by_alias, send_rounds
from pytest_reasoning_evals.dialectic.cases import Case, Variant
from pytest_reasoning_evals.dialectic.runner import Call, judge_request
from pytest_reasoning_evals.protocol import parameter_ids

if TYPE_CHECKING:
    from pytest_reasoning_evals.dialectic.protocol import Protocol

CHECK, JUDGE, RESOLUTION, CROSS = "check", "judge", "resolution", "cross-provider"


def kind_of(fixtures: Collection[str]) -> str | None:
    """What an item asks, by the fixtures its function takes (items.py): a check item takes
    `dialectic_item` (a judge item `dialectic_runner` too); a resolution item `dialectic_case` and
    `dialectic_runner`; a cross-provider item `dialectic_case` and `dialectic_compare_models`."""
    if "dialectic_item" in fixtures:
        return JUDGE if "dialectic_runner" in fixtures else CHECK
    if "dialectic_case" in fixtures:
        if "dialectic_compare_models" in fixtures:
            return CROSS
        return RESOLUTION if "dialectic_runner" in fixtures else None
    return None


def batch_before_items(protocol: Protocol, items: list[pytest.Item]) -> None:
    """The selected items' calls in batches, round by round."""
    asked = []
    for item in items:
        value, kind = protocol.parameter(item), kind_of(item.fixturenames)
        if isinstance(value, tuple) and kind in (CHECK, JUDGE):
            asked.append((*value, kind))
        elif isinstance(value, Case) and kind in (RESOLUTION, CROSS):
            asked.append((value, protocol.resolution_variant, kind))
    _send(protocol, asked)


def batch_before_collected(protocol: Protocol, ids: list[str]) -> None:
    """The same from the collected node ids (the xdist controller has no items): an item's kind
    from the fixtures its function in the items module takes."""
    cases, variants = protocol.selection
    by_id = {f"{c.id}@{v.name}": (c, v) for c in epochs.expand(cases, protocol.settings.epochs) for v in variants}
    kinds = {name: kind_of(inspect.signature(getattr(items_module, name)).parameters) for name in items_module.__all__}
    asked = []
    for nid, param in zip((nid for nid in ids if nid.endswith("]")), parameter_ids(ids)):
        kind = kinds.get(nid.rpartition("::")[2].partition("[")[0])
        if kind is not None and param in by_id:
            asked.append((*by_id[param], kind))
    _send(protocol, asked)


@dataclass
class Asked:
    """What the selected items ask, each once, in the run's order."""

    responses: dict[tuple[str, str, str], tuple[Case, Variant, str]] = field(default_factory=dict)
    judged: set[tuple[str, str, str]] = field(default_factory=set)  # responses a judge panel grades
    conversations: dict[tuple[str, str], tuple[Case, Variant]] = field(default_factory=dict)

    def add(self, case: Case, variant: Variant, kind: str, model: str, compare: tuple[str, ...]) -> None:
        for alias in compare if kind == CROSS else (model,):
            key = (case.id, variant.name, alias)
            self.responses.setdefault(key, (case, variant, alias))
            if kind in (JUDGE, CROSS):
                self.judged.add(key)
        if kind == RESOLUTION:
            self.conversations.setdefault((case.id, variant.name), (case, variant))


def _send(protocol: Protocol, asked: list[tuple[Case, Variant, str]]) -> None:
    """The responses, a batch per model; then the judge panels on the answered ones with the
    conversations' first turns, and the conversations' later calls, a round each."""
    runner, s = protocol.runner, protocol.settings
    if runner is None or not asked:  # a TRUE/FALSE baseline: nothing is asked
        return
    wanted = Asked()
    for case, variant, kind in asked:
        wanted.add(case, variant, kind, s.model, protocol.own.compare_models)
    responses = [
        Call(alias, runner.response_request(case, variant)) for case, variant, alias in wanted.responses.values()
    ]
    send_by_alias(protocol, responses, "model")
    judged = [wanted.responses[key] for key in wanted.responses if key in wanted.judged]
    send_rounds(protocol, _panel_calls(protocol, judged), list(wanted.conversations.values()))


def _panel_calls(protocol: Protocol, judged: list[tuple[Case, Variant, str]]) -> list[Call]:
    """Each seat's request on each response a cassette holds and a judge would grade (not an error,
    not empty: runner.not_answered), as the judge item builds it (runner.judge_request)."""
    models, runner = protocol.session.models, protocol.runner
    replay = functools.cache(lambda alias: replayer(models, alias))
    calls = []
    for case, variant, alias in judged:
        completion = replay(alias).complete(runner.response_request(case, variant))
        if completion.error or not completion.text.strip():  # a miss too: the batch did not answer it
            continue
        calls += [
            Call(seat.alias, judge_request(case, variant, alias, completion.text, seat)) for seat in protocol.judges
        ]
    return calls
