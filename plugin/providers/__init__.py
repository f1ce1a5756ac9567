"""Model providers. `build_model` turns a registry entry into something that can `complete()`."""

from __future__ import annotations

from plugin.providers.base import Completion, Model, Request
from plugin.providers.baseline import BaselineModel
from plugin.registry import BASELINES, ModelSpec

__all__ = ["Completion", "Model", "Request", "build_model", "check_supported", "ProviderUnavailable"]


class ProviderUnavailable(Exception):
    """The model exists in the registry but cannot be run by this version of the harness."""


def check_supported(spec: ModelSpec) -> None:
    """Fail early (before collection) for a model this version cannot call."""
    if spec.provider != "baseline":
        raise ProviderUnavailable(
            f"model {spec.alias!r} uses the {spec.provider!r} provider, which this version of the "
            f"harness cannot call yet (HTTP providers are not implemented); "
            f"runnable models: {', '.join(BASELINES)}"
        )


def build_model(spec: ModelSpec, *, seed: int) -> Model:
    check_supported(spec)
    return BaselineModel(spec, seed)
