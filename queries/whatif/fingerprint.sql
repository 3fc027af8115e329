-- What the report's what-if cache key holds of a workspace (relplan/whatif/cache.py): every
-- source's content hash and what was stored from it (rows, rejects, time span, notes).
-- Columns: sha256, kind, format, rows, rejected, t_min, t_max, notes.
-- params:
select sha256, kind, format, rows, rejected, t_min, t_max, notes
from sources
order by sha256, kind, format
