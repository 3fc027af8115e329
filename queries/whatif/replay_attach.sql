-- A fresh in-memory database for one replay's workspace (relplan/whatif/replay.py
-- `replay_workspace`), attached to the process's DuckDB and made the default, so the queries'
-- unqualified tables are its own; whatif/replay_detach.sql drops it.
-- params:
attach ':memory:' as replay;
use replay
