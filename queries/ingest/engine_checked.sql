-- The staged engine records (engine_typed) with the reason each breaks the contract, NULL
-- when it is fine: the reader's own reason, else rp_engine_reason (ingest/engine_macros.sql).
-- Made only when the quick view of ingest/engine_checked_quick.sql refused some record
-- (relplan/ingest/driver.py, _summaries).
-- params:
create or replace temp view engine_checked as
select
    *,
    coalesce(perr, rp_engine_reason(
        type, t, execution_id, event, prompt_tokens, step, t_issue, t_done, prompt_computed,
        prompt_cached, decode_tokens, num_running, num_waiting, num_batched_tokens, kv_usage,
        elapsed_ms, num_preempted, prefix_queries, prefix_hits, output_tokens, cached_tokens,
        preemptions, max_tokens, origin
    )) as reason
from engine_typed
