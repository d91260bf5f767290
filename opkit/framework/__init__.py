"""The reference framework: places, tensors, scopes, the op registry, operators, programs."""
