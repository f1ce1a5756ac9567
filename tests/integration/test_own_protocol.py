"""A protocol from outside the plugin (examples/own-protocol) found through its entry point.

No pip install: a `*.dist-info` folder on PYTHONPATH declares the entry point as an installed
package would (importlib.metadata reads it from sys.path). tests/integration/test_installed_wheel.py installs the
real wheel and package into a fresh venv."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "own-protocol"
GROUP = "pytest_reasoning_evals.protocols"


def declare(site: Path, name: str, target: str) -> None:
    """A distribution in `site` declaring the protocol entry point `name = target`."""
    info = site / f"{name}-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text(f"[{GROUP}]\n{name} = {target}\n")


def on_path(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, name: str, target: str) -> Path:
    site = pytester.path.parent / f"{pytester.path.name}-site"
    declare(site, name, target)
    monkeypatch.setenv("PYTHONPATH", str(site))
    return site


@pytest.mark.slow
def test_example_protocol_replays_through_its_entry_point(pytester, monkeypatch) -> None:
    shutil.copytree(
        EXAMPLE,
        pytester.path,
        dirs_exist_ok=True,
        ignore=shutil.ignore_patterns("results", "*.egg-info", "__pycache__"),
    )
    site = on_path(pytester, monkeypatch, "shortanswer", "shortanswer:PROTOCOL")
    shutil.move(pytester.path / "shortanswer", site / "shortanswer")  # the package is installed, not the project's

    result = pytester.runpytest_subprocess()
    assert result.ret == 0, result.stdout.str()
    summary = json.loads((pytester.path / "results" / "smollm2-135m_shortanswer" / "summary.json").read_text())
    assert (summary["total"], summary["correct"]) == (16, 7)
    result.stdout.fnmatch_lines(["*short answers: smollm2-135m*", "gate min-accuracy: passed (accuracy 0.4375, *"])
    assert "--eval-shortanswer-min-accuracy" in pytester.runpytest_subprocess("--help").stdout.str()

    gated = pytester.runpytest_subprocess("--eval-shortanswer-min-accuracy", "0.5")
    assert gated.ret == 1, gated.stdout.str()
    gated.stdout.fnmatch_lines(["gate min-accuracy: FAILED (accuracy 0.4375, required >= 0.5)"])


def test_an_entry_point_that_cannot_be_loaded_is_named(pytester, monkeypatch) -> None:
    on_path(pytester, monkeypatch, "broken", "no_such_module:PROTOCOL")
    pytester.makepyfile("def test_unrelated():\n    pass\n")
    result = pytester.runpytest_subprocess()
    assert result.ret != 0
    assert (
        "protocol entry point broken = 'no_such_module:PROTOCOL' cannot be loaded: No module named 'no_such_module'"
        in result.stderr.str() + result.stdout.str()
    )


def test_an_option_named_like_another_protocols_is_named(pytester, monkeypatch) -> None:
    site = on_path(pytester, monkeypatch, "clashing", "clashing:PROTOCOL")
    (site / "clashing.py").write_text(
        "from pytest_reasoning_evals.options import Option\n"
        "from pytest_reasoning_evals.protocol import ProtocolInfo\n\n"
        'PROTOCOL = ProtocolInfo("clashing", "clashing:Protocol", ("clashing_case",), "clashing: a case", "clashing",'
        ' options=(Option("cases", "its case file", "path"),))\n'
    )
    pytester.makepyfile("def test_unrelated():\n    pass\n")
    result = pytester.runpytest_subprocess()
    assert result.ret != 0
    assert (
        "protocol clashing: option --eval-cases is already protocol chaosbench's; "
        "start its options' names with its own (clashing-...)" in result.stderr.str() + result.stdout.str()
    )
