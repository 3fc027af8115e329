-- Append a few rows from a Python reader (relplan/ingest/stage.py's StageWriter, a batch of at
-- most SMALL_BATCH rows: a list of structs named as the table's columns) to stage_metrics.
-- params: rows
insert into stage_metrics by name select r.* from (select unnest($rows) as r)
