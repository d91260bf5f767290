"""aten::native_batch_norm does not check the sizes of `weight`, `bias`, `running_mean`
and `running_var` against the input's channel count: given a 1-element `weight` for a
3-channel input it reads past the tensor's end (here: the next elements of the storage the
1-element view lives in), and in training mode it writes the running statistics past the
end of a too-short `running_mean` (outside the tensor: neighbouring memory, or a crash).
`torch.nn.functional.batch_norm` checks ("weight should contain 3 elements not 1"); the
aten op, which torch.library users, decompositions and compilers call, does not. opkit's
`explore` check crashed its worker (SIGABRT) on derived cases of this op (`opkit test
aten::native_batch_norm --backend torch`); this reproducer is the plain-torch follow-up.

Grade: crash on invalid input (memory-unsafe: an out-of-bounds read and write instead of a
refusal; the public API is not affected).

Prints STILL SHOWS (the 1-element weight's output reads the storage's next elements, and
the training run writes past a 1-element running_mean) or FIXED (both refused).
"""
import torch

torch.manual_seed(0)
x = torch.rand(6, 3, dtype=torch.float64)
ones, zeros = torch.ones(3, dtype=torch.float64), torch.zeros(3, dtype=torch.float64)
storage = torch.arange(1.0, 11.0, dtype=torch.float64)
shows = []
try:   # evaluation mode, weight = a 1-element view of [1, 2, 3, ...]
    out = torch.ops.aten.native_batch_norm(x, storage[:1], zeros, zeros, ones, False, 0.1,
                                           1e-5)[0]
    ref = torch.ops.aten.native_batch_norm(x, ones, zeros, zeros, ones, False, 0.1, 1e-5)[0]
    scale = (out / ref)[0].tolist()
    print(f"1-element weight for 3 channels: per-channel scale {[round(s, 3) for s in scale]} "
          "(the storage's next elements)")
    shows.append(scale[1] != 1.0)
except RuntimeError as exc:
    print(f"1-element weight: refused: {str(exc).splitlines()[0]}")
neighbour = torch.full((10,), 7.0, dtype=torch.float64)
try:   # training mode, running_mean = a 1-element view: the update writes 3 elements
    torch.ops.aten.native_batch_norm(x, ones, zeros, neighbour[:1], ones.clone(), True, 0.5,
                                     1e-5)
    print(f"1-element running_mean, training: the storage after it is now "
          f"{[round(v, 3) for v in neighbour[:4].tolist()]} (was 7.0)")
    shows.append(neighbour[1].item() != 7.0)
except RuntimeError as exc:
    print(f"1-element running_mean: refused: {str(exc).splitlines()[0]}")
print("STILL SHOWS" if any(shows) else "FIXED")
