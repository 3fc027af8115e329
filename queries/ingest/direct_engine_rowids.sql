-- Rowid range and count of one source's rows staged by the typed reader
-- (ingest/engine_read_jsonl_typed.sql): are its rows in file order, one per line?
-- params: source_id
select min(rowid) as first_rowid, max(rowid) as last_rowid, count(*) as n
from stage_direct_engine
where source_id = $source_id
