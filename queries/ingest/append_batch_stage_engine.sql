-- Append one Arrow batch of rows from a Python reader (registered as _relplan_batch by
-- relplan/ingest/stage.py's StageWriter) to stage_engine.
-- params:
insert into stage_engine select * from _relplan_batch
