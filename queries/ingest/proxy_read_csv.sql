-- Proxy attempts from CSV with a header row (all columns read as text; `ln` is the line, the
-- header being line 1;
-- quoted fields spanning lines would shift it).
-- Columns the file lacks are NULL: the file is unioned BY NAME with an empty typed template
-- (rp_proxy_csv, ingest/proxy_macros.sql).
-- Columns relplan does not know are ignored (the driver lists them). `raw` is the row as JSON,
-- kept only when $keep_raw (skip mode stores it with each reject).
-- The typed columns and the conversion errors come from rp_proxy_typed / rp_proxy_perr.
-- params: path, source_id, keep_raw
insert into stage_proxy
select
    $source_id, _ln, case when $keep_raw then to_json(src) end, rp_proxy_perr(src), 'canonical',
    unnest(rp_proxy_typed(src))
from rp_proxy_csv($path) as src
