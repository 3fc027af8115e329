-- Gateway logs whose records are each one try of a call shared across records (Envoy, a
-- call-key header): number the attempts of one source 0, 1, 2, ... within each call, in
-- t_sent order, then line, then the try's place within its record (the staged `attempt`).
-- params: source_id
update stage_proxy s
set attempt = n.a
from (
    select rowid as rid,
           row_number() over (partition by call_id order by t_sent, ln, attempt) - 1 as a
    from stage_proxy
    where source_id = $source_id and perr is null
) n
where s.rowid = n.rid
