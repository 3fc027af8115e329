"""Metrics: OpenMetrics text, scrape logs, one /metrics scrape, Prometheus query_range and live pulls."""
