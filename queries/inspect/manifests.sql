-- The run manifests' modelled values.
-- params:
select source_id, name, capacity_calls_per_s, deadline_s, delivery_window_s, overload_phase, t0,
       notes
from manifests
order by source_id
