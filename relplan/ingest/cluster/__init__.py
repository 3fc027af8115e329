"""Cluster events: Kubernetes events."""
