#!/bin/sh
exec timeout 400 env VLLM_CPU_KVCACHE_SPACE=1 VLLM_LOG_STATS_INTERVAL=2 \
  /work/main/.relplan-lab/venv/bin/python -m vllm.entrypoints.openai.api_server --model /work/main/.relplan-lab/model --served-model-name tiny-llama \
  --dtype float32 --host 127.0.0.1 --port 8001 --max-model-len 1024 --max-num-seqs 16 \
  --data-parallel-size 2 --aggregate-engine-logging --enable-log-requests --max-log-len 64
