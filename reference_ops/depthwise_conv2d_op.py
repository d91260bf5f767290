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
