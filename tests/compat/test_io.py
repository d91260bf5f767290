"""opkit.io: save_inference_model / load_inference_model, and bad files."""
import json

import numpy as np
import pytest

import opkit
import opkit.io
from opkit import errors

from version_helpers import V1, registry_with, save_model


def test_round_trip_gives_the_saved_numbers(tmp_path):
    feed = save_model(tmp_path / "m")
    names = sorted(p.name for p in (tmp_path / "m").iterdir())
    assert names == ["__model__.json", "__params__.npz", "__sample__.npz"]
    with registry_with(V1):
        scope = opkit.Scope()
        exe = opkit.Executor(opkit.CPUPlace())
        prog, feed_names, fetch = opkit.io.load_inference_model(str(tmp_path / "m"), exe,
                                                                scope=scope)
        assert feed_names == ["x"] and [v.name for v in fetch] == ["out"]
        assert [op.type for op in prog.global_block().ops] == ["mul", "vprobe"]
        (out,) = exe.run(prog, feed=feed, fetch_list=fetch, scope=scope)
    w = np.random.default_rng(0).normal(size=(3, 2))
    np.testing.assert_allclose(out, feed["x"] @ w * 2.0)
    sample = opkit.io.load_sample(str(tmp_path / "m"))
    np.testing.assert_array_equal(sample["fetch"][0], out)
    np.testing.assert_array_equal(sample["feed"]["x"], feed["x"])
    assert list(sample["vars"]) == ["h"]


def test_prunes_ops_the_targets_do_not_need(tmp_path):
    with registry_with(V1):
        from version_helpers import build_program

        prog, out = build_program()
        prog.global_block().append_op("scale", {"X": out}, {"Out": "unused"})
        scope = opkit.Scope()
        scope.var("w").get_tensor().set(np.ones((3, 2)))
        opkit.io.save_inference_model(str(tmp_path), ["x"], ["h"], None, prog, scope=scope)
        data = json.loads((tmp_path / "__model__.json").read_text())
    assert [od["type"] for od in data["blocks"][0]["ops"]] == ["mul"]
    assert data["inference"] == {"feed": ["x"], "fetch": ["h"]}
    assert not (tmp_path / "__sample__.npz").exists()


def test_missing_parameter_value_is_named(tmp_path):
    with registry_with(V1):
        from version_helpers import build_program

        prog, out = build_program()
        with pytest.raises(errors.NotFound, match="parameter 'w'"):
            opkit.io.save_inference_model(str(tmp_path), ["x"], [out], None, prog,
                                          scope=opkit.Scope())


def _load(path):
    with registry_with(V1):
        return opkit.io.load_inference_model(str(path), opkit.Executor(opkit.CPUPlace()),
                                             scope=opkit.Scope())


@pytest.mark.parametrize("damage, where, text", [
    (lambda d: (d / "__params__.npz").write_bytes((d / "__params__.npz").read_bytes()[:40]),
     "__params__.npz", "not a valid .npz archive"),
    (lambda d: (d / "__params__.npz").unlink(), "__params__.npz", "no such file"),
    (lambda d: (d / "__model__.json").write_text('{"blocks": [', encoding="utf-8"),
     "__model__.json", "not valid JSON"),
    (lambda d: (d / "__model__.json").unlink(), "__model__.json", "no such file"),
    (lambda d: (d / "__model__.json").write_text('{"blocks": []}', encoding="utf-8"),
     "__model__.json", "'inference'"),
    (lambda d: (d / "__model__.json").write_bytes(b"\xff\xfe{"), "__model__.json", "UTF-8"),
    (lambda d: np.savez(d / "__params__.npz", other=np.ones(2)), "__params__.npz",
     "parameter 'w' is missing"),
])
def test_bad_files_are_clear_errors_naming_the_file(tmp_path, damage, where, text):
    save_model(tmp_path)
    damage(tmp_path)
    with pytest.raises(opkit.io.ModelFileError) as info:
        _load(tmp_path)
    msg = str(info.value)
    assert where in msg and text in msg


def test_pickled_arrays_are_refused_not_run(tmp_path):
    save_model(tmp_path)
    np.savez(tmp_path / "__params__.npz", w=np.array([{"evil": 1}], dtype=object))
    with pytest.raises(opkit.io.ModelFileError, match=r"__params__.npz: unreadable array"):
        _load(tmp_path)


def test_truncated_sample_is_named(tmp_path):
    save_model(tmp_path)
    raw = (tmp_path / "__sample__.npz").read_bytes()
    (tmp_path / "__sample__.npz").write_bytes(raw[: len(raw) // 2])
    with pytest.raises(opkit.io.ModelFileError, match="__sample__.npz: not a valid .npz"):
        opkit.io.load_sample(str(tmp_path))


def test_loader_source_uses_no_pickle_or_eval():
    import inspect

    src = inspect.getsource(opkit.io)
    assert "allow_pickle=False" in src
    for bad in ("pickle.load", "eval(", "exec(", "allow_pickle=True"):
        assert bad not in src
