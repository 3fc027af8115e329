"""Gateway access logs: Envoy (JSON and text), nginx, Kong, LiteLLM, and any log through a mapping."""
