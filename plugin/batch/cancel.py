"""reasoning-evals batch cancel DIR: every batch in a run directory's batch.json that has not ended
on its provider is cancelled there (docs/batch.md, "Cancelling a batch"). Each batch's model is the
registry alias the run recorded for it; its key is read from that model's api_key_env, as a run
reads it, and shows in no line."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import requests

from pytest_reasoning_evals.batch import BatchError, BatchHandle, BatchLedger, client_for
from pytest_reasoning_evals.providers.http import AuthError, read_key
from pytest_reasoning_evals.registry import ModelSpec, RegistryError, load_registry, resolve

USAGE = 2  # as the other commands: a folder or file that cannot be used
FAILED = 1  # a batch neither cancelled nor ended


def cancel_batches(
    folder: Path,
    models_file: Path | None,
    base_url: str | None,
    say: Callable[[str], None],
    warn: Callable[[str], None],
) -> int:
    """Cancel every batch of `folder`'s ledger not ended yet, a line per batch; the exit status."""
    ledger = BatchLedger(folder)
    if not ledger.path.is_file():
        warn(f"batch cancel: no {ledger.path.name} in {folder}: not the run directory of a run with --eval-batch")
        return USAGE
    try:
        handles = ledger.pending()
        registry = load_registry(models_file)
    except (BatchError, RegistryError) as exc:
        warn(f"batch cancel: {exc}")
        return USAGE
    if not handles:
        say(f"batch cancel: {ledger.path} holds no batch")
        return 0
    session = requests.Session()
    done = [cancel_one(handle, session, registry, base_url, say) for handle in handles]
    return 0 if all(done) else FAILED


def cancel_one(
    handle: BatchHandle, session: requests.Session, registry: dict, base_url: str | None, say: Callable[[str], None]
) -> bool:
    """Cancel `handle`'s batch unless it has ended; say what happened. True: cancelled or ended."""
    name = f"batch {handle.batch_id} ({handle.provider}, {len(handle.custom_ids):,} requests)"
    try:
        client = client_for(handle.provider, session, *_where(handle, registry, base_url))
        status = client.poll(handle)
        if status.ended:
            say(f"{name}: already ended ({status.provider_state})")
            return True
        status = client.cancel(handle)
    except (BatchError, RegistryError, AuthError) as exc:
        code = f" (HTTP {exc.status})" if getattr(exc, "status", None) else ""
        say(f"{name}: error{code}: {exc}")
        return False
    say(f"{name}: cancelled ({status.provider_state}: the requests not yet answered will not be)")
    return True


def _where(handle: BatchHandle, registry: dict, base_url: str | None) -> tuple[str, str | None]:
    """The base URL and key of the model the batch was sent for."""
    if not handle.model:
        raise BatchError(
            "batch.json names no model for it (written before models were recorded): cancel it on the provider's console"
        )
    spec: ModelSpec = resolve(handle.model, registry)
    if spec.provider != handle.provider:
        raise BatchError(f"model {spec.alias!r} is of provider {spec.provider!r} now, not {handle.provider!r}")
    url = base_url or spec.base_url
    if not url:
        raise BatchError(f"model {spec.alias!r} has no base_url: pass --base-url URL")
    key = read_key(spec.api_key_env) if spec.api_key_env else None
    if spec.api_key_env and key is None:
        raise AuthError(f"{spec.api_key_env} is not set: model {spec.alias!r} needs it to cancel its batch")
    return url, key
