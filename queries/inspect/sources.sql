-- Every source of the workspace, oldest first.
-- params:
select source_id, path, kind, format, rows, rejected, t_min, t_max, unknown_columns, notes,
       ingested_at
from sources
order by source_id
