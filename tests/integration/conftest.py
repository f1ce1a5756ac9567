import pytest
from helpers import add_eval_module


@pytest.fixture
def evals(pytester: pytest.Pytester) -> pytest.Pytester:
    """A pytester directory with the project's ChaosBench eval module, replaying the committed cassettes."""
    add_eval_module(pytester)
    return pytester
