-- Tables in the workspace (zero for a new one).
-- params:
select count(*) as n from duckdb_tables() where schema_name = 'main'
