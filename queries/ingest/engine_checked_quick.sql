-- engine_checked (ingest/engine_checked.sql) by a quick test: the same view, whose `reason` is
-- NULL for a record rp_engine_ok passes (ingest/engine_macros.sql: TRUE only where
-- rp_engine_reason finds nothing) with no read error of its own, and a placeholder for any
-- other. rp_engine_ok asks for prompt_tokens on every arrived event, rp_engine_reason only on a
-- canonical trace's (origin): a record of another origin is tested with a missing
-- prompt_tokens taken as 0. The driver makes it first; when its summary finds any placeholder,
-- it makes engine_checked again with every reason (relplan/ingest/driver.py, _summaries), so
-- the placeholder never reaches a reject or an error. On a small vLLM log
-- (tests/data/ingest/adapters/vllm_v1.log) the summary over the quick view took 14.5 ms of CPU,
-- over the full one 31 ms: DuckDB binds rp_engine_reason in every query that reads the view.
-- params:
create or replace temp view engine_checked as
select
    *,
    case
        when perr is null and rp_engine_ok(
            type, t, execution_id, event,
            case when origin = 'canonical' then prompt_tokens else coalesce(prompt_tokens, 0) end,
            step, t_issue, t_done, prompt_computed, prompt_cached, decode_tokens, num_running,
            num_waiting, num_batched_tokens, kv_usage, elapsed_ms, num_preempted, prefix_queries,
            prefix_hits, output_tokens, cached_tokens, preemptions, max_tokens)
        then null
        else 'not checked yet (ingest/engine_checked.sql names the reason)'
    end as reason
from engine_typed
