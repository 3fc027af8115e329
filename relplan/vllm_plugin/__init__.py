"""relplan-vllm: a vLLM stat-logger plugin that writes relplan's engine trace (docs/vllm-plugin.md).

`writer` is standard library only and is what the tests exercise without vLLM; `logger` holds
the class vLLM loads through its `vllm.stat_logger_plugins` entry-point group and imports vLLM.
Nothing here imports the rest of relplan.
"""
