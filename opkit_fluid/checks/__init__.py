"""The checks of Fluid's own concepts, each one module defining `CHECK` and registered as an
entry point of the group `opkit.checks` (pyproject.toml): `lod` (with its cases,
`lod_cases`), `sparse`, `no_need_buffer`, `inplace`, `plan`, `infer_shape`, `sbp`."""
import os

from harness.reporting.messages import framework_code

# a check's own frames (as the harness's) are not the op's code
framework_code(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
