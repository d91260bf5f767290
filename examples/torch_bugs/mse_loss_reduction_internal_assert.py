"""aten::mse_loss given a reduction outside {0, 1, 2} (here -1) fails an INTERNAL ASSERT
("... INTERNAL ASSERT FAILED ... please report a bug to PyTorch") instead of refusing the
value with a message that names the argument.

Grade: crash on invalid input (the public `F.mse_loss` maps its string `reduction` to the
int and never passes -1; a caller of the aten op, torch.compile's decompositions or a C++
extension, reaches it). Found by opkit's `attrs` check on the torch backend (its
`attr_values` variant tries other values of an int attr).

Prints STILL SHOWS (an internal assert) or FIXED (a refusal naming `reduction`, or a value).
"""
import torch

a, b = torch.rand(3, dtype=torch.float64), torch.rand(3, dtype=torch.float64)
shows = False
for name, call in [("mse_loss", lambda: torch.ops.aten.mse_loss.default(a, b, -1)),
                   ("smooth_l1_loss", lambda: torch.ops.aten.smooth_l1_loss(a, b, -2, 1.0))]:
    try:
        call()
        text = ""
    except RuntimeError as exc:
        text = str(exc).splitlines()[0]
    print(f"aten::{name}(a, b, reduction<0): {text or 'no error'}")
    shows = shows or "INTERNAL ASSERT" in text
print("STILL SHOWS" if shows else "FIXED")
