"""paddle.framework of opkit's facade: the mode probes (opkit runs neither PIR nor dygraph)
and Paddle's dtype names; the rest is a placeholder that skips the test using it."""
from paddle._facade import install_getattr
from paddle.fluid.framework import (convert_np_dtype_to_dtype_, in_dygraph_mode,  # noqa: F401
                                    in_dynamic_mode, in_pir_mode, use_pir_api)

install_getattr(globals())
