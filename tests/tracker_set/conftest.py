# The tracker set's broken ops and their OpTests: `python tests/tracker_set/catch_rate.py`
# and tests/harness/test_laws.py run them; plain pytest must not (they fail on purpose).
collect_ignore_glob = ["tracker_*.py", "catch_rate.py"]
