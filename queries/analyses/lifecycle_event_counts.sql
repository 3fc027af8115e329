-- Lifecycle events by kind over the whole workspace: which events the engine source records
-- (a vLLM log records arrivals and aborts, and finishes only with --enable-log-outputs;
-- never scheduling), so an analysis can refuse a figure the source cannot see.
-- Columns: arrived, scheduled, finished, aborted, rejected.
-- params:
select count(*) filter (where event = 'arrived') as arrived,
       count(*) filter (where event = 'scheduled') as scheduled,
       count(*) filter (where event = 'finished') as finished,
       count(*) filter (where event = 'aborted') as aborted,
       count(*) filter (where event = 'rejected') as rejected
from events
