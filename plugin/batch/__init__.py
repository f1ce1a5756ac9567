"""Provider batch APIs (issue 43, groundwork): submit many requests at once at the batch price,
poll, read each reply as the provider's ordinary reply body, cancel; a ledger so a rerun finds
its batches (docs/batch.md)."""

from __future__ import annotations

import requests

from pytest_reasoning_evals.batch.anthropic import AnthropicBatchClient
from pytest_reasoning_evals.batch.base import (
    CANCELED,
    CANCELING,
    ENDED,
    EXPIRED,
    FAILED,
    IN_PROGRESS,
    BatchClient,
    BatchEntry,
    BatchError,
    BatchHandle,
    BatchResult,
    BatchStatus,
    custom_id,
    entry_for,
    split,
)
from pytest_reasoning_evals.batch.gemini import GeminiBatchClient
from pytest_reasoning_evals.batch.ledger import LEDGER_FILE, BatchLedger
from pytest_reasoning_evals.batch.openai import OpenAIBatchClient
from pytest_reasoning_evals.providers.http import RetryPolicy

CLIENTS: dict[str, type[BatchClient]] = {
    "openai": OpenAIBatchClient,
    "anthropic": AnthropicBatchClient,
    "gemini": GeminiBatchClient,
}

__all__ = [
    "CANCELED",
    "CANCELING",
    "CLIENTS",
    "ENDED",
    "EXPIRED",
    "FAILED",
    "IN_PROGRESS",
    "LEDGER_FILE",
    "AnthropicBatchClient",
    "BatchClient",
    "BatchEntry",
    "BatchError",
    "BatchHandle",
    "BatchLedger",
    "BatchResult",
    "BatchStatus",
    "GeminiBatchClient",
    "OpenAIBatchClient",
    "client_for",
    "custom_id",
    "entry_for",
    "split",
]


def client_for(
    provider: str,
    session: requests.Session,
    base_url: str,
    key: str | None,
    ledger: BatchLedger | None = None,
    model: str | None = None,
    policy: RetryPolicy | None = None,
) -> BatchClient:
    """The batch client of `provider` (`model`: the alias its batches are recorded for; `policy`: the
    retries of a request safe to repeat, default RetryPolicy()); BatchError for one without a batch API here."""
    if provider not in CLIENTS:
        raise BatchError(f"provider {provider!r} has no batch client (only {', '.join(CLIENTS)})")
    return CLIENTS[provider](session, base_url, key, ledger, model=model, policy=policy)
