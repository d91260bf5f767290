"""What a check's result is and how it is worded."""
