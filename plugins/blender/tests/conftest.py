"""Shared pytest helpers for the Blender add-on tests.

``load_runner()`` imports clothbake/runner.py by path, so the bpy-free tests never import the add-on
package (whose ``__init__`` talks to Blender).
"""

import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PLUGIN_DIR = os.path.dirname(HERE)  # plugins/blender
ADDON_DIR = os.path.join(PLUGIN_DIR, "clothbake")
REPO_DIR = os.path.dirname(os.path.dirname(PLUGIN_DIR))


def load_runner():
    name = "clothbake_runner_under_test"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, os.path.join(ADDON_DIR, "runner.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
