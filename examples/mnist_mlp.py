"""MNIST-style digit classification with a multi-layer perceptron.

784 pixels -> fc(128, relu) -> fc(64, relu) -> fc(10, softmax) -> cross_entropy -> SGD, with
`accuracy` (top_k + accuracy ops) fetched alongside the loss.

No dataset is downloaded: the digits are synthetic 28x28 images drawn from a 5x7 bitmap font,
each randomly shifted, thickened, scaled in brightness, with pixel noise and dropped pixels
(so the classes overlap and the task is not linearly trivial). Pass your own arrays to
`train(data=(train_x, train_y, test_x, test_y))` to use the real MNIST (x: float32 [N, 784]
in [0, 1], y: int64 [N, 1]).

    python examples/mnist_mlp.py
"""
from __future__ import annotations

import numpy as np

import opkit

_FONT = {  # 5 columns x 7 rows per digit
    0: ["01110", "10001", "10011", "10101", "11001", "10001", "01110"],
    1: ["00100", "01100", "00100", "00100", "00100", "00100", "01110"],
    2: ["01110", "10001", "00001", "00010", "00100", "01000", "11111"],
    3: ["11111", "00010", "00100", "00010", "00001", "10001", "01110"],
    4: ["00010", "00110", "01010", "10010", "11111", "00010", "00010"],
    5: ["11111", "10000", "11110", "00001", "00001", "10001", "01110"],
    6: ["00110", "01000", "10000", "11110", "10001", "10001", "01110"],
    7: ["11111", "00001", "00010", "00100", "01000", "01000", "01000"],
    8: ["01110", "10001", "10001", "01110", "10001", "10001", "01110"],
    9: ["01110", "10001", "10001", "01111", "00001", "00010", "01100"],
}


def _glyphs() -> np.ndarray:
    """[10, 28, 28] clean digits: each font pixel a 3x3 block, centred."""
    out = np.zeros((10, 28, 28), dtype=np.float32)
    for d, rows in _FONT.items():
        bitmap = np.array([[c == "1" for c in r] for r in rows], dtype=np.float32)
        big = np.kron(bitmap, np.ones((3, 3), dtype=np.float32))     # 21 x 15
        out[d, 3:24, 6:21] = big
    return out


def make_data(n: int, seed: int = 0):
    """n noisy digits: (x float32 [n, 784] in [0, 1], y int64 [n, 1])."""
    rng = np.random.default_rng(seed)
    glyphs = _glyphs()
    labels = rng.integers(0, 10, n)
    images = np.empty((n, 28, 28), dtype=np.float32)
    for k, d in enumerate(labels):
        img = glyphs[d]
        if rng.random() < 0.5:                                         # thicker strokes
            img = np.maximum(img, np.roll(img, 1, axis=int(rng.integers(0, 2))))
        img = np.roll(img, (int(rng.integers(-3, 4)), int(rng.integers(-4, 5))), axis=(0, 1))
        img = img * rng.uniform(0.5, 1.0)
        img = img * (rng.random((28, 28)) > 0.15)                      # dropped pixels
        img = img + rng.normal(0, 0.2, (28, 28))                       # pixel noise
        images[k] = np.clip(img, 0, 1)
    return images.reshape(n, 784), labels.reshape(n, 1).astype(np.int64)


def build(learning_rate: float = 0.1, seed: int = 0):
    main, startup = opkit.Program(), opkit.Program()
    startup.random_seed = seed + 1
    with opkit.program_guard(main, startup):
        image = opkit.layers.data("image", shape=[784], dtype="float32")
        label = opkit.layers.data("label", shape=[1], dtype="int64")
        h1 = opkit.layers.fc(image, size=128, act="relu", name="fc1")
        h2 = opkit.layers.fc(h1, size=64, act="relu", name="fc2")
        prob = opkit.layers.fc(h2, size=10, act="softmax", name="fc3")
        loss = opkit.layers.mean(opkit.layers.cross_entropy(prob, label))
        acc = opkit.layers.accuracy(prob, label)
        test_program = main.clone()                    # forward only: before minimize
        opkit.optimizer.SGD(learning_rate=learning_rate).minimize(loss)
    return main, startup, test_program, loss, acc


def train(epochs: int = 5, batch_size: int = 64, learning_rate: float = 0.1, seed: int = 0,
          n_train: int = 6000, n_test: int = 1000, data=None, verbose: bool = True):
    if data is None:
        train_x, train_y = make_data(n_train, seed)
        test_x, test_y = make_data(n_test, seed + 1000)
    else:
        train_x, train_y, test_x, test_y = data
    main, startup, test_program, loss, acc = build(learning_rate, seed)
    exe, scope = opkit.Executor(opkit.CPUPlace()), opkit.Scope()
    exe.run(startup, scope=scope)
    rng = np.random.default_rng(seed)
    losses, train_accs = [], []
    for epoch in range(epochs):
        order = rng.permutation(len(train_x))
        epoch_loss, epoch_acc = [], []
        for i in range(0, len(order), batch_size):
            idx = order[i:i + batch_size]
            value, accuracy = exe.run(main, feed={"image": train_x[idx], "label": train_y[idx]},
                                      fetch_list=[loss, acc], scope=scope)
            epoch_loss.append(float(value.reshape(-1)[0]))
            epoch_acc.append(float(accuracy.reshape(-1)[0]))
        losses.append(float(np.mean(epoch_loss)))
        train_accs.append(float(np.mean(epoch_acc)))
        if verbose:
            print(f"epoch {epoch}  loss {losses[-1]:.4f}  train accuracy {train_accs[-1]:.4f}")
    (test_acc,) = exe.run(test_program, feed={"image": test_x, "label": test_y},
                          fetch_list=[acc.name], scope=scope)
    test_acc = float(test_acc.reshape(-1)[0])
    if verbose:
        print(f"test accuracy {test_acc:.4f}")
    return {"losses": losses, "train_accuracy": train_accs, "test_accuracy": test_acc}


if __name__ == "__main__":
    train()
