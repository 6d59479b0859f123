"""The graph: YAML file → frozen Graph (load, validate, advise, lint, draw); runs nothing."""
