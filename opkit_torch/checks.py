"""The torch backend's answers to the harness's checks (Backend.check_override): None (the
check runs as it is on torch), or a skip reason where the check judges something a torch
op does not have."""
from __future__ import annotations

__all__ = ["override", "SKIPS"]

#: check -> why it does not apply to a torch op
SKIPS = {
    "lod": "torch tensors carry no LoD",
    "sparse": "the torch backend feeds dense tensors only (no SelectedRows)",
    "sbp": "SBP signatures are opkit declarations; torch ops declare none",
    "no_need_buffer": "no_need_buffer is an opkit declaration; torch's autograd saves what "
                      "its backward needs",
    "plan": "opkit's prepared plans do not run torch ops",
    "infer_shape": "torch ops have no compile-time infer_shape (describe judges the "
                   "fake/meta kernel)",
}


def override(name: str):
    return SKIPS.get(name)
