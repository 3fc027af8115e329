-- Every column of the workspace's tables (the main schema of the open file, and the temp tables
-- a read-only open of an older workspace adds), in table order: checked against the columns
-- queries/schema.sql creates (relplan.workspace, check_tables). Views are not tables: their
-- columns (duckdb_columns lists them too) are left out by name within their catalog, which
-- DuckDB plans in about half the time of a join with duckdb_tables() on a fresh connection.
-- params:
select c.table_name, c.column_name, c.data_type
from duckdb_columns() as c
where ((c.database_name = current_database() and c.schema_name = 'main')
        or c.database_name = 'temp')
    and not exists (
        select 1
        from duckdb_views() as v
        where v.database_name = c.database_name
            and v.schema_name = c.schema_name
            and v.view_name = c.table_name
    )
order by c.table_name, c.column_index
