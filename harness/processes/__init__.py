"""Process primitives: fork, a function in a fresh interpreter, the heap setting."""
