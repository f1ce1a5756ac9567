import pytest
from helpers import EVAL_MODULE, add_eval_module


@pytest.fixture
def evals(pytester: pytest.Pytester) -> pytest.Pytester:
    """A pytester directory with the project's ChaosBench eval module, replaying the committed cassettes."""
    add_eval_module(pytester)
    return pytester


@pytest.fixture
def recording_evals(pytester: pytest.Pytester, fake_key) -> pytest.Pytester:
    """A pytester directory with the project's ChaosBench eval module and no ini (the defaults hold, the
    coverage floor of 0.8 among them), the fake model's key variable set: for runs that record from the fake provider."""
    pytester.makepyfile(test_chaosbench=EVAL_MODULE)
    return pytester
