# Registers the plugin for runs from a checkout that is not pip-installed. When it is
# installed, its pytest11 entry point (also named "plugin") has registered it already and
# this line is a no-op.
pytest_plugins = ["plugin"]
