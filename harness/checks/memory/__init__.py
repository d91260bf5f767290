"""Checks of buffers: inputs written, aliasing, ownership, inplace, declared and unneeded inputs."""
