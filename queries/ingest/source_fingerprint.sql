-- What one stored source holds, independent of how its file encoded it (JSONL, CSV, Parquet,
-- gzip, CRLF): per data table, the row count and the sum of the rows' hashes (every column
-- but source_id and source_row; a sum, so row order does not matter and repeated rows do not
-- cancel). Two sources with equal fingerprints hold the same records (relplan/ingest/
-- driver.py refuses the later one as a duplicate source).
-- params: source_id
select
    (select count(*) from attempts where source_id = $source_id) as attempts_n,
    (select sum(hash(a)::hugeint) from (
        select * exclude (source_id, source_row) from attempts where source_id = $source_id
    ) as a) as attempts_h,
    (select count(*) from events where source_id = $source_id) as events_n,
    (select sum(hash(e)::hugeint) from (
        select * exclude (source_id, source_row) from events where source_id = $source_id
    ) as e) as events_h,
    (select count(*) from steps where source_id = $source_id) as steps_n,
    (select sum(hash(s)::hugeint) from (
        select * exclude (source_id, source_row) from steps where source_id = $source_id
    ) as s) as steps_h,
    (select count(*) from engine_stats where source_id = $source_id) as stats_n,
    (select sum(hash(x)::hugeint) from (
        select * exclude (source_id, source_row) from engine_stats where source_id = $source_id
    ) as x) as stats_h,
    (select count(*) from metric_samples where source_id = $source_id) as samples_n,
    (select sum(hash(m)::hugeint) from (
        select * exclude (source_id, source_row) from metric_samples
        where source_id = $source_id
    ) as m) as samples_h
