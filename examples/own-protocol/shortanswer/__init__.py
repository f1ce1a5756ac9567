"""Short answers: free-text questions scored by exact or regex match against a gold answer.

PROTOCOL is the declaration the plugin finds through the entry point in pyproject.toml: it
imports nothing else of this package until an item or an option of it is used."""

from pytest_reasoning_evals.protocol import ProtocolInfo
from shortanswer.settings import OPTIONS, shortanswer_settings

PROTOCOL = ProtocolInfo(
    "shortanswer",
    "shortanswer.protocol:ShortAnswer",
    ("shortanswer_case",),
    "shortanswer(match): a short-answer question scored by exact or regex match",
    "short-answer evaluation",
    options=OPTIONS,
    settings=shortanswer_settings,
    fixture_plugin="shortanswer.fixtures:fixtures_for",
    # its gate options: given on the command line, this gate judges the run even when no item of it
    # ran (a gate over nothing fails); set in the ini file, only when the session selected some item
    gate_options=("shortanswer-min-accuracy",),
)
