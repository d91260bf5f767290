"""Fit a line: the Fluid guide's first program, on synthetic data.

13 features -> fc(1) -> square_error_cost -> mean -> SGD. The data is y = x @ w_true + b_true
plus noise; the learned weights approach the true ones.

    python examples/fit_a_line.py
"""
from __future__ import annotations

import numpy as np

import opkit


def make_data(n: int = 512, features: int = 13, noise: float = 0.01, seed: int = 0):
    rng = np.random.default_rng(seed)
    w_true = rng.uniform(-1, 1, (features, 1)).astype("float32")
    b_true = np.float32(0.5)
    xs = rng.normal(size=(n, features)).astype("float32")
    ys = (xs @ w_true + b_true + noise * rng.normal(size=(n, 1))).astype("float32")
    return xs, ys, w_true, b_true


def train(epochs: int = 30, batch_size: int = 32, learning_rate: float = 0.05, seed: int = 0,
          verbose: bool = True):
    xs, ys, w_true, b_true = make_data(seed=seed)
    main, startup = opkit.Program(), opkit.Program()
    startup.random_seed = seed + 1
    with opkit.program_guard(main, startup):
        x = opkit.layers.data("x", shape=[13], dtype="float32")
        y = opkit.layers.data("y", shape=[1], dtype="float32")
        pred = opkit.layers.fc(x, size=1, name="fc")
        loss = opkit.layers.mean(opkit.layers.square_error_cost(pred, y))
        opkit.optimizer.SGD(learning_rate=learning_rate).minimize(loss)
    scope = opkit.Scope()
    exe = opkit.Executor(opkit.CPUPlace())
    exe.run(startup, scope=scope)
    losses = []
    for epoch in range(epochs):
        epoch_losses = []
        for i in range(0, len(xs), batch_size):
            (value,) = exe.run(main, feed={"x": xs[i:i + batch_size], "y": ys[i:i + batch_size]},
                               fetch_list=[loss], scope=scope)
            epoch_losses.append(float(value.reshape(-1)[0]))
        losses.append(float(np.mean(epoch_losses)))
        if verbose:
            print(f"epoch {epoch:3d}  loss {losses[-1]:.6f}")
    w = scope.find_var("fc.w_0").get_tensor().numpy()
    b = scope.find_var("fc.b_0").get_tensor().numpy()
    return {"losses": losses, "w": w, "b": b, "w_true": w_true, "b_true": b_true}


if __name__ == "__main__":
    result = train()
    print("max |w - w_true| =", float(np.abs(result["w"] - result["w_true"]).max()))
    print("b =", float(result["b"][0]), "b_true =", float(result["b_true"]))
