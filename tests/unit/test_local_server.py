"""local_server.start_command: the command that starts a model's server, when serve-local can."""

from __future__ import annotations

import pytest

from pytest_reasoning_evals.local_server import MODEL_ALIAS, start_command


@pytest.mark.parametrize(
    ("model_id", "url", "command"),
    [
        (MODEL_ALIAS, "http://127.0.0.1:8080/v1", "reasoning-evals serve-local"),
        (MODEL_ALIAS, "http://localhost:8080/v1", "reasoning-evals serve-local"),
        (MODEL_ALIAS, "http://127.0.0.1:9123/v1", "reasoning-evals serve-local --port 9123"),
        (MODEL_ALIAS, "http://10.0.0.5:8080/v1", None),  # another machine: serve-local cannot start it there
        (MODEL_ALIAS, "https://127.0.0.1:8080/v1", None),  # serve-local speaks plain http
        ("llama3.1:8b", "http://127.0.0.1:11434/v1", None),  # Ollama's model: not served by serve-local
    ],
)
def test_start_command_only_for_the_local_model_on_this_machine(model_id, url, command) -> None:
    assert start_command(model_id, url) == command
