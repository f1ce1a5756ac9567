"""The first-week scenarios: each a team's journey with the plugin, installed from the wheel into a
fresh venv (tests/installed.py), in a project of its own, against a fake provider on 127.0.0.1."""

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "scenarios" in item.nodeid.split("/"):
            item.add_marker(pytest.mark.scenario)
            item.add_marker(pytest.mark.installed)
            item.add_marker(pytest.mark.slow)
