-- The glob of one attachment as a session variable, so the views read it without its text
-- ever becoming SQL: rp_attached_engine(getvariable(name)) in workspace/attached_macros.sql.
-- params: name, glob
set variable $name = $glob
