-- The report footer's sources: every ingested file (or live pull) with its kind, format,
-- rows stored and rows rejected, in ingest order.
-- params:
select path, kind, format, rows, rejected
from sources
order by source_id
