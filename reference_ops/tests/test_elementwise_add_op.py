import numpy as np

from reference_ops.tests import elementwise_cases as cases


class TestElementwiseAddOp(cases.ElementwiseCase):
    op = "elementwise_add"
    fn = staticmethod(np.add)


globals().update(cases.broadcast_variants(TestElementwiseAddOp))
