"""fairpath.parity."""
