# The plugin is the installed package `pytest_reasoning_evals` (from this checkout:
# `pip install -e .`; its pytest11 entry point has the same name, so this line is a no-op then).
# It still loads the plugin where plugin autoloading is off (PYTEST_DISABLE_PLUGIN_AUTOLOAD=1).
pytest_plugins = ["pytest_reasoning_evals"]
