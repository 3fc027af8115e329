-- Phases of every manifest, in order.
-- params:
select source_id, name, start_s, end_s from phases order by source_id, start_s
