-- Whether the workspace has the relplan_meta table (workspaces from before it have not).
-- params:
select count(*) as n from duckdb_tables() where schema_name = 'main' and table_name = 'relplan_meta'
