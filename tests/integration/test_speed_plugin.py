"""The speed machinery is one plugin object (speed.py): registered under its own name, it starts
the cassette index's warmer from the cassette client's first read (no protocol asks for it), and
a run with it disabled (`-p no:`) decides and writes the same."""

from __future__ import annotations

import pytest
from fakeprovider import FakeProvider
from helpers import (
    CYCLE_CONFTEST,
    add_eval_module,
    answer_by_text,
    fake_models,
    question,
    read_summary,
    write_jsonl,
)

from pytest_reasoning_evals import index_warmer
from pytest_reasoning_evals.speed import SPEED_PLUGIN, SpeedPlugin

FREEZE_PROBE = (
    "import gc, pathlib\n\ndef test_probe():\n    pathlib.Path('frozen.txt').write_text(str(gc.get_freeze_count()))\n"
)


def test_a_replay_without_the_speed_plugin_writes_the_same_and_freezes_and_warms_nothing(
    pytester: pytest.Pytester, monkeypatch, fake_key
) -> None:
    add_eval_module(pytester)
    pytester.makepyfile(test_probe=FREEZE_PROBE)
    ids = [f"q-{i}" for i in (3, 1, 2, 0)]
    cases = write_jsonl(pytester.path / "bank.jsonl", [question(i, "TRUE") for i in ids])
    models = pytester.path / "models.yaml"
    args = ["--model", "fake", "--eval-cases", str(cases), "--eval-models-file", str(models)]
    args += ["--eval-cassette-dir", str(pytester.path / "cassettes"), "--eval-out-dir", str(pytester.path / "results")]
    with FakeProvider() as server:
        server.responder = answer_by_text
        models.write_text(fake_models(server.openai_base))
        assert pytester.runpytest(*args, "--eval-record-mode", "once").ret == 0
    started, plugins = [], []
    monkeypatch.setattr(index_warmer, "WARM_FROM", 1)
    monkeypatch.setattr(index_warmer, "spare_cores", lambda: 1)
    monkeypatch.setattr(index_warmer.IndexWarmer, "start", classmethod(lambda cls, *a: started.append(a[2])))
    spy = type(
        "Spy",
        (),
        {
            "pytest_sessionstart": lambda self, session: plugins.append(
                session.config.pluginmanager.get_plugin(SPEED_PLUGIN)
            )
        },
    )()
    runs = {}
    for disabled in (False, True):
        result = pytester.runpytest(
            *args, "--eval-record-mode", "none", *(["-p", f"no:{SPEED_PLUGIN}"] if disabled else []), plugins=[spy]
        )
        assert result.ret == 0
        frozen = int((pytester.path / "frozen.txt").read_text())
        runs[disabled] = (read_summary(pytester, "fake"), result.parseoutcomes(), frozen > 0, list(started))
        started.clear()
    on, off = runs[False], runs[True]
    assert on[:2] == off[:2]
    assert on[2:] == (
        True,
        [[str(pytester.path / "cassettes" / "fake" / "bank-zeroshot" / f"{i}.yaml") for i in ids]],
    )
    assert off[2:] == (False, [])
    assert isinstance(plugins[0], SpeedPlugin) and plugins[1] is None


@pytest.mark.parametrize("extra", [[], ["-n", "2"], ["--collect-only"]], ids=["n0", "n2", "collect-only"])
def test_an_eval_session_leaves_the_users_objects_in_cycles_to_be_finalised_at_exit(
    pytester: pytest.Pytester, extra: list[str]
) -> None:
    add_eval_module(pytester)
    pytester.makeconftest(CYCLE_CONFTEST)
    result = pytester.runpytest_subprocess("-q", "--model=oracle", "-k", "atomic", *extra)
    assert result.ret == 0, result.stdout.str()
    assert (pytester.path / "out.txt").read_text() == "data\nfinalised\n"
