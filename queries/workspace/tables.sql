-- The tables of schema `main` (of the workspace and of `temp`; their count is the tables
-- an open finds), each with its CREATE statement as DuckDB writes it from the catalog and
-- whether it is the workspace's own (not a temp table): one statement gives an open its
-- table count, whether relplan_meta exists and, when every table of queries/schema.sql has
-- the statement a scratch database gives it, the whole column check (relplan/workspace,
-- check_tables).
-- params:
select table_name, sql, database_name = current_database() as stored
from duckdb_tables()
where schema_name = 'main'
order by table_name
