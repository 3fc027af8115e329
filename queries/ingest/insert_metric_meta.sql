-- One metric family's # TYPE / # HELP / # UNIT as declared in a source.
-- params: name, type, help, unit, source_id
insert into metric_meta values ($name, $type, $help, $unit, $source_id)
