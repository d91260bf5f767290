"""The checks of Fluid's own concepts, each one module defining `CHECK` and registered as an
entry point of the group `opkit.checks` (pyproject.toml): `lod` (with its cases,
`lod_cases`), `sparse`, `no_need_buffer`, `declared_inputs`, `inplace`, `plan`,
`infer_shape`, `sbp`, `clean_process` (with its child script, `clean_child`), and the
checks of grad ops as op descriptions (capability `grad_ops`): `double_grad`,
`grad_outputs` (with `grad_declared`)."""
import os

from harness.reporting.messages import framework_code

# a check's own frames (as the harness's) are not the op's code
framework_code(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
