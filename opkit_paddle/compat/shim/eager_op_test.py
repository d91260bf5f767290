"""`eager_op_test` of opkit's Paddle-compatibility mode: Paddle 2.4/2.5's name of its OpTest
module (`from eager_op_test import OpTest`): the same as the mode's `op_test`."""
from op_test import *  # noqa: F401,F403
from op_test import OpTest, __all__  # noqa: F401
