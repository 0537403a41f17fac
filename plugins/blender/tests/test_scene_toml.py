"""Plain-pytest tests of the hand-written TOML writer (clothbake/scene_toml.py) via tomllib round trips."""

import importlib.util
import os
import tomllib

import pytest

from clothbake_testutil import ADDON_DIR

spec = importlib.util.spec_from_file_location("clothbake_scene_toml_under_test", os.path.join(ADDON_DIR, "scene_toml.py"))
scene_toml = importlib.util.module_from_spec(spec)
spec.loader.exec_module(scene_toml)


def test_scene_round_trips_through_tomllib():
    doc = {
        "scene": {"fps": 24.0, "frame_start": 1, "frame_end": 48, "substeps": 5, "gravity": [0.0, -9.81, 0.0]},
        "output": {"dir": "out", "formats": ["pc2"], "space": "local"},
        "garment": [
            {
                "name": "skirt",
                "mesh": "skirt.obj",
                "up": "z",
                "transform": [1.0, 0, 0, 0, 0, 1.0, 0, 0, 0, 0, 1.0, 0, 0.5, 0, 2.0, 1.0],
                "density": 1e-5,
                "self_collision": False,
                "pin": {"vertices": [0, 3], "weights": [1.0, 0.25]},
            },
            {"name": "cape", "mesh": "cape.obj", "bend": None},
        ],
        "collider": [
            {"type": "sphere", "center": [0.0, 1.0, 0.0], "radius": 0.5, "keys": [{"frame": 1, "center": [0, 1, 0]}, {"frame": 2, "center": [0, 2, 0]}]},
            {"type": "plane", "point": [0, 0, 0], "normal": [0, 1, 0]},
        ],
    }
    text = scene_toml.dumps(doc, header="made by a test\nsecond line")
    assert text.startswith("# made by a test\n# second line\n")
    back = tomllib.loads(text)
    expected = dict(doc)
    expected["garment"] = [dict(doc["garment"][0]), {"name": "cape", "mesh": "cape.obj"}]
    assert back == expected


@pytest.mark.parametrize(
    "text",
    ['plain', 'quote " inside', "back\\slash", "tab\tnew\nline\r", "bell\x07 del\x7f", "unicode ümlaut ✓", "C:\\Users\\me\\shirt.obj", ""],
)
def test_strings_are_escaped(text):
    assert tomllib.loads(scene_toml.dumps({"name": text, "t": {"k": [text]}})) == {"name": text, "t": {"k": [text]}}


def test_odd_keys_are_quoted():
    doc = {"a key": 1, "ü": 2, "ok_key-1": 3}
    text = scene_toml.dumps(doc)
    assert "ok_key-1 = 3" in text
    assert tomllib.loads(text) == doc


def test_floats_keep_their_type_and_value():
    doc = {"a": 1.0, "b": -0.0, "c": 1e300, "d": 3.14159265358979, "e": 2.5e-7, "i": 7}
    back = tomllib.loads(scene_toml.dumps(doc))
    assert back == doc
    assert isinstance(back["a"], float) and isinstance(back["i"], int)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), object()])
def test_unwritable_values_name_their_key(bad):
    with pytest.raises(scene_toml.TomlError, match=r"garment\.density"):
        scene_toml.dumps({"garment": {"density": bad}})
