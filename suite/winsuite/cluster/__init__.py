"""Cluster targets: a kubeconfig (real cluster), kind, and the embedded local cluster."""
