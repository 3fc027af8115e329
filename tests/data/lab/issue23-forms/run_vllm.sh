#!/bin/sh
exec env VLLM_CPU_KVCACHE_SPACE=1 VLLM_LOGGING_LEVEL=DEBUG VLLM_LOG_STATS_INTERVAL=2 VLLM_COMPUTE_NANS_IN_LOGITS=1 \
  /work/main/.relplan-lab/venv/bin/python -m vllm.entrypoints.openai.api_server --model /work/main/.relplan-lab/model --served-model-name tiny-llama \
  --dtype float32 --host 127.0.0.1 --port 8000 --max-model-len 1024 --max-num-batched-tokens 2048 --max-num-seqs 16 \
  --block-size 128 --num-gpu-blocks-override 12 --max-num-queued-reqs 10 --max-num-queued-tokens 1500 \
  --enable-log-requests --max-log-len 64
