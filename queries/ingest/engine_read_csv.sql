-- Engine records (event, step and stats) from CSV with a header row (all columns read as text;
-- `ln` is the line, the header being line 1;
-- quoted fields spanning lines would shift it).
-- Columns the file lacks are NULL: the file is unioned BY NAME with an empty typed template
-- (rp_engine_csv, ingest/engine_macros.sql).
-- Columns relplan does not know are ignored (the driver lists them). `raw` is the row as JSON,
-- kept only when $keep_raw (skip mode stores it with each reject).
-- The typed columns and the conversion errors come from rp_engine_typed / rp_engine_perr.
-- params: path, source_id, keep_raw
insert into stage_engine
select
    $source_id, _ln, case when $keep_raw then to_json(src) end, rp_engine_perr(src), 'canonical',
    unnest(rp_engine_typed(src))
from rp_engine_csv($path) as src
