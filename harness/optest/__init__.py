"""The OpTest surface: the class, its own test methods, reproducers."""
