-- The metrics rows to store when the checks refused none of this ingest's records: the
-- inserts then skip evaluating the reasons again.
-- params:
create or replace temp view metrics_rows as select * from stage_metrics
