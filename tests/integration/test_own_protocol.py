"""A protocol from outside the plugin (examples/own-protocol) found through its entry point.

No pip install: a `*.dist-info` folder on PYTHONPATH declares the entry point as an installed
package would (importlib.metadata reads it from sys.path). tests/integration/test_installed_wheel.py installs the
real wheel and package into a fresh venv."""

from __future__ import annotations

import json
import shutil
import sys
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


CLASHING = (
    "from pytest_reasoning_evals.options import Option\n"
    "from pytest_reasoning_evals.protocol import ProtocolInfo\n\n"
    'PROTOCOL = ProtocolInfo("broken", "broken:Protocol", ("broken_case",), "broken: a case", "broken",'
    ' options=(Option("cases", "its case file", "path"), Option("broken-level", "its level", "int")))\n'
)
# what each broken package's module holds -> why its one warning line says it is left out
BROKEN = {
    "import error": (None, "cannot be loaded: ModuleNotFoundError: No module named 'no_such_module'"),
    "exit at import": ("import sys\nsys.exit(3)\n", "cannot be loaded: SystemExit: 3"),
    "BaseException at import": (
        "class Boom(BaseException):\n    pass\n\nraise Boom('boom at import')\n",
        "cannot be loaded: Boom: boom at import",
    ),
    "not a ProtocolInfo": ("PROTOCOL = {'name': 'broken'}\n", "must name a ProtocolInfo called 'broken'"),
    "option clash": (CLASHING, "option --eval-cases is already protocol chaosbench's"),
}


def broken_package(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, kind: str) -> str:
    """A protocol package `broken` of one BROKEN kind installed on PYTHONPATH -> why it is left out."""
    module, why = BROKEN[kind]
    site = on_path(pytester, monkeypatch, "broken", "no_such_module:PROTOCOL" if module is None else "broken:PROTOCOL")
    if module is not None:
        (site / "broken.py").write_text(module)
    return why


def warnings_of(result: pytest.RunResult) -> list[str]:
    return [line for line in result.outlines + result.errlines if "WARNING" in line]


@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_a_broken_protocol_package_is_left_out_with_one_warning(pytester, monkeypatch, kind) -> None:
    why = broken_package(pytester, monkeypatch, kind)
    pytester.makepyfile("def test_unrelated():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:randomly")
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    result.assert_outcomes(passed=1)
    (warning,) = warnings_of(result)
    assert "protocol broken" in warning and why in warning, warning
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


@pytest.mark.parametrize("kind", ["import error", "option clash"])
def test_a_session_using_a_left_out_protocols_option_is_a_usage_error(pytester, monkeypatch, kind) -> None:
    why = broken_package(pytester, monkeypatch, kind)
    pytester.makepyfile("def test_unrelated():\n    pass\n")
    result = pytester.runpytest_subprocess("--eval-broken-level", "2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str() + result.stderr.str()
    (error,) = [line for line in result.errlines if line.startswith("ERROR")]
    assert "--eval-broken-level" in error and "protocol broken" in error and why in error, error


@pytest.mark.parametrize("kind", ["exit at import", "option clash"])
def test_a_session_collecting_a_left_out_protocols_items_is_a_usage_error(pytester, monkeypatch, kind) -> None:
    why = broken_package(pytester, monkeypatch, kind)
    pytester.makepyfile("def test_case(broken_case):\n    pass\n\ndef test_unrelated():\n    pass\n")
    for args in ((), ("-n", "2")):
        result = pytester.runpytest_subprocess("-p", "no:randomly", *args)
        assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str() + result.stderr.str()
        (error,) = [line for line in result.errlines if line.startswith("ERROR")]
        assert "broken_case" in error and "protocol broken" in error and why in error, error


def test_reasoning_evals_says_one_line_of_a_broken_protocol_and_goes_on(pytester, monkeypatch) -> None:
    why = broken_package(pytester, monkeypatch, "exit at import")
    result = pytester.run(sys.executable, "-m", "pytest_reasoning_evals", "runs", str(pytester.path))
    assert result.ret == 2, result.stdout.str() + result.stderr.str()  # no run directory there: its own note
    (warning,) = warnings_of(result)
    assert "protocol broken" in warning and why in warning, warning
    assert result.errlines[-1] == f"runs: no run directory under {pytester.path}"
    assert "Traceback" not in result.stderr.str()
