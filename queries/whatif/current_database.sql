-- The connection's own database (relplan report's what-if): its file (null in memory) and
-- whether it is open read-only, so the replay's worker may open the same file.
-- Columns: path, readonly.
-- params:
select path, readonly from duckdb_databases() where database_name = current_database()
