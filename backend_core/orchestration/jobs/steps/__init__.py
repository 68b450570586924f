"""The steps a Job is made of, one module each (lower, numerics, memory, preflight, profile, evaluate,
repro, export): each takes the Job and what earlier steps produced, and returns its section of the JobResult."""
