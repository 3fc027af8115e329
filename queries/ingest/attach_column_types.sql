-- The physical and logical type of every top-level column in every file of an attachment
-- (relplan.ingest.attach checks them against the engine trace's columns).
-- params: glob
select file_name, name, type, coalesce(logical_type, converted_type) as logical
from parquet_schema($glob)
where name <> 'schema' and num_children is null
order by file_name, name
