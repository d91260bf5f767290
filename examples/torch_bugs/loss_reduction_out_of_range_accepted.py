"""aten::l1_loss, aten::huber_loss, aten::binary_cross_entropy (and smooth_l1_loss) take
the reduction as an int enum (0 none, 1 mean, 2 sum) and accept any other value without a
word: reduction=3 or -1 returns the unreduced loss, as if it were 0 ("none"). aten::mse_loss
fails an internal assert on the same value (mse_loss_reduction_internal_assert.py): the
losses do not agree on what an invalid reduction is.

Grade: contract difference (invalid input accepted: torch.nn.functional's losses take the
reduction as a string and map it, so the public API is not affected; the aten ops, which
torch.library users and compilers call, are). Found by opkit's `attrs` and `explore` checks
(`opkit test aten::l1_loss --backend torch`: reduction=3 gives shape (4, 3), expected ()).

Prints STILL SHOWS (reduction=3 returns the unreduced loss) or FIXED (it is refused).
"""
import torch

x, y = torch.rand(4, 3, dtype=torch.float64), torch.rand(4, 3, dtype=torch.float64)
shown = []
for name, call in [("l1_loss", lambda r: torch.ops.aten.l1_loss(x, y, r)),
                   ("huber_loss", lambda r: torch.ops.aten.huber_loss(x, y, r, 1.0)),
                   ("binary_cross_entropy",
                    lambda r: torch.ops.aten.binary_cross_entropy(x, y, None, r))]:
    try:
        out = call(3)
    except RuntimeError as exc:
        print(f"{name}(reduction=3): refused: {str(exc).splitlines()[0]}")
        continue
    print(f"{name}(reduction=3): shape {tuple(out.shape)} (reduction=0 gives "
          f"{tuple(call(0).shape)}, 1 gives {tuple(call(1).shape)})")
    shown.append(tuple(out.shape) == tuple(call(0).shape))
print("STILL SHOWS" if any(shown) else "FIXED")
