-- Engine records (event, step and stats) from JSON Lines, one text line at a time: the exact path.
-- Used in skip mode,
-- when the fast reader fails, and for files with blank lines. Every line keeps its number and
-- raw text; a line that is not a JSON object, or a field that does not convert, gets `perr`.
-- Blank lines are not records. Lines are read as one VARCHAR column with a delimiter (0x1F)
-- that valid JSON never holds unescaped. Numbers given as strings ("512") are accepted.
-- params: path, source_id
insert into stage_engine
with lines as (
    select ordinality as ln, line
    from read_csv(
        $path, columns = {'line': 'VARCHAR'}, header = false, delim = E'\x1f', quote = '',
        escape = '', auto_detect = false, max_line_size = 16777216
    ) with ordinality
),
parsed as (
    select
        ln, line,
        case when json_valid(line) and json_type(line) = 'OBJECT' then json_transform(line, '{
            "type": "VARCHAR", "t": "VARCHAR", "execution_id": "VARCHAR", "event": "VARCHAR",
            "prompt_tokens": "VARCHAR", "replica": "VARCHAR", "step": "VARCHAR",
            "t_issue": "VARCHAR", "t_done": "VARCHAR", "prompt_computed": "VARCHAR",
            "prompt_cached": "VARCHAR", "decode_tokens": "VARCHAR", "num_running": "VARCHAR",
            "num_waiting": "VARCHAR", "num_batched_tokens": "VARCHAR", "kv_usage": "VARCHAR"}') end as j
    from lines
    where trim(coalesce(line, '')) <> ''
)
select
    $source_id, ln, line,
    case
        when not json_valid(line) then 'malformed JSON; expected one JSON object per line'
        when j is null then 'expected a JSON object, got a JSON ' || lower(json_type(line))
        else nullif(concat_ws('; ',
        rp_bad_time('t', j.t), rp_bad_num('prompt_tokens', j.prompt_tokens),
        rp_bad_num('step', j.step), rp_bad_time('t_issue', j.t_issue),
        rp_bad_time('t_done', j.t_done), rp_bad_num('prompt_computed', j.prompt_computed),
        rp_bad_num('prompt_cached', j.prompt_cached),
        rp_bad_num('decode_tokens', j.decode_tokens), rp_bad_num('num_running', j.num_running),
        rp_bad_num('num_waiting', j.num_waiting),
        rp_bad_num('num_batched_tokens', j.num_batched_tokens),
        rp_bad_num('kv_usage', j.kv_usage)), '')
    end,
    'canonical',
    rp_str(j.type), rp_time(j.t), rp_str(j.execution_id), rp_str(j.event),
    rp_num(j.prompt_tokens), rp_str(j.replica), rp_num(j.step), rp_time(j.t_issue),
    rp_time(j.t_done), rp_num(j.prompt_computed), rp_num(j.prompt_cached),
    rp_num(j.decode_tokens), rp_num(j.num_running), rp_num(j.num_waiting),
    rp_num(j.num_batched_tokens), rp_num(j.kv_usage)
from parsed
