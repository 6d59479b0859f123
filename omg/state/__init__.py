"""The run state: the fold of events, the run directory store and the recorder."""
