-- Every column of the workspace's tables (the main schema of the open file, and the temp tables
-- a read-only open of an older workspace adds), in table order: checked against the columns
-- queries/schema.sql creates (relplan.workspace, check_tables). Views are not tables.
-- params:
select t.table_name, c.column_name, c.data_type
from duckdb_tables() as t
join duckdb_columns() as c on c.table_oid = t.table_oid
where (t.database_name = current_database() and t.schema_name = 'main') or t.temporary
order by t.table_name, c.column_index
