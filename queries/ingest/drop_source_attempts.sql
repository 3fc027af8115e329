-- Drop the attempts of a source whose requests a finer source of the same server tells
-- (whole_second_twins.sql); the source stays listed, with 0 rows and a note.
-- params: source_id
delete from attempts where source_id = $source_id
