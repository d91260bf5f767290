"""The clean process of `clean_process` (issue 48): run BY PATH in a fresh interpreter
(`python clean_child.py REQUEST RESULT`), so that it imports neither the `harness` package
nor the test module: only numpy, opkit and the files that registered the op's kernels. It
runs the op once, forward and backward with the given cotangent, as opkit's framework runs
it, and writes {name: array} (outputs and 'X@GRAD' gradients) and the harness-like modules
that were imported ("loaded") to RESULT (pickle). Standard library, numpy and opkit only.
"""
import os
import pickle
import sys


def main(request_path: str, result_path: str) -> None:
    with open(request_path, "rb") as f:
        req = pickle.load(f)
    sys.path[:0] = [p for p in req["sys_path"] if p not in sys.path]
    from pathlib import Path

    from opkit.framework.backward import sum_duplicates
    from opkit.framework.grad_maker import grad_var_name
    from opkit.framework.operator import create_op
    from opkit.framework.place import CPUPlace
    from opkit.framework.scope import Scope
    from opkit.framework.tensor import LoDTensor
    from opkit.plugins import exec_op_file
    from opkit.registry import all_op_types, op_info

    if req["op_type"] not in all_op_types():
        for path in req["files"]:
            folder = os.path.dirname(path)
            if folder not in sys.path:
                sys.path.insert(0, folder)
            exec_op_file(Path(path))
    place, scope = CPUPlace(), Scope()

    def put(name, data, lod=None):
        t = LoDTensor()
        t.set(data)
        if lod:
            t.set_lod(lod)
        scope.var(name).set_value(t)

    def get(name):
        var = scope.find_var(name)
        value = None if var is None else var.value()
        if isinstance(value, LoDTensor) and value.is_initialized():
            import numpy as np
            return np.array(value.numpy(), copy=True)
        return None

    ins = {}
    for slot, items in req["inputs"].items():
        ins[slot] = [n for n, _, _ in items]
        for name, data, lod in items:
            put(name, data, lod)
    op = create_op(req["op_type"], ins, req["outputs"], req["attrs"])
    op.run(scope, place)
    out_names = [n for names in req["outputs"].values() for n in names]
    result = {n: get(n) for n in out_names}
    if req["wrt"]:
        maker = op_info(req["op_type"]).grad_maker(req["op_type"], op.inputs, op.outputs,
                                                    op.attrs, frozenset(req["no_grad_set"]))
        grads = [create_op(d.type, d.inputs, d.outputs, d.attrs)
                 for d in sum_duplicates(list(maker()))]
        for n in out_names:
            cot = req["cot"].get(n)
            value = result.get(n)
            if cot is None and value is not None:
                import numpy as np
                cot = np.zeros_like(value)
            if cot is not None:
                var = scope.find_var(n)
                lod = var.value().lod if var is not None else None
                put(grad_var_name(n), cot, lod)
        for g in grads:
            g.run(scope, place)
        for n in req["wrt"]:
            result[grad_var_name(n)] = get(grad_var_name(n))
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("harness", "pytest")
                    or m in req.get("test_modules", ()))
    with open(result_path, "wb") as f:
        pickle.dump({"arrays": result, "loaded": loaded}, f)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
