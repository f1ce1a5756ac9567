"""The plugin as a user gets it: a wheel built from this checkout, installed (not editable) into
a fresh virtual environment beside other pytest plugins and a protocol package of a user's own
(examples/own-protocol, installed from a copy), and run in projects outside the checkout (an
unrelated project, the example projects examples/own-evals and examples/own-protocol, a project
recording from a local fake provider).

The wheel, the venv and how a run is made: tests/installed.py (shared with tests/scenarios/).
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import time
import zipfile
from pathlib import Path

import pytest
from fakeprovider import FakeProvider
from helpers import answer_by_text, model_entry, models_yaml, named_run
from installed import CHAOSBENCH_IMPORT, EXAMPLE, HEAVY, OWN_PROTOCOL, PACKAGE, ROOT, Installed

# builds and installs the wheel into a fresh venv: minutes on a cold cache
pytestmark = [pytest.mark.installed, pytest.mark.slow]


def summary_of(project: Path, run: str, name: str = "summary.json") -> dict:
    """A file of run `run` (<model>_<mode>: the project's own cases add their name and hash to it)."""
    return json.loads((named_run(project / "results", run) / name).read_text(encoding="utf-8"))


def plugins_line(output: str) -> str:
    return next(line for line in output.splitlines() if line.startswith("plugins:"))


def copy_example(into: Path) -> Path:
    project = into / "own-evals"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns("results", ".pytest_cache", "__pycache__"))
    return project


