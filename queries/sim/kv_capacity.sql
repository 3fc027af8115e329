-- The engine's KV cache as vLLM reports it (relplan/sim/costfit.py): the labels of the last
-- vllm:cache_config_info sample (an info gauge; vLLM 0.32 labels it with block_size,
-- num_gpu_blocks and kv_cache_size_tokens among others). Columns: block_size, num_blocks,
-- size_tokens (null when the label is absent or not a number).
-- params:
with last as (
    select arg_max(labels, t) as labels
    from metric_samples
    where name = 'vllm:cache_config_info'
)
select try_cast(labels['block_size'] as bigint) as block_size,
       try_cast(labels['num_gpu_blocks'] as bigint) as num_blocks,
       try_cast(labels['kv_cache_size_tokens'] as bigint) as size_tokens
from last
where labels is not null
