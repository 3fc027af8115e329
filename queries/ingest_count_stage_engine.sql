-- How many engine records one source staged.
-- params: source_id
select count(*) from stage_engine where source_id = $source_id
