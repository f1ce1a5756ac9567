"""Turning a registry entry into something that can `complete()`: a baseline (no HTTP) or an HTTP
model behind its cassettes; and whether a model can run at all (replay or key)."""

from __future__ import annotations

import os
from pathlib import Path

from pytest_reasoning_evals.providers.fixed import FixedAnswerModel
from pytest_reasoning_evals.providers.http import AuthError, HttpModel, RetryPolicy, read_key
from pytest_reasoning_evals.registry import ModelSpec, RegistryError


def has_cassettes(cassette_dir: Path, alias: str) -> bool:
    return any((cassette_dir / alias).rglob("*.yaml"))


def default_record_mode(spec: ModelSpec, cassette_dir: Path) -> str:
    """Replay only when the model has cassettes; record otherwise."""
    return "none" if has_cassettes(cassette_dir, spec.alias) else "once"


def check_can_run(spec: ModelSpec, cassette_dir: Path, record_mode: str, base_url: str | None = None) -> None:
    """Fail once, before any item, when the model has no base URL (`base_url` overrides the
    registry's), when its key is malformed and calls may be made (RegistryError / AuthError
    naming the variable, never the key), or when it can neither replay nor be called."""
    if spec.provider == "baseline":
        return
    if not (base_url or spec.base_url):
        raise RegistryError(
            f"model {spec.alias!r} has no base_url: set base_url in its registry entry "
            "(--eval-models-file) or pass --eval-base-url URL"
        )
    var = spec.api_key_env
    if not var:
        return
    if record_mode == "none":  # replay only: the key is never sent, so it is not checked
        if os.environ.get(var, "").strip():
            return
    elif read_key(var) is not None:  # AuthError when the key has inner whitespace or control characters
        return
    if record_mode == "none" and has_cassettes(cassette_dir, spec.alias):
        return
    raise AuthError(
        f"{var} is not set and model {spec.alias!r} has no cassettes to replay under "
        f"{cassette_dir / spec.alias}: set {var} and record them with "
        f"`pytest evals --model={spec.alias} --eval-record-mode=once`"
    )


def build_model(
    spec: ModelSpec, *, seed: int, base_url: str | None = None, policy: RetryPolicy | None = None
) -> FixedAnswerModel | HttpModel:
    """The model itself, a baseline or an HTTP model; models.compose puts its layers around it."""
    if spec.provider == "baseline":
        return FixedAnswerModel(spec, seed)
    return HttpModel(spec, policy, base_url)
