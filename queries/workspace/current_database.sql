-- The catalog name of the workspace file, so views in the temp schema can name its tables.
-- params:
select current_database() as name
