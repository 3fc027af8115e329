-- Drop the staged samples of deprecated vLLM aliases named by ingest/metric_alias_counts.sql.
-- params: source_id, names
delete from stage_metrics
where source_id = $source_id and perr is null and list_contains($names, name)
