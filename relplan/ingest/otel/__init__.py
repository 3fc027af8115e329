"""OpenTelemetry traces of vLLM (OTLP JSON, Jaeger JSON)."""
