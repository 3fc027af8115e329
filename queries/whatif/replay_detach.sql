-- Drops a replay's in-memory workspace (whatif/replay_attach.sql) with all it holds; the
-- process's own in-memory database, which holds nothing, is the default again.
-- params:
use memory;
detach replay
