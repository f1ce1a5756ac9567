"""The generic modules know protocols only through their declarations (protocol.ProtocolInfo,
found by entry point): none imports a protocol package, and none names the example's protocol."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "plugin"
PACKAGE = "pytest_reasoning_evals"
PROTOCOL_PACKAGES = (f"{PACKAGE}.chaosbench", f"{PACKAGE}.dialectic")
GENERIC = ("*.py", "report/*.py", "providers/*.py")


def generic_modules() -> list[Path]:
    return sorted(path for pattern in GENERIC for path in PLUGIN.glob(pattern))


def package_of(path: Path) -> list[str]:
    return [PACKAGE, *path.parent.relative_to(PLUGIN).parts]


def imported(source: str, package: list[str]) -> set[str]:
    """Every module (and `module.name` of a from-import) `source` imports or names in a string,
    relative imports resolved from `package`."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[: len(package) - node.level + 1] + ([node.module] if node.module else []))
            module = base if node.level else node.module
            found |= {module, *(f"{module}.{alias.name}" for alias in node.names)}
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith(PACKAGE + "."):
            # "module:attribute" strings loaded later (protocol.load) import too
            found.add(node.value.partition(":")[0])
    return found


def of_protocols(names: set[str]) -> list[str]:
    return sorted(n for n in names if any(n == p or n.startswith(p + ".") for p in PROTOCOL_PACKAGES))


def test_no_generic_module_imports_a_protocol_package() -> None:
    """The one exception: normalize.py, the documented public re-export of chaosbench/normalize.py."""
    modules = generic_modules()
    assert len(modules) > 20
    found = {
        str(path.relative_to(ROOT)): of_protocols(imported(path.read_text(encoding="utf-8"), package_of(path)))
        for path in modules
    }
    assert {path for path, names in found.items() if names} == {"plugin/normalize.py"}
    assert all(name.startswith(f"{PACKAGE}.chaosbench.normalize") for name in found["plugin/normalize.py"])


def test_the_check_sees_relative_and_string_imports() -> None:
    source = (
        "from .chaosbench import scoring\nfrom . import dialectic\nfrom .report import page\n"
        "TARGET = 'pytest_reasoning_evals.dialectic.items:test_case'\n"
    )
    assert of_protocols(imported(source, [PACKAGE])) == [
        "pytest_reasoning_evals.chaosbench",
        "pytest_reasoning_evals.chaosbench.scoring",
        "pytest_reasoning_evals.dialectic",
        "pytest_reasoning_evals.dialectic.items",
    ]
    assert of_protocols(imported("from ..dialectic.judge import Judge\n", [PACKAGE, "report"])) == [
        "pytest_reasoning_evals.dialectic.judge",
        "pytest_reasoning_evals.dialectic.judge.Judge",
    ]


def test_no_file_of_the_plugin_names_the_example_protocol() -> None:
    named = [p for p in PLUGIN.rglob("*") if p.is_file() and b"shortanswer" in p.read_bytes()]
    assert named == []
