-- Append one Arrow batch of rows from a Python reader (registered as _relplan_batch by
-- relplan/ingest/stage.py's StageWriter) to stage_metrics.
-- params:
insert into stage_metrics select * from _relplan_batch
