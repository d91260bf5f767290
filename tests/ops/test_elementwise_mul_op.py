import numpy as np

import elementwise_cases as cases


class TestElementwiseMulOp(cases.ElementwiseCase):
    op = "elementwise_mul"
    fn = staticmethod(np.multiply)


globals().update(cases.broadcast_variants(TestElementwiseMulOp))