def own_records(project: Path) -> list[dict]:
    lines = (project / "cases" / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


# --- a. an unrelated project does not notice the plugin ---


def unrelated_project(path: Path) -> Path:
    (path / "plugin").mkdir(parents=True)
    (path / "plugin" / "__init__.py").write_text(
        'NAME = "their own plugin package"\n\ndef double(x):\n    return 2 * x\n'
    )
    (path / "tests").mkdir()
    (path / "tests" / "test_app.py").write_text(
        "import plugin\n\n\n"
        "def test_their_plugin_package_is_imported():\n"
        "    assert plugin.NAME == 'their own plugin package'\n\n\n"
        "def test_double():\n"
        "    assert plugin.double(21) == 42\n"
    )
    (path / "pyproject.toml").write_text(
        '[project]\nname = "unrelated"\nversion = "1.0"\n\n'
        '[tool.pytest.ini_options]\ntestpaths = ["tests"]\npythonpath = ["."]\n'
    )
    return path


# --- b. beside pytest-recording, pytest-base-url and pytest-randomly ---


def option_listed(help_text: str, option: str) -> bool:
    """`option` itself in the help, not as the tail of a longer option (--eval-record-mode)."""
    return re.search(rf"(?<![\w-]){re.escape(option)}\b", help_text) is not None


# --- f. what the wheel holds ---


def imported_top_names(source: str) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_unrelated_project_is_untouched(installed: Installed, tmp_path: Path) -> None:
    project = unrelated_project(tmp_path / "unrelated")
    before = {p.name for p in project.iterdir()}
    for args in (["-q"], ["-q", "-n", "2"], ["-v", "-n", "2"]):
        result = installed.pytest(project, *args)
        assert result.returncode == 0, result.stdout
        assert "2 passed" in result.stdout, result.stdout
        assert "eval summary" not in result.stdout and "dialectic summary" not in result.stdout, result.stdout
        assert "results:" not in result.stdout, result.stdout
    # -v shows xdist's own scheduler: the plugin leaves a session without eval items alone
    assert "scheduling tests via LoadScheduling" in result.stdout, result.stdout
    assert "reasoning-evals" in plugins_line(result.stdout)  # loaded, yet inert
    assert not (project / "results").exists() and not (project / "cassettes").exists()
    assert {p.name for p in project.iterdir()} - before <= {".pytest_cache"}


def test_project_with_its_own_model_option(installed: Installed, tmp_path: Path) -> None:
    """Test suites of ML projects often declare their own `--model` in conftest.py; installing
    the plugin must not break them (argparse refuses an option string registered twice)."""
    project = tmp_path / "ml-project"
    project.mkdir()
    (project / "conftest.py").write_text(
        'def pytest_addoption(parser):\n    parser.addoption("--model", default="resnet50", help="model to test")\n'
    )
    (project / "test_model.py").write_text(
        'def test_model_option(request):\n    assert request.config.getoption("--model") == "resnet50"\n'
    )
    result = installed.pytest(project, "-q")
    assert result.returncode == 0, result.stdout
    assert "1 passed" in result.stdout, result.stdout


def test_help_lists_our_options_beside_other_plugins(installed: Installed, tmp_path: Path) -> None:
    result = installed.pytest(tmp_path, "--help")
    assert result.returncode == 0, result.stdout
    for option in (
        "--eval-record-mode",
        "--eval-base-url",
        "--eval-mode",
        "--model",  # ours
        "--record-mode",  # pytest-recording's
        "--base-url",  # pytest-base-url's
        "--randomly-seed",
    ):  # pytest-randomly's
        assert option_listed(result.stdout, option), f"{option} missing from --help:\n{result.stdout}"


def test_eval_run_works_beside_other_plugins(installed: Installed, tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "evals").mkdir(parents=True)
    (project / "evals" / "test_chaosbench.py").write_text(CHAOSBENCH_IMPORT)
    # the neighbours' own options given too: they must not reach our plugin
    result = installed.pytest(
        project,
        "evals",
        "--model=always-true",
        "--eval-max-items",
        "12",
        "--record-mode",
        "none",
        "--base-url",
        "http://127.0.0.1:9",
        "-n",
        "2",
    )
    assert result.returncode == 0, result.stdout
    plugins = plugins_line(result.stdout)
    for name in ("recording", "base-url", "randomly", "reasoning-evals", "xdist"):
        assert name in plugins, plugins
    assert "eval summary: always-true (zeroshot)" in result.stdout
    summary = summary_of(project, "always-true_zeroshot-subset")
    assert summary["total_questions"] == 12 and summary["model"] == "always-true"


# --- c. -p no:pytest_reasoning_evals ---


def test_plugin_can_be_disabled(installed: Installed, tmp_path: Path) -> None:
    result = installed.pytest(tmp_path, "-p", "no:pytest_reasoning_evals", "--help")
    assert result.returncode == 0, result.stdout
    assert not option_listed(result.stdout, "--eval-mode"), result.stdout
    assert option_listed(result.stdout, "--record-mode")  # the others still load
    assert "reasoning-evals" not in result.stdout


# --- d. the example project, replayed with the installed wheel ---


def test_example_project_replays_and_gates(installed: Installed, tmp_path: Path) -> None:
    project = copy_example(tmp_path)
    records = own_records(project)
    questions = [r for r in records if not r.get("dialogue_id")]
    dialogues = {r["dialogue_id"] for r in records if r.get("dialogue_id")}
    marker = tmp_path / "marker"
    marker.touch()
    time.sleep(0.05)  # anything written from now on is strictly newer than the marker

    replay = installed.pytest(project, "-n", "2")
    assert replay.returncode == 0, replay.stdout
    summary = summary_of(project, "smollm2-135m_zeroshot")
    assert summary["total_questions"] == len(questions) == 8
    assert summary["dialogue_details"]["total_dialogues"] == len(dialogues) == 1
    meta = summary_of(project, "smollm2-135m_zeroshot", "run_meta.json")
    assert meta["calls"]["live"] == 0 and meta["calls"]["cassette_hits"] == meta["calls"]["total"] > 0
    variants = summary_of(project, "smollm2-135m_dialectic", "variant_summary.json")["variants"]
    assert sorted(v["variant"] for v in variants) == ["baseline", "careful"]
    assert all(v["test_cases"] == 2 for v in variants)
    assert "gate min-accuracy: passed" in replay.stdout and "gate max-hard-fails: passed" in replay.stdout
    for run in ("smollm2-135m_zeroshot", "smollm2-135m_dialectic"):  # the page, from the installed package's own files
        page = named_run(project / "results", run) / "report.html"
        assert f"report: {page}" in replay.stdout and "<svg" in page.read_text(encoding="utf-8")

    # a gate over nothing fails: a baseline answers no dialectic case, so the dialectic gate fails...
    baseline = installed.pytest(project, "--model=always-true")
    assert baseline.returncode == 1 and "gate dialectic: FAILED (nothing evaluated" in baseline.stdout, baseline.stdout
    # ...unless it is switched off for that run
    baseline = installed.pytest(project, "--model=always-true", "-o", "eval_max_hard_fails=")
    assert baseline.returncode == 0, baseline.stdout
    assert summary_of(project, "always-true_zeroshot")["total_questions"] == len(questions)
    skipped = re.search(r"(\d+) skipped", baseline.stdout)
    assert skipped and int(skipped[1]) > 0, baseline.stdout  # the dialectic items, for a baseline
    # no dialectic item ran: no run directory
    assert not list((project / "results").glob("always-true_dialectic*"))

    gated = installed.pytest(project, "--eval-min-accuracy", "0.99")
    assert gated.returncode == 1, gated.stdout
    assert "gate min-accuracy: FAILED" in gated.stdout, gated.stdout

    written = subprocess.run(
        ["find", str(installed.site_packages), "-newer", str(marker)], text=True, capture_output=True, check=True
    ).stdout.split()
    assert written == [], f"written under site-packages during the runs: {written}"


# --- d2. a protocol of a user's own, installed beside the wheel ---


def test_own_protocol_replays_and_gates(installed: Installed, tmp_path: Path) -> None:
    project = tmp_path / "own-protocol"
    shutil.copytree(OWN_PROTOCOL, project, ignore=shutil.ignore_patterns("results", ".pytest_cache", "__pycache__"))
    # the installed package runs, not the project's copy of it (the current folder comes first on sys.path)
    shutil.rmtree(project / "shortanswer")
    replay = installed.pytest(project, "-n", "2")
    assert replay.returncode == 0, replay.stdout
    summary = summary_of(project, "smollm2-135m_shortanswer")
    assert (summary["total"], summary["correct"], summary["accuracy"]) == (16, 7, 0.4375)
    assert "gate min-accuracy: passed (accuracy 0.4375, required >= 0.4)" in replay.stdout, replay.stdout
    assert json.loads((project / "results" / "smollm2-135m_shortanswer" / "gates.json").read_text())["passed"]

    gated = installed.pytest(project, "--eval-shortanswer-min-accuracy", "0.5")
    assert gated.returncode == 1, gated.stdout
    assert "gate min-accuracy: FAILED (accuracy 0.4375, required >= 0.5)" in gated.stdout, gated.stdout


# --- e. record from a user project (fake provider), then replay with the server stopped ---


def test_record_then_replay_in_a_user_project(installed: Installed, tmp_path: Path) -> None:
    project = tmp_path / "recording"
    (project / "evals").mkdir(parents=True)
    (project / "evals" / "test_questions.py").write_text(CHAOSBENCH_IMPORT)
    shutil.copy(EXAMPLE / "cases" / "questions.jsonl", project / "questions.jsonl")
    records = own_records(EXAMPLE)
    (project / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\ntestpaths = ["evals"]\neval_model = "lab-fake"\n'
        'eval_models_file = "models.yaml"\neval_cases = "questions.jsonl"\n'
    )
    with FakeProvider() as server:
        server.responder = answer_by_text
        lab = model_entry(
            server.openai_base, "lab-fake", provider="openai_compatible", model_id="lab-model", key_var=None
        )
        (project / "models.yaml").write_text(models_yaml(lab))
        recorded = installed.pytest(project, "--eval-record-mode", "once")
        assert recorded.returncode == 0, recorded.stdout
        assert len(server.requests) == len(records)  # one call per question and per dialogue turn
    first = summary_of(project, "lab-fake_zeroshot")
    assert first["total_questions"] == len([r for r in records if not r.get("dialogue_id")])
    cassettes = sorted((project / "cassettes" / "lab-fake").rglob("*.yaml"))
    assert len(cassettes) == len({r.get("dialogue_id") or r["id"] for r in records})

    shutil.rmtree(project / "results")
    replayed = installed.pytest(project, "-n", "2")  # no server: default record mode is replay
    assert replayed.returncode == 0, replayed.stdout
    assert summary_of(project, "lab-fake_zeroshot") == first
    meta = summary_of(project, "lab-fake_zeroshot", "run_meta.json")
    assert meta["calls"]["live"] == 0 and meta["calls"]["cassette_hits"] == len(records)


def test_wheel_contents(installed: Installed) -> None:
    with zipfile.ZipFile(installed.wheel) as wheel:
        names = wheel.namelist()
        modules = {name: wheel.read(name).decode("utf-8") for name in names if name.endswith(".py")}
        entry_points = next(wheel.read(n).decode() for n in names if n.endswith(".dist-info/entry_points.txt"))
    heavy = {name: sorted(imported_top_names(text) & HEAVY) for name, text in modules.items()}
    assert {name: found for name, found in heavy.items() if found} == {}
    # one import name: nothing but the package and its metadata (no bankgen, no plugin/, no cases/)
    assert {name.split("/")[0] for name in names} == {PACKAGE, installed.wheel.name.split("-py")[0] + ".dist-info"}
    assert re.search(rf"^\[pytest11\]\s*\n{PACKAGE} = {PACKAGE}$", entry_points, re.M), entry_points
    # the modules are exactly the plugin's (plus the data package's __init__)
    expected = {f"{PACKAGE}/{p.relative_to(ROOT / 'plugin').as_posix()}" for p in (ROOT / "plugin").rglob("*.py")}
    assert set(modules) == expected | {f"{PACKAGE}/cases/__init__.py"}
    # the shipped data: the bank, both prompt templates, the system catalog (the shortcut baseline
    # counts it), the dialectic cases and variants, the registry
    bank = {f"{PACKAGE}/cases/chaosbench/{p.name}" for p in (ROOT / "cases" / "chaosbench").glob("*.jsonl")}
    assert bank and bank <= set(names)
    for data in (
        "cases/chaosbench/prompts/zeroshot.txt",
        "cases/chaosbench/prompts/cot.txt",
        "cases/chaosbench/manifest.json",
        "cases/chaosbench/systems/core.yaml",
        "cases/chaosbench/systems/dysts.yaml",
        "cases/dialectic/cases.yaml",
        "cases/prompts/dialectic.txt",
        "models.yaml",
    ):
        assert f"{PACKAGE}/{data}" in names, f"{data} is not in the wheel"
