"""The runtime checks of opkit test."""
