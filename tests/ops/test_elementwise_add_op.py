import numpy as np

import elementwise_cases as cases


class TestElementwiseAddOp(cases.ElementwiseCase):
    op = "elementwise_add"
    fn = staticmethod(np.add)


globals().update(cases.broadcast_variants(TestElementwiseAddOp))
