"""Code that runs on the clusters (not on the deploying machine)."""
