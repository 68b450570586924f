"""The orchestration tier, on top: Jobs and who carries them out. `jobs/` holds the spec, `execute_job`, the
steps and the one output writer; `execute/` the Executors every face submits jobs to; `compare/`, `sweep/`
and `history/` what is made of many jobs; `workers/` the job worker process the window's jobs run in."""
