"""The official Full-Duplex-Bench evaluation, the reference column: `rules` re-implements the pinned scripts'
arithmetic (quoted line by line), `scripts` runs the scripts themselves unchanged and compares, and `child` is
the process that runs the two scripts needing a client or a loader put in place."""
