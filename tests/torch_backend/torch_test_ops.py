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


@torch.library.custom_op("opkit_test::sneaky_write", mutates_args=())
def sneaky_write(x: torch.Tensor) -> torch.Tensor:
    out = x * 2
    x.mul_(0.5)                              # writes its input, the schema says it does not
    return out


@sneaky_write.register_fake
def _(x):
    return torch.empty_like(x)


@torch.library.custom_op("opkit_test::declared_write", mutates_args=("x",))
def declared_write(x: torch.Tensor) -> torch.Tensor:
    out = x * 2
    x.mul_(0.5)
    return out


@declared_write.register_fake
def _(x):
    return torch.empty_like(x)


# a view returned where the schema promises a new tensor: torch.library.custom_op refuses
# that at run time, a lower-level registration (define + impl, as C++ extensions do) does not
_LIB = torch.library.Library("opkit_test", "FRAGMENT")
_LIB.define("flat_view(Tensor x) -> Tensor")
_LIB.impl("flat_view", lambda x: x.view(-1), "CompositeExplicitAutograd")
_LIB.define("flat_copy(Tensor x) -> Tensor")
_LIB.impl("flat_copy", lambda x: x.reshape(-1).clone(), "CompositeExplicitAutograd")


def _double(name, factor):
    """x**3 with a backward whose own derivative is `factor` times the true one (the first
    order is right: 3x^2 * g; its grad-of-grad goes through a custom Function)."""

    class Square(torch.autograd.Function):          # 3x^2 with a chosen derivative
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return 3 * x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 6 * x * factor

    @torch.library.custom_op(f"opkit_test::{name}", mutates_args=())
    def op(x: torch.Tensor) -> torch.Tensor:
        return x ** 3

    @op.register_fake
    def _(x):
        return torch.empty_like(x)

    def setup(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * Square.apply(x)

    op.register_autograd(backward, setup_context=setup)
    return op


wrong_double = _double("wrong_double", 0.5)
right_double = _double("right_double", 1.0)


def _double_raising(name, message):
    """x**3 whose first-order backward is right and whose second order raises `message`."""

    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return 3 * x * x

        @staticmethod
        def backward(ctx, g):
            raise RuntimeError(message)

    @torch.library.custom_op(f"opkit_test::{name}", mutates_args=())
    def op(x: torch.Tensor) -> torch.Tensor:
        return x ** 3

    @op.register_fake
    def _(x):
        return torch.empty_like(x)

    def setup(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * Square.apply(x)

    op.register_autograd(backward, setup_context=setup)
    return op


# as torchvision's deform_conv2d says it: a declared lack, not a failure
no_double = _double_raising("no_double", "double backwards on no_double not supported")
broken_double = _double_raising("broken_double", "index 7 is out of bounds for dimension 0")


def _positives(name, fake_dtype):
    """The positive elements of x (a size the values decide), as nms's kept boxes."""

    @torch.library.custom_op(f"opkit_test::{name}", mutates_args=())
    def op(x: torch.Tensor) -> torch.Tensor:
        return x[x > 0].clone()

    @op.register_fake
    def _(x):
        n = torch.library.get_ctx().new_dynamic_size()
        return x.new_empty((n,), dtype=fake_dtype or x.dtype)

    return op


positives = _positives("positives", None)
positives_bad_fake = _positives("positives_bad_fake", torch.float32)


@torch.library.custom_op("opkit_test::scaled_no_bf16", mutates_args=())
def scaled_no_bf16(x: torch.Tensor, factor: int) -> torch.Tensor:
    """x * factor; no bfloat16 kernel, said as an ATen kernel says it; `factor` has no
    default, so kernel_places cannot probe it without a declared sample."""
    if x.dtype == torch.bfloat16:
        raise RuntimeError("\"scaled_no_bf16\" not implemented for 'BFloat16'")
    return x * factor


@scaled_no_bf16.register_fake
def _(x, factor):
    return torch.empty_like(x)


def _first_order_raising(name, message):
    """2 * x whose autograd raises `message` (as torchvision's backward ops do)."""

    @torch.library.custom_op(f"opkit_test::{name}", mutates_args=())
    def op(x: torch.Tensor) -> torch.Tensor:
        return 2 * x

    @op.register_fake
    def _(x):
        return torch.empty_like(x)

    def backward(ctx, g):
        raise RuntimeError(message)

    op.register_autograd(backward, setup_context=lambda ctx, inputs, output: None)
    return op


backward_only = _first_order_raising("backward_only",
                                     "double backwards on backward_only not supported")
backward_broken = _first_order_raising("backward_broken",
                                       "index 7 is out of bounds for dimension 0")
