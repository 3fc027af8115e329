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
            "num_waiting": "VARCHAR", "num_batched_tokens": "VARCHAR", "kv_usage": "VARCHAR"}') as j
    from rp_json_lines($path)
)
select
    $source_id, ln, line,
    coalesce(
        rp_json_line_error(line, j),
        rp_engine_perr(
            j.t, j.prompt_tokens, j.step, j.t_issue, j.t_done, j.prompt_computed,
            j.prompt_cached, j.decode_tokens, j.num_running, j.num_waiting,
            j.num_batched_tokens, j.kv_usage)),
    'canonical',
    rp_str(j.type), rp_time(j.t), rp_str(j.execution_id), rp_str(j.event),
    rp_num(j.prompt_tokens), rp_str(j.replica), rp_num(j.step), rp_time(j.t_issue),
    rp_time(j.t_done), rp_num(j.prompt_computed), rp_num(j.prompt_cached),
    rp_num(j.decode_tokens), rp_num(j.num_running), rp_num(j.num_waiting),
    rp_num(j.num_batched_tokens), rp_num(j.kv_usage)
from parsed
