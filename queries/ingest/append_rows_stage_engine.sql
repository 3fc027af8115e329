-- Append a few rows from a Python reader (relplan/ingest/stage.py's StageWriter, a batch of at
-- most SMALL_BATCH rows: a list of structs named as the table's columns) to stage_engine.
-- params: rows
insert into stage_engine by name select r.* from (select unnest($rows) as r)
