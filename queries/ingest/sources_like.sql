-- Other sources of the same kind holding the same number of rows: the only ones that can
-- hold the same records as source $source_id (ingest/source_fingerprint.sql compares them).
-- params: source_id, kind, rows
select source_id, path from sources
where kind = $kind and rows = $rows and source_id <> $source_id
order by source_id
