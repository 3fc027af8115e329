-- Drop the table of whole-second refinements once it has been applied and counted.
-- params:
drop table if exists _relplan_refined
