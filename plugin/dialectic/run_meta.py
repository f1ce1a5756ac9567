"""A dialectic run's run_meta.json: what ran (model, judge panel, variants, cases, epochs), when, how
long, whether it completed and what it paid; report.html and the runs table read it."""

from __future__ import annotations

import hashlib
import json
import time
from typing import TYPE_CHECKING

import pytest

from pytest_reasoning_evals.dialectic.panel import self_judged
from pytest_reasoning_evals.providers.wire import sent_temperature

if TYPE_CHECKING:
    from pytest_reasoning_evals.dialectic.protocol import Protocol


def run_meta(protocol: Protocol, session: pytest.Session) -> dict:
    """What ran, for report.html and for whoever reads the directory later."""
    s, runner = protocol.settings, protocol.runner
    cases, variants = protocol.selection
    asked = json.dumps([[c.id, c.category, c.query, c.expected_mode] for c in cases]).encode()
    stopped = protocol.incomplete_reason(session)
    return {
        "model": s.model,
        # what each response and follow-up sent (None: no call, or no temperature sent to this reasoning model)
        "max_tokens": runner and runner.max_tokens,
        "temperature": runner and sent_temperature(protocol.session.models.spec(s.model), runner.temperature),
        "judges": [seat.alias for seat in protocol.judges],
        "judge_panel": panel(protocol),
        "self_judged": self_judged(protocol.judges, s.model),
        "compare_models": list(protocol.own.compare_models),
        "variants": [{"name": v.name, "prompt_sha256": v.sha256, "path": v.path} for v in variants],
        "cases": {"path": str(protocol.own.cases), "count": len(cases), "sha256": hashlib.sha256(asked).hexdigest()},
        **({"epochs": s.epochs} if s.epochs > 1 else {}),  # each case asked K times (--eval-epochs)
        "timestamp": protocol.started_at,
        "execution_time_seconds": round(time.monotonic() - protocol.session.started, 3),
        "num_workers": protocol.session.num_workers(),
        "complete": stopped is None,
        "incomplete_reason": stopped,
        "max_cost_usd": s.max_cost,
        "spent_usd": paid(protocol),
    }


def paid(protocol: Protocol) -> float:
    """What its items' live calls paid, whatever became of them (skipped by the budget, a harness
    error, a stop), and what calls made ahead paid for items that never ran (a stop came first):
    those are counted per model, not per protocol, so when another protocol ran too, it reports them."""
    ledger = protocol.session.ledger
    others = [p for name, p in protocol.session.protocols.items() if name != protocol.name and p.active]
    unclaimed = 0.0 if others else ledger.unclaimed.get(protocol.settings.model, 0.0)
    return ledger.spent(protocol.name) + unclaimed


def panel(protocol: Protocol) -> list[dict]:
    """The judge panel as run_meta.json records it: per seat its alias, model id, temperature and seed."""
    return [
        {
            "judge": seat.number,
            "alias": seat.alias,
            "model_id": protocol.session.models.spec(seat.alias).model_id,
            "temperature": seat.temperature,
            "seed": seat.seed,
        }
        for seat in protocol.judges
    ]
