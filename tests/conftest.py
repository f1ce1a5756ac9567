# pytester's in-process runs restore sys.modules afterwards, dropping every module first imported
# inside a run. The plugin imports requests and vcrpy only when a model is built, so import them
# here once: otherwise a later in-process run re-imports them and objects of the earlier import
# (cookie jars, patched connections) no longer pass isinstance checks.
import requests  # noqa: F401
import vcr  # noqa: F401

try:  # the report's libraries (the `report` extra): numpy, under matplotlib, cannot be imported twice
    import jinja2  # noqa: F401
    import matplotlib.figure  # noqa: F401
except ImportError:
    pass

pytest_plugins = ["pytester"]
