-- The incident's name (relplan whatif): the first run manifest's name, null without one.
-- Columns: name.
-- params:
select name from manifests order by source_id limit 1
