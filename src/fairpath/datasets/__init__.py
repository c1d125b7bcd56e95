"""fairpath.datasets."""
