"""fairpath.text."""
