"""Running a run's tasks: the fork pool, checks in this process, the pytest plugin's zygote, --fuzz."""
