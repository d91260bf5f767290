"""Static checks (`opkit lint`) and the op-desc compatibility checker (`opkit compat`).

Kept import-free on purpose: `opkit lint` on one file must start fast.
"""
