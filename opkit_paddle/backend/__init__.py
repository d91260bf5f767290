"""The Paddle backend: PaddlePaddle's own CPU kernels behind opkit's op seam (docs/paddle.md)."""
