def pytest_configure(config):
    config.addinivalue_line("markers", "slow: a test that takes tens of seconds (pre-commit install)")
