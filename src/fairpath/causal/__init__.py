"""fairpath.causal."""
