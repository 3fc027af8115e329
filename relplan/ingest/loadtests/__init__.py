"""Load-test results: GuideLLM benchmarks.json and `vllm bench serve` results."""
