"""The plugin as a user gets it: a wheel built from this checkout, installed (not editable) into a
fresh virtual environment, shared by the installed-wheel tests and the first-week scenarios
(tests/scenarios/). One wheel and one venv per session, also under xdist (a file lock).

Every run is `<venv>/bin/python -m pytest ...` in a temporary project folder, with an
environment that has no PYTHONPATH, no PYTEST_* variables and nothing pointing into this
checkout, and with PYTHONDONTWRITEBYTECODE=1 so that "nothing is written under site-packages"
can be checked without exceptions.

The wheel is built from a clean copy of the checkout's sources (what a fresh clone with the
working tree's edits holds), not from the checkout itself: setuptools builds in the source
tree and ships whatever an old build left in its (git-ignored) build/lib folder, so a wheel
built in place can hold modules that no longer exist. pip's cache keeps the build to about a minute.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "own-evals"
OWN_PROTOCOL = ROOT / "examples" / "own-protocol"  # a package declaring a protocol, and a project running it
NEIGHBOURS = ("pytest-recording", "pytest-base-url", "pytest-randomly")  # plugins installed beside ours
HEAVY = {"numpy", "scipy", "dysts"}  # the bank builder's dependencies; never in the wheel
PACKAGE = "pytest_reasoning_evals"
CHAOSBENCH_IMPORT = (
    "from pytest_reasoning_evals.chaosbench.items import test_question, test_dialogue  # noqa: F401, I001\n"
)
# Not part of a source distribution: VCS data, environments, build output, run outputs, recordings.
NOT_SOURCES = shutil.ignore_patterns(
    ".git",
    ".venv*",
    ".tox",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    "*.pyc",
    ".pytest_cache",
    ".benchmarks",
    "results",
    "cassettes",
    "snapshots",
    "examples",
    "chaosbench-full",
)


@dataclass(frozen=True)
class Installed:
    wheel: Path
    venv: Path

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    @property
    def site_packages(self) -> Path:
        (path,) = (self.venv / "lib").glob("python3*/site-packages")
        return path

    def env(self) -> dict[str, str]:
        """The user's environment: no PYTHONPATH, no PYTEST_* and nothing pointing into the checkout."""
        root = str(ROOT)
        env = {
            key: value
            for key, value in os.environ.items()
            if key not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV")
            and not key.startswith(("PYTEST_", "COV_"))
            and root not in value
        }
        path = [p for p in os.environ.get("PATH", "").split(os.pathsep) if p and not p.startswith(root)]
        env["PATH"] = os.pathsep.join([str(self.venv / "bin"), *path])
        env["VIRTUAL_ENV"] = str(self.venv)
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        return env

    def pytest(self, cwd: Path, *args: str, timeout: float = 180) -> subprocess.CompletedProcess:
        """`python -m pytest ARGS` in `cwd` with the venv's interpreter; stdout holds stderr too."""
        return self.run(cwd, str(self.python), "-m", "pytest", *args, timeout=timeout)

    def command(self, cwd: Path, name: str, *args: str, timeout: float = 180) -> subprocess.CompletedProcess:
        """One of the venv's console scripts (`reasoning-evals`), as `pytest` runs pytest."""
        return self.run(cwd, str(self.venv / "bin" / name), *args, timeout=timeout)

    def run(self, cwd: Path, *cmd: str, timeout: float) -> subprocess.CompletedProcess:
        return subprocess.run(
            list(cmd),
            cwd=cwd,
            env=self.env(),
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=timeout,
        )


def _run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = 600) -> None:
    result = subprocess.run(
        cmd, cwd=cwd, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout
    )
    assert result.returncode == 0, f"{' '.join(cmd)} exited {result.returncode}:\n{result.stdout[-4000:]}"


def _build(into: Path) -> Installed:
    sources, wheels, venv = into / "src", into / "wheels", into / "venv"
    shutil.copytree(ROOT, sources, ignore=NOT_SOURCES)
    # a copy: pip builds in the source tree, which must stay clean
    own_protocol = into / "own-protocol"
    shutil.copytree(OWN_PROTOCOL, own_protocol, ignore=NOT_SOURCES)
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            str(sources),
            "--no-deps",
            "-w",
            str(wheels),
            "-q",
            "--disable-pip-version-check",
        ],
        cwd=into,
    )
    (wheel,) = wheels.glob(f"{PACKAGE}-*.whl")
    _run([sys.executable, "-m", "venv", str(venv)], cwd=into)
    installed = Installed(wheel, venv)
    env = {k: v for k, v in installed.env().items() if k != "PYTHONDONTWRITEBYTECODE"}
    # with the report extra, as the README's install line has it (Jinja2, matplotlib), and a protocol of a user's own
    _run(
        [
            str(installed.python),
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            f"{wheel}[report]",
            *NEIGHBOURS,
            str(own_protocol),
        ],
        cwd=into,
        env=env,
    )
    return installed


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """One wheel and one venv for the whole session, also under xdist (the workers share the
    session's base temp folder; the first builds, the others wait on the lock)."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent
    into = base / "installed-wheel"
    with open(base / "installed-wheel.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = into / "done.json"
        if not done.exists():
            shutil.rmtree(into, ignore_errors=True)
            into.mkdir()
            built = _build(into)
            done.write_text(json.dumps({"wheel": str(built.wheel), "venv": str(built.venv)}))
        paths = json.loads(done.read_text())
    return Installed(Path(paths["wheel"]), Path(paths["venv"]))
