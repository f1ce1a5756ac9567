"""The defaults shipped with the package, found with importlib.resources: the ChaosBench prompts
and question bank, the dialectic cases and variant prompts (the repository's cases/ folder,
installed as `pytest_reasoning_evals.cases`) and the model registry."""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def shipped(*parts: str) -> Path:
    """A shipped file or folder (read only: nothing is ever written under the package)."""
    return Path(str(resources.files("pytest_reasoning_evals.cases").joinpath(*parts)))


def registry_file() -> Path:
    return Path(str(resources.files("pytest_reasoning_evals").joinpath("models.yaml")))
