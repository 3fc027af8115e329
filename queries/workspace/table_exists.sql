-- One row when the workspace has a table of this name.
-- params: name
select table_name from duckdb_tables() where schema_name = 'main' and table_name = $name
