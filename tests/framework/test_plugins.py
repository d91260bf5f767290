"""Op packages load as plugins: the built-in ops through the `opkit.ops` entry point, a
user's through load_op_packages; kernel priorities; the public seams ops use."""
import textwrap

import numpy as np
import pytest

import opkit
from opkit import errors, plugins, register_kernel
from opkit.registry import has_op, kernels_of, op_info, scratch

OP_FILE = '''
from opkit import OpMaker, OperatorWithKernel, register_kernel, register_operator


class M(OpMaker):
    def make(self):
        self.add_input("X", "x")
        self.add_output("Out", "o")
        self.add_comment("Plugin test op. $$Out = X + 1$$")


class Op(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))


register_operator("{name}", Op, M)


@register_kernel("{kernel_for}")
def kernel(ctx):
    ctx.set_output("Out", ctx.input("X") + 1)
'''


def test_the_builtin_ops_are_the_first_entry_point():
    packages = plugins.entry_point_packages()
    assert packages[0] == ("reference_ops", "reference_ops")
    assert has_op("elementwise_add") and has_op("while")


def test_a_user_op_file_loads_like_the_builtins(tmp_path):
    path = tmp_path / "plus_one_op.py"
    path.write_text(OP_FILE.format(name="plugin_plus_one", kernel_for="plugin_plus_one"))
    with scratch():
        loaded = plugins.load_op_packages([str(path)])
        assert str(path) in loaded and "reference_ops" in loaded
        op = opkit.create_op("plugin_plus_one", {"X": "x"}, {"Out": "o"})
        scope = opkit.Scope()
        scope.var("x").get_tensor().set(np.zeros(3))
        op.run(scope, opkit.CPUPlace())
        np.testing.assert_array_equal(scope.find_var("o").get_tensor().data, np.ones(3))


def test_a_kernel_for_an_op_never_registered_names_file_and_line(tmp_path):
    path = tmp_path / "typo_op.py"
    path.write_text(OP_FILE.format(name="plugin_typo", kernel_for="plugin_tpyo"))
    with scratch():
        with pytest.raises(plugins.OpPackageError) as info:
            plugins.load_op_packages([str(path)])
    msg = str(info.value)
    line = OP_FILE.splitlines().index('@register_kernel("{kernel_for}")') + 1
    assert f"{path}:{line}" in msg and "'plugin_tpyo'" in msg, msg


def test_bad_op_packages_are_named(tmp_path):
    with pytest.raises(plugins.OpPackageError, match="no_such_ops_module: cannot import"):
        plugins.load_op_packages(["no_such_ops_module"])
    with pytest.raises(plugins.OpPackageError, match="missing_op.py: no such file"):
        plugins.load_op_packages([str(tmp_path / "missing_op.py")])
    broken = tmp_path / "broken_op.py"
    broken.write_text("import numpy\n\nraise RuntimeError('boom')\n")
    with pytest.raises(plugins.OpPackageError, match=r"broken_op.py:3: .*RuntimeError: boom"):
        plugins.load_op_packages([str(broken)])


def test_kernel_priority_decides_a_shared_key_whatever_the_order():
    def low(ctx):
        pass

    def high(ctx):
        pass

    def other(ctx):
        pass

    key = ("int16", "GPU", "ANY", "PLAIN")
    for first, second in ((low, high), (high, low)):
        with scratch():
            for fn in (first, second):
                register_kernel("relu", place="GPU", dtypes="int16",
                                priority=-1 if fn is low else 1)(fn)
            assert kernels_of("relu")[key].fn is high
            assert op_info("relu").kernels[key].fn is high
    with scratch():
        register_kernel("relu", place="GPU", dtypes="int16")(low)
        with pytest.raises(errors.AlreadyExists, match="registered twice"):
            register_kernel("relu", place="GPU", dtypes="int16")(other)


def test_infer_shape_lod_levels_are_public():
    main = opkit.Program()
    with opkit.program_guard(main, opkit.Program()):
        a = opkit.layers.data("a", shape=[2], dtype="float64", lod_level=1)
        b = opkit.layers.data("b", shape=[2], dtype="float64", lod_level=2)
        c = opkit.layers.data("c", shape=[2], dtype="float64", lod_level=1)
        with pytest.raises(errors.InvalidArgument, match=r"X\[1\] \('b'\) has 2"):
            opkit.layers.append_op("sequence_concat", {"X": [a, b]})
        out = opkit.layers.append_op("sequence_concat", {"X": [a, c]})
    (r,) = opkit.Executor().run(
        main, feed={"a": (np.ones((3, 2)), [[1, 2]]), "b": (np.ones((3, 2)), [[1], [3]]),
                    "c": (np.zeros((2, 2)), [[1, 1]])},
        fetch_list=[out], scope=opkit.Scope(), return_numpy=False)
    assert r.lod == [[0, 2, 5]]


def test_scope_drop_kid_forgets_one_child():
    parent = opkit.Scope()
    keep, drop = parent.new_scope(), parent.new_scope()
    grandchild = drop.new_scope()
    parent.drop_kid(drop)
    assert parent.kids() == [keep]
    assert drop.parent is None and grandchild.parent is None


def test_create_block_variables_makes_persistable_once_and_locals_anew():
    from opkit.framework.executor import create_block_variables

    main = opkit.Program()
    block = main.global_block()
    block.create_var(name="w", shape=[1], dtype="float32", persistable=True)
    block.create_var(name="t", shape=[1], dtype="float32")
    outer, cache = opkit.Scope(), {}
    s1, s2 = outer.new_scope(), outer.new_scope()
    create_block_variables(block, outer, s1, cache)
    w = outer.find_var("w")
    create_block_variables(block, outer, s2, cache)
    assert outer.find_var("w") is w
    assert s1.find_local_var("t") is not s2.find_local_var("t")
    assert s1.find_local_var("w") is None


def test_the_registry_imports_no_op_package():
    source = textwrap.dedent(open(opkit.framework.registry.__file__).read())
    assert "import reference_ops" not in source and "reference_ops" not in source


def test_entry_points_are_read_like_importlib_metadata(tmp_path, monkeypatch):
    from importlib.metadata import entry_points

    dist = tmp_path / "my_ops-1.0.dist-info"
    dist.mkdir()
    (dist / "entry_points.txt").write_text(
        "[console_scripts]\nmy-ops = my_ops.cli:main\n\n[opkit.ops]\nmy_ops = my_ops\n")
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: my_ops\nVersion: 1.0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    ours = plugins.entry_point_packages()
    # a set: an editable install is also seen through its egg-info in the project folder
    theirs = sorted({(e.name, e.value) for e in entry_points(group="opkit.ops")})
    assert sorted(ours) == theirs
    assert ours[0] == ("reference_ops", "reference_ops") and ("my_ops", "my_ops") in ours
