"""Custom ops for the torch backend's tests (registered on import, once per process)."""
import torch

SEEN = {}


@torch.library.custom_op("opkit_test::record_layout", mutates_args=())
def record_layout(x: torch.Tensor) -> torch.Tensor:
    SEEN["contiguous"] = x.is_contiguous()
    SEEN["stride"] = tuple(x.stride())
    return x * 2


@record_layout.register_fake
def _(x):
    return torch.empty_like(x)


@torch.library.custom_op("opkit_test::python_bug", mutates_args=())
def python_bug(x: torch.Tensor) -> torch.Tensor:
    return {}["missing"]                      # a bug in the kernel, not a refusal


@torch.library.custom_op("opkit_test::checked", mutates_args=())
def checked(x: torch.Tensor) -> torch.Tensor:
    torch._check(x.dim() == 2, lambda: f"checked: x must be 2-D, got {x.dim()}-D")
    return x + 1


@torch.library.custom_op("opkit_test::bad_fake", mutates_args=())
def bad_fake(x: torch.Tensor) -> torch.Tensor:
    return x.sin()


@bad_fake.register_fake
def _(x):
    return x.new_empty(x.shape[:-1])          # disagrees with the real kernel's shape


@torch.library.custom_op("opkit_test::good_fake", mutates_args=())
def good_fake(x: torch.Tensor) -> torch.Tensor:
    return x.sin()


@good_fake.register_fake
def _(x):
    return torch.empty_like(x)
