"""depthwise_conv2d: conv2d with groups == input channels (Paddle registers it as the same
op class and, on CPU, the same GEMM kernel); proto, shapes and kernels are conv2d's."""
from opkit import register_kernel, register_operator
from reference_ops.conv2d_op import (Conv2DGradMaker, Conv2DGradOp, Conv2DOp, Conv2DOpMaker,
                                     conv2d_grad_kernel, conv2d_kernel)


class DepthwiseConv2DOpMaker(Conv2DOpMaker):
    def make(self):
        super().make()
        self.add_comment("Depthwise convolution: conv2d whose `groups` is usually the number "
                         "of input channels (each input channel convolved with its own "
                         "filters).\n\n" + self.proto.comment)


register_operator("depthwise_conv2d", Conv2DOp, DepthwiseConv2DOpMaker,
                  grad_maker=Conv2DGradMaker)
register_operator("depthwise_conv2d_grad", Conv2DGradOp)
register_kernel("depthwise_conv2d", place=("CPU", "GPU"),
                dtypes=("float32", "float64"))(conv2d_kernel)
register_kernel("depthwise_conv2d_grad", place=("CPU", "GPU"),
                dtypes=("float32", "float64"))(conv2d_grad_kernel)


# -- parallel signatures (docs/sbp.md) -------------------------------------------------------
from opkit import register_sbp  # noqa: E402
from opkit.sbp import Signature, broadcast, partial_sum, split  # noqa: E402
from reference_ops._sbp import G  # noqa: E402

# batch split only: a channel split would need attr groups per device
register_sbp("depthwise_conv2d",
             Signature({"Input": split(0), "Filter": broadcast, "Output": split(0)}))
register_sbp("depthwise_conv2d_grad",
             Signature({"Input": split(0), "Filter": broadcast, G("Output"): split(0),
                        G("Input"): split(0), G("Filter"): partial_sum}))
