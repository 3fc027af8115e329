-- Proxy attempts from JSON Lines, one text line at a time: the exact path. Used in skip mode,
-- when the fast reader fails, and for files with blank lines. Every line keeps its number and
-- raw text; a line that is not a JSON object, or a field that does not convert, gets `perr`.
-- Blank lines are not records. Lines come from rp_json_lines (ingest/macros.sql): one VARCHAR
-- column with a delimiter (0x1F) that valid JSON never holds unescaped. Numbers given as
-- strings ("512") are accepted.
-- params: path, source_id
insert into stage_proxy
with parsed as (
    select
        ln, line,
        rp_json_object(line, '{
            "call_id": "VARCHAR", "attempt": "VARCHAR", "t_planned": "VARCHAR",
            "t_sent": "VARCHAR", "t_end": "VARCHAR", "outcome": "VARCHAR",
            "execution_id": "VARCHAR", "attached": "VARCHAR", "t_cancel": "VARCHAR",
            "status": "VARCHAR", "model": "VARCHAR", "replica": "VARCHAR",
            "prompt_tokens": "VARCHAR", "max_tokens": "VARCHAR"}') as j
    from rp_json_lines($path)
)
select
    $source_id, ln, line, coalesce(rp_json_line_error(line, j), rp_proxy_perr(j)), 'canonical',
    unnest(rp_proxy_typed(j))
from parsed
