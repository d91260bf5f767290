"""torchvision.ops.ps_roi_pool never pools the feature map's last row and last column,
and its backward gives them a gradient anyway.

The CPU forward kernel clips each bin's window to [0, height - 1) x [0, width - 1)
(`std::min(..., height - 1)`), where roi_pool and ps_roi_pool's own backward clip to
[0, height) x [0, width): a bin that covers the last row or column averages fewer pixels
than it covers (a 2 x 2 bin becomes 1 x 1, a bin on the last row only becomes empty: 0),
and the backward spreads the gradient over the window the forward did not read, so
`torch.autograd.gradcheck` fails on any box that reaches the map's border.

Grade: bug in the public API (wrong values and a gradient that is not the forward's).
Found by opkit's `output` and `grad` checks on the torch backend (docs/torch.md,
"torchvision"): box (0, 0, 3.9, 3.9) on a 4 x 4 map, 2 x 2 bins.

Prints STILL SHOWS (the last row/column left out, gradcheck failing) or FIXED.
"""
import torch
from torchvision.ops import ps_roi_pool

torch.manual_seed(0)
x = torch.rand(1, 4, 4, 4, dtype=torch.float64, requires_grad=True)   # 1 x 2 x 2 bins
box = torch.tensor([[0, 0.0, 0.0, 3.9, 3.9]], dtype=torch.float64)      # the whole map
out = ps_roi_pool(x, box, output_size=2, spatial_scale=1.0)
# bin (i, j) reads channel 2 * i + j over rows 2i..2i+1, columns 2j..2j+1
want = torch.stack([x[0, 2 * i + j, 2 * i:2 * i + 2, 2 * j:2 * j + 2].mean()
                    for i in range(2) for j in range(2)]).reshape(2, 2)
ok_values = torch.allclose(out[0, 0], want)
ok_grad = torch.autograd.gradcheck(lambda t: ps_roi_pool(t, box, 2, 1.0), (x,),
                                   raise_exception=False)
print(f"ps_roi_pool bins:   {out[0, 0].detach().flatten().tolist()}")
print(f"means of the bins:  {want.detach().flatten().tolist()}")
print(f"gradcheck passes: {ok_grad}")
print("STILL SHOWS" if not (ok_values and ok_grad) else "FIXED")
