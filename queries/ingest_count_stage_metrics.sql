-- How many metrics records one source staged.
-- params: source_id
select count(*) from stage_metrics where source_id = $source_id
