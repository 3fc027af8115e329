-- Envoy records carry no attempt number we can trust: number the mapped attempts of one
-- source 0, 1, 2, ... in START_TIME order (then line order) within each call.
-- params: source_id
update stage_proxy s
set attempt = n.a
from (
    select ln, row_number() over (partition by call_id order by t_sent, ln) - 1 as a
    from stage_proxy
    where source_id = $source_id and perr is null
) n
where s.source_id = $source_id and s.ln = n.ln
