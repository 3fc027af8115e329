-- The workspace's schema version (relplan_meta.schema_version); no row means version 1.
-- params:
select value from relplan_meta where key = 'schema_version'
