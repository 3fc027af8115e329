"""`relplan simulate`: a discrete-event model of clients, a proxy and a vLLM-like engine that
writes the input formats of docs/formats.md (docs/simulate.md). Modules: clients, proxy, engine, costmodel,
simulator (event loop), metrics and writer (outputs), scenario and profiles (inputs),
workloads (synthetic and trace arrivals), calibrate, sweep, summary (the run's figures)."""
