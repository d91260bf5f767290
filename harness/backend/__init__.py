"""The backend contract (contract.py) and opkit's own implementation of it (native.py);
harness.backend.dispatch dispatches to the run's backend, harness.testing checks one against the
contract. docs/architecture.md, "Backends"."""
