"""A `while` loop in a program: partial sums of a geometric series, kept in a tensor array.

    acc = 0; term = x; i = 0
    while i < n:
        acc = acc + term          # elementwise
        partial[i] = acc          # array_write
        term = term * ratio
        i += 1

The loop is a `while` op whose sub-block runs once per iteration in a fresh step scope
(a child of the run's scope); `i`, `acc`, `term` and `cond` live in the enclosing block, so
the updates persist from one iteration to the next.

    python examples/while_loop.py
"""
from __future__ import annotations

import numpy as np

import opkit
from opkit import layers
from opkit.control_flow import While


def build(steps: int = 10, ratio: float = 0.5, width: int = 4):
    main, startup = opkit.Program(), opkit.Program()
    with opkit.program_guard(main, startup):
        x = layers.data("x", shape=[width], dtype="float64")
        i = layers.fill_constant([1], "int64", 0)
        n = layers.fill_constant([1], "int64", steps)
        acc = layers.scale(x, scale=0.0)             # zeros of x's shape
        term = layers.scale(x, scale=1.0)            # a copy of x
        partial = layers.create_array("float64")
        cond = layers.less_than(i, n)
        loop = While(cond)
        with loop.block():
            block = main.current_block()
            new_acc = layers.elementwise_add(acc, term)
            block.append_op("scale", inputs={"X": new_acc}, outputs={"Out": acc},
                            attrs={"scale": 1.0})             # acc = new_acc
            layers.array_write(acc, i, partial)
            block.append_op("scale", inputs={"X": term}, outputs={"Out": term},
                            attrs={"scale": float(ratio)})    # term *= ratio
            layers.increment(i, in_place=True)
            layers.less_than(i, n, cond=cond)
    return main, startup, {"x": x, "i": i, "acc": acc, "partial": partial}


def run(steps: int = 10, ratio: float = 0.5, seed: int = 0, verbose: bool = True):
    main, startup, v = build(steps, ratio)
    xs = np.random.default_rng(seed).uniform(1, 2, (3, 4))
    exe, scope = opkit.Executor(opkit.CPUPlace()), opkit.Scope()
    exe.run(startup, scope=scope)
    i, acc, partial = exe.run(main, feed={"x": xs}, fetch_list=[v["i"], v["acc"], v["partial"]],
                              scope=scope)
    expected = xs * (1 - ratio ** steps) / (1 - ratio)
    if verbose:
        print(f"iterations: {int(i[0])}")
        for t, p in enumerate(partial):
            print(f"  partial[{t}][0, 0] = {p[0, 0]:.6f}")
        print("max |acc - closed form| =", float(np.abs(acc - expected).max()))
    return {"iterations": int(i[0]), "acc": acc, "partial": partial, "expected": expected,
            "x": xs, "program": main}


if __name__ == "__main__":
    run()
