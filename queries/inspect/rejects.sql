-- The first 50 refused records, by source and line.
-- params:
select source_id, path, line, reason, raw
from rejects
order by source_id, line, reason, raw, path
limit 50
