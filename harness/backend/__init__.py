"""The backend contract (contract.py) and opkit's own implementation of it (native.py);
harness.backends dispatches to the run's backend, harness.testing checks one against the
contract. docs/architecture.md, "Backends"."""
