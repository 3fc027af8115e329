-- Engine records (event, step and stats) from JSON Lines, one text line at a time: the exact path.
-- Used in skip mode,
-- when the fast reader fails, and for files with blank lines. Every line keeps its number and
-- raw text; a line that is not a JSON object, or a field that does not convert, gets `perr`.
-- Blank lines are not records. Lines come from rp_json_lines (ingest/macros.sql): one VARCHAR
-- column with a delimiter (0x1F) that valid JSON never holds unescaped. Numbers given as
-- strings ("512") are accepted.
-- params: path, source_id
insert into stage_engine
with parsed as (
    select
        ln, line,
        rp_json_object(line, '{
            "type": "VARCHAR", "t": "VARCHAR", "execution_id": "VARCHAR", "event": "VARCHAR",
            "prompt_tokens": "VARCHAR", "replica": "VARCHAR", "step": "VARCHAR",
            "t_issue": "VARCHAR", "t_done": "VARCHAR", "prompt_computed": "VARCHAR",
            "prompt_cached": "VARCHAR", "decode_tokens": "VARCHAR", "num_running": "VARCHAR",
            "num_waiting": "VARCHAR", "num_batched_tokens": "VARCHAR", "kv_usage": "VARCHAR",
            "elapsed_ms": "VARCHAR", "num_preempted": "VARCHAR", "prefix_queries": "VARCHAR",
            "prefix_hits": "VARCHAR", "finish_reason": "VARCHAR", "output_tokens": "VARCHAR",
            "cached_tokens": "VARCHAR", "preemptions": "VARCHAR", "max_tokens": "VARCHAR"}') as j
    from rp_json_lines($path)
)
select
    $source_id, ln, line, coalesce(rp_json_line_error(line, j), rp_engine_perr(j)), 'canonical',
    unnest(rp_engine_typed(j))
from parsed
