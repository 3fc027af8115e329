-- Column names and DuckDB types of a Parquet file (to decide whether it can go direct, and
-- its columns for detection: relplan/ingest/sniff.py).
-- params: path
select column_name, column_type from (describe select * from read_parquet($path))
