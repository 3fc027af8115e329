-- Rowid range and count of one source's staged proxy rows (is the fast reader's order usable?).
-- params: source_id
select min(rowid), max(rowid), count(*) from stage_proxy where source_id = $source_id
