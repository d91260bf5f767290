"""Static checks (`opkit lint`) and the op-description compatibility checker (`opkit compat`)."""
