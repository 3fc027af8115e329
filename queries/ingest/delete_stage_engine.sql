-- Drop one source's staged engine records (before it is read again another way).
-- params: source_id
delete from stage_engine where source_id = $source_id
