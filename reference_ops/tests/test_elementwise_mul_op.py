import numpy as np

from reference_ops.tests import elementwise_cases as cases


class TestElementwiseMulOp(cases.ElementwiseCase):
    op = "elementwise_mul"
    fn = staticmethod(np.multiply)


globals().update(cases.broadcast_variants(TestElementwiseMulOp))
