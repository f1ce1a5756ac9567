# pytester's in-process runs restore sys.modules afterwards, dropping every module first imported
# inside a run. The plugin imports requests and vcrpy only when a model is built, so import them
# here once: otherwise a later in-process run re-imports them and objects of the earlier import
# (cookie jars, patched connections) no longer pass isinstance checks.
import requests  # noqa: F401
import vcr  # noqa: F401

pytest_plugins = ["pytester"]
