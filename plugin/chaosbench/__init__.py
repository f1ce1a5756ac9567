"""ChaosBench-Logic: TRUE/FALSE questions and multi-turn dialogues about dynamical systems (SPEC 1-5).

PROTOCOL is its declaration, found by the plugin through the entry point in pyproject.toml."""

from pytest_reasoning_evals.chaosbench.settings import OPTIONS, chaosbench_settings
from pytest_reasoning_evals.declarations import ProtocolInfo

PROTOCOL = ProtocolInfo(
    "chaosbench",
    "pytest_reasoning_evals.chaosbench.protocol:Protocol",
    ("chaosbench_question", "chaosbench_dialogue"),
    "chaosbench(family, split): a ChaosBench-Logic question or dialogue of this family and split",
    "ChaosBench-Logic evaluation",
    options=OPTIONS,
    settings=chaosbench_settings,
    fixture_plugin="pytest_reasoning_evals.chaosbench.fixtures:fixtures_for",
    commands="pytest_reasoning_evals.chaosbench.commands:add_commands",
    report_view="pytest_reasoning_evals.chaosbench.report_view:read_run",
    runs="pytest_reasoning_evals.chaosbench.runs:runs_table",
    cmdline_main="pytest_reasoning_evals.chaosbench.prompt_runs:run_prompts",
    runs_ahead=("chaosbench_question",),  # a dialogue's turns wait for the answers before them
    eager_options=("resume", "baseline"),
    gate_options=("min-accuracy", "strict-items", "min-coverage", "max-fol-violation-rate", "baseline"),
    baseline_option="baseline",
)
