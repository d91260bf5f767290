import numpy as np

from reference_ops.tests import elementwise_cases as cases


class TestElementwiseSubOp(cases.ElementwiseCase):
    op = "elementwise_sub"
    fn = staticmethod(np.subtract)


globals().update(cases.broadcast_variants(TestElementwiseSubOp))
