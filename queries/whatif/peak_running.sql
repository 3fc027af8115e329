-- The most requests the engine ran at once (relplan whatif's settings): the largest
-- num_running of the engine trace's stats rows, per replica, then the largest of those.
-- Columns: peak_running (null without stats rows).
-- params:
select max(num_running) as peak_running from engine_stats
