-- The workspace schema: every table a relplan workspace holds. docs/workspace.md documents it.
-- Times are UTC epoch seconds (DOUBLE); analyses report them as seconds from t0.
-- Every data row keeps its provenance: source_id (-> sources) and source_row (1-based line
-- of a text file, or row number of a Parquet/CSV file counting the header as line 1 for CSV).
-- params:
create sequence if not exists source_ids start 1;

create table if not exists sources (
    source_id integer primary key,
    path varchar not null,            -- absolute path (or URL for a live pull)
    kind varchar not null,            -- proxy | engine | metrics | manifest | cluster
    format varchar not null,          -- jsonl | csv | parquet | openmetrics | scrape | query_range | prometheus | vllm_log | envoy | run_json | kube_events
    sha256 varchar not null unique,   -- content hash: re-ingesting the same bytes adds nothing
    rows bigint not null,             -- rows stored from it, over all tables
    rejected bigint not null default 0,
    t_min double,
    t_max double,
    unknown_columns varchar[],        -- columns present in the file that relplan ignores
    ingested_at timestamptz not null,
    notes varchar[]                   -- what the adapter dropped or assumed (added by ingest)
);
-- Workspaces created before `notes` existed get it here (additive).
alter table sources add column if not exists notes varchar[];

create table if not exists attempts (          -- docs/formats.md, Proxy attempts log (kind: proxy)
    call_id varchar not null,
    attempt integer not null,
    t_planned double not null,        -- defaults to t_sent of attempt 0 at ingest
    t_sent double not null,
    t_end double not null,
    outcome varchar not null,         -- delivered | client_gone | shed | error
    execution_id varchar,
    attached boolean not null,
    t_cancel double,
    status integer,
    model varchar,
    replica varchar,
    prompt_tokens bigint,
    max_tokens bigint,
    source_id integer not null,
    source_row bigint not null
);

create table if not exists events (            -- docs/formats.md, Engine trace, type = "event"
    t double not null,
    execution_id varchar not null,
    event varchar not null,           -- arrived | scheduled | first_token | preempted | aborted | finished | rejected
    prompt_tokens bigint,
    replica varchar,
    source_id integer not null,
    source_row bigint not null,
    -- Schema version 3 (issue 26): how a request ended (on finished / aborted events) and its
    -- max_tokens (on arrived), as the relplan vLLM plugin writes them; NULL when not given.
    finish_reason varchar,            -- stop | length | abort | error | repetition | ...
    output_tokens bigint,             -- tokens generated
    cached_tokens bigint,             -- prompt tokens served by the prefix cache
    preemptions bigint,               -- times the request was preempted
    max_tokens bigint                 -- the request's max_tokens (on arrived)
);
-- Version-2 workspaces get the columns here (additive; after the provenance columns, as in
-- the table above, so both have the same column order).
alter table events add column if not exists finish_reason varchar;
alter table events add column if not exists output_tokens bigint;
alter table events add column if not exists cached_tokens bigint;
alter table events add column if not exists preemptions bigint;
alter table events add column if not exists max_tokens bigint;

-- vLLM logs: the ids of one execution, so engine executions join to gateway records.
-- Added with issue 12; `create table if not exists` gives older workspaces the empty table.
create table if not exists request_ids (
    execution_id varchar not null,    -- as in events.execution_id (vLLM's internal id)
    external_id varchar not null,     -- vLLM's external id, the API response's id: chatcmpl-<X-Request-Id>
    client_id varchar,                -- the client's X-Request-Id inside it; NULL without a known prefix
    source_id integer not null,
    source_row bigint not null
);

create table if not exists steps (             -- docs/formats.md, Engine trace, type = "step"
    step bigint not null,
    t_issue double not null,
    t_done double not null,
    execution_id varchar not null,
    prompt_computed bigint not null,
    prompt_cached bigint not null,
    decode_tokens bigint not null,
    replica varchar,
    source_id integer not null,
    source_row bigint not null
);

create table if not exists engine_stats (      -- docs/formats.md, Engine trace, type = "stats"
    step bigint not null,
    t_issue double not null,
    num_running bigint,
    num_waiting bigint,
    num_batched_tokens bigint,
    kv_usage double,
    replica varchar,
    source_id integer not null,
    source_row bigint not null,
    -- Schema version 3 (issue 26): the step's own figures when the trace gives them (the
    -- relplan vLLM plugin, the simulator); NULL when not given.
    prompt_computed bigint,           -- prefill (prompt) tokens computed in the step
    decode_tokens bigint,             -- decode (output) tokens produced in the step
    elapsed_ms double,                -- the step's own wall time, ms
    num_preempted bigint,             -- requests preempted in the step
    prefix_queries bigint,            -- prompt tokens looked up in the prefix cache
    prefix_hits bigint                -- ... and found there
);
alter table engine_stats add column if not exists prompt_computed bigint;
alter table engine_stats add column if not exists decode_tokens bigint;
alter table engine_stats add column if not exists elapsed_ms double;
alter table engine_stats add column if not exists num_preempted bigint;
alter table engine_stats add column if not exists prefix_queries bigint;
alter table engine_stats add column if not exists prefix_hits bigint;

create table if not exists metric_samples (    -- docs/formats.md, Metrics, stored long
    t double not null,
    name varchar not null,            -- as exported, e.g. vllm:prompt_tokens_total
    labels map(varchar, varchar) not null,
    value double not null,
    source_id integer not null,
    source_row bigint not null
);

create table if not exists metric_meta (       -- # TYPE / # HELP / # UNIT lines seen
    name varchar not null,            -- metric family name
    type varchar,
    help varchar,
    unit varchar,
    source_id integer not null
);

create table if not exists manifests (         -- docs/formats.md, Run manifest (run.json)
    source_id integer not null,
    name varchar not null,
    capacity_calls_per_s double,
    deadline_s double,
    delivery_window_s double,
    overload_phase varchar,
    t0 double,
    notes varchar,
    manifest json not null            -- the whole file, for fields relplan does not model
);

create table if not exists phases (            -- run.json phases, seconds from t0
    source_id integer not null,
    name varchar not null,
    start_s double not null,
    end_s double not null
);

-- Kubernetes events (`kubectl get events -o json`), one row per event object: the API server
-- merges repeats into one object, so `count` occurrences happened between t_first and t_last.
-- Added with schema version 2 (issue 17); docs/formats.md, Kubernetes events.
create table if not exists kube_events (
    t_first double not null,          -- firstTimestamp (or eventTime), epoch s
    t_last double not null,           -- lastTimestamp (or series.lastObservedTime); = t_first for one
    count bigint not null,            -- occurrences merged into this object (>= 1)
    reason varchar not null,          -- Unhealthy | Killing | BackOff | Started | ...
    type varchar,                     -- Normal | Warning
    message varchar,
    object_kind varchar,              -- involvedObject.kind (Pod, ...)
    namespace varchar,
    object_name varchar,              -- the pod's name for kind Pod
    container varchar,                -- from involvedObject.fieldPath spec.containers{name}
    node varchar,                     -- source.host, else reportingInstance (kubelet: the node)
    component varchar,                -- source.component / reportingComponent (kubelet, ...)
    source_id integer not null,
    source_row bigint not null        -- line where the event object starts
);

create table if not exists rejects (           -- bad records kept by --on-error skip
    source_id integer not null,
    path varchar not null,
    line bigint not null,
    raw varchar not null,
    reason varchar not null
);

create table if not exists relplan_meta (      -- facts about the workspace itself
    key varchar primary key,                   -- schema_version
    value varchar not null
);
