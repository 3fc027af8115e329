-- Drop one source's staged metrics records (before it is read again another way).
-- params: source_id
delete from stage_metrics where source_id = $source_id
