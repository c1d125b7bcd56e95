"""fairpath.repair."""
