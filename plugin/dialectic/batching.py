"""--eval-batch for the dialectic protocol (docs/batch.md, "A run with --eval-batch"): before the
items run, the responses of the model under test that no cassette answers go to the provider's batch
API. Each reply is saved as that call's ordinary cassette (batch/run.py), so the items replay them.
Judges, resolution turns, follow-ups and cross-provider calls need answers first: their items ask
them live, as a request the batch did not answer."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from pytest_reasoning_evals.batch.run import send_in_batches
from pytest_reasoning_evals.dialectic.cases import Case, Variant

if TYPE_CHECKING:
    from pytest_reasoning_evals.dialectic.protocol import Protocol


def batch_before_items(protocol: Protocol, items: list[pytest.Item]) -> None:
    """The check items' responses in batches."""
    runner, model = protocol.runner, protocol.settings.model
    if runner is None:  # a TRUE/FALSE baseline: nothing is asked
        return
    asked: dict[tuple[str, str], tuple[Case, Variant]] = {}  # by (case id, variant name), in the run's order
    for item in items:
        value = protocol.parameter(item)
        if isinstance(value, tuple):
            key = (value[0].id, value[1].name)
            asked.setdefault(key, value)
    requests = [runner.response_request(case, variant) for case, variant in asked.values()]
    send_in_batches(protocol.session, protocol.name, model, requests, protocol.run_dir)
