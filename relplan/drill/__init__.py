"""`relplan drill URL`: a reliability drill against a live OpenAI-compatible endpoint
(docs/drill.md).

One job per module: `plan` (phases and seeded open-loop Poisson arrivals), `prompts`
(prompt and output lengths, the shared prefix), `policies` (client retry policies and the
retry budget), `client` (the async HTTP attempts; the only importer of httpx), `capacity`
(`--capacity auto`, the staged closed-loop ramp), `run` (one drill end to end), `sweep`
(pulse sizes over seeds), `writer` (the output folder and its workspace).
"""
