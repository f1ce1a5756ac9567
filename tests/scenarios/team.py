"""A team's own project, as the scenarios build it: twenty Python/SQL TRUE/FALSE questions of its
own, its own prompt folder, its own dialectic cases, and a models file whose models (the one under
test and two judges) are one fake provider on 127.0.0.1."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from helpers import model_entry, models_yaml
from installed import CHAOSBENCH_IMPORT
from integration.test_dialectic_run import STRUCTURED

from pytest_reasoning_evals.chaosbench.prompts import REPROMPT
from pytest_reasoning_evals.dialectic import judge

KEY_VAR = "TEAM_PROVIDER_KEY"
KEY = "team-key-for-the-scenarios"
DIALECTIC_IMPORT = "from pytest_reasoning_evals.dialectic.items import *  # noqa: F401,F403\n"
SLOPPY = "Answer fast."  # a prompt holding this makes the model answer TRUE to everything

FACTS = [  # (family, question, truth)
    ("python", "Is a Python tuple immutable?", "TRUE"),
    ("python", "Does Python's list.sort() return the sorted list?", "FALSE"),
    ("python", "Is None equal to False under ==?", "FALSE"),
    ("python", "Can a Python dict key be a list?", "FALSE"),
    ("python", "Does range(3) yield 0, 1 and 2?", "TRUE"),
    ("python", "Is a Python str mutable?", "FALSE"),
    ("python", "Does `is` compare object identity?", "TRUE"),
    ("python", "Is 0.1 + 0.2 == 0.3 True in Python?", "FALSE"),
    ("python", "Do Python sets keep insertion order?", "FALSE"),
    ("python", "Can a generator be iterated twice?", "FALSE"),
    ("sql", "Does COUNT(*) count rows with NULLs?", "TRUE"),
    ("sql", "Is NULL = NULL true in SQL?", "FALSE"),
    ("sql", "Does a LEFT JOIN keep every row of the left table?", "TRUE"),
    ("sql", "Can a primary key column hold NULL?", "FALSE"),
    ("sql", "Does UNION remove duplicate rows?", "TRUE"),
    ("sql", "Is WHERE applied after GROUP BY?", "FALSE"),
    ("sql", "Does HAVING filter groups?", "TRUE"),
    ("sql", "Is ORDER BY guaranteed without it being written?", "FALSE"),
    ("sql", "Can a table have two foreign keys?", "TRUE"),
    ("sql", "Does TRUNCATE fire row-level DELETE triggers?", "FALSE"),
]
TRUTH = {question: truth for _, question, truth in FACTS}
CASES = """cases:
  - id: pick_database
    category: decision
    expected_mode: dialectic
    query: Should our team move the reporting jobs from SQLite to PostgreSQL this quarter?
  - id: list_syntax
    category: factual
    expected_mode: bypass
    query: How do I reverse a Python list in place?
"""
PROMPT = "You are checking facts for a software team.\n{hint}Question: {{question}}\nAnswer TRUE or FALSE.\n"


def team_models(url: str, provider: str = "openai_compatible") -> str:
    """The model under test (priced; `provider`: its wire format and account, "openai" for a batch API)
    and a panel of two judges, OpenAI-compatible models at `url`."""
    models = models_yaml(
        model_entry(
            url,
            "team-model",
            provider=provider,
            model_id="team-model",
            key_var=KEY_VAR,
            price_in=1.0,
            price_out=2.0,
        ),
        model_entry(url, "judge-a", provider="openai_compatible", model_id="judge-a", key_var=KEY_VAR),
        model_entry(url, "judge-b", provider="openai_compatible", model_id="judge-b", key_var=KEY_VAR),
    )
    return models + "judge_panels:\n  panel: [judge-a, judge-b]\n"


class TeamModel:
    """The provider's answers: a quiz question gets its truth (TRUE for all under a sloppy prompt), a
    judge its scores, a resolution judge a verdict, anything else a structured analysis."""

    def __call__(self, body: dict) -> str:
        messages = body["messages"]
        last = messages[-1]["content"]
        if messages[0]["content"] == judge.SYSTEM:
            if "## Resolution Assessment" in last:
                return json.dumps({"resolved": True, "confidence": 0.9, "reasoning": "settled"})
            return json.dumps({**dict.fromkeys(judge.DIMENSIONS, 8), "rationale": body["model"]})
        if last == REPROMPT:
            return "TRUE"
        question = next((q for q in TRUTH if q in last), None)
        if question is None:
            return STRUCTURED
        return "TRUE" if SLOPPY in last else TRUTH[question]


def write_prompt(folder: Path, sloppy: bool = False) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "zeroshot.txt").write_text(PROMPT.format(hint=SLOPPY + "\n" if sloppy else ""), encoding="utf-8")
    return folder


def team_project(
    root: Path,
    url: str,
    *,
    chaosbench: bool = True,
    dialectic: bool = False,
    ini: str = "",
    provider: str = "openai_compatible",
) -> Path:
    """The project folder: evals/ with one test file per protocol asked for, its data and pyproject."""
    (root / "evals").mkdir(parents=True)
    if chaosbench:
        (root / "evals" / "test_quiz.py").write_text(CHAOSBENCH_IMPORT)
    if dialectic:
        (root / "evals" / "test_dialectic.py").write_text(DIALECTIC_IMPORT)
    lines = [
        json.dumps({"id": f"q{i:02d}", "question": q, "ground_truth": t, "family": f})
        for i, (f, q, t) in enumerate(FACTS)
    ]
    (root / "questions.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (root / "dialectic.yaml").write_text(CASES, encoding="utf-8")
    write_prompt(root / "prompts" / "plain")
    (root / "models.yaml").write_text(team_models(url, provider), encoding="utf-8")
    (root / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\ntestpaths = ["evals"]\neval_model = "team-model"\n'
        'eval_models_file = "models.yaml"\neval_cases = "questions.jsonl"\neval_prompts = "prompts/plain"\n'
        f'eval_dialectic_cases = "dialectic.yaml"\n{ini}',
        encoding="utf-8",
    )
    return root


def run_dirs(project: Path, pattern: str) -> list[Path]:
    return sorted(p for p in (project / "results").glob(pattern) if p.is_dir())


def read_json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def remove(path: Path) -> None:
    shutil.rmtree(path) if path.is_dir() else path.unlink()
