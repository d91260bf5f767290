"""scale and dropout (inference) in float16 on CPU are not one rounding of the exact result:
`scale` rounds scale * x to float16 before adding bias, and `dropout` rounds the factor
(1 - dropout_prob) to float16 before multiplying, so some elements land more than half a
float16 ulp from the float64 value of the same formula on the same float16 inputs.
A float16 kernel that computes in float32 and rounds once is within half an ulp everywhere
(PyTorch's CPU half kernels compute through a float "opmath" type; not verified here: torch
is not installed).
"""
import os
import sys

os.environ["FLAGS_enable_pir_api"] = "0"
import numpy as np  # noqa: E402
import paddle  # noqa: E402

paddle.enable_static()


def run(op, attrs, x, outputs=("Out",)):
    main = paddle.static.Program()
    block = main.global_block()
    xv = block.create_var(name="x", shape=list(x.shape), dtype="float16")
    outs = {name: [block.create_var(name=name.lower(), dtype="float16" if name == "Out"
                                    else "uint8")] for name in outputs}
    block.append_op(type=op, inputs={"X": [xv]}, outputs=outs, attrs=attrs)
    got = paddle.static.Executor(paddle.CPUPlace()).run(main, feed={"x": x},
                                                        fetch_list=["out"])[0]
    return np.asarray(got)


def worst_ulps(got, exact):
    """Largest |got - exact| in float16 ulps of got."""
    ulp = np.spacing(np.abs(got).astype(np.float16)).astype(np.float64)
    return float(np.max(np.abs(got.astype(np.float64) - exact) / ulp))


x = np.random.default_rng(0).uniform(-3, 3, (20, 10)).astype(np.float16)
x64 = x.astype(np.float64)
shown = []
got = run("scale", {"scale": 1.5, "bias": 0.3, "bias_after_scale": True}, x)
w = worst_ulps(got, x64 * 1.5 + np.float64(np.float32(0.3)))
if w > 0.5:
    shown.append(f"scale(x, 1.5, bias 0.3): {w:.2f} ulp off")
got = run("dropout", {"dropout_prob": 0.35, "is_test": True,
                      "dropout_implementation": "downgrade_in_infer"}, x, ("Out", "Mask"))
w = worst_ulps(got, x64 * (1 - np.float64(np.float32(0.35))))
if w > 0.5:
    shown.append(f"dropout(x, p=0.35, inference): {w:.2f} ulp off")
if shown:
    print("STILL SHOWS: float16 on CPU is not one rounding of the exact result: " +
          "; ".join(shown))
    sys.exit(1)
print("FIXED: float16 scale and dropout are within half an ulp")
