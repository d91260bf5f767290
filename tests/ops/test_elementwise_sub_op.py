import numpy as np

import elementwise_cases as cases


class TestElementwiseSubOp(cases.ElementwiseCase):
    op = "elementwise_sub"
    fn = staticmethod(np.subtract)


globals().update(cases.broadcast_variants(TestElementwiseSubOp))
