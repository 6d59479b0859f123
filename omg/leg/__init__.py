"""One leg of a run: start or resume, the loop, one attempt, judging, workspaces, commits."""
