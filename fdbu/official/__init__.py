"""The official Full-Duplex-Bench evaluation, the reference column. Its leaves: `rules` re-implements the pinned
v1.0 scripts' arithmetic (quoted line by line), `timing` and `behavior` v1.5's get_timing.py and eval_behavior.py,
`child` is the process that runs the scripts needing a client, a loader or an offline hub put in place. Above them:
`evaluate` (summary.json), `summary` (summary.json read back and shown), `judge` (the interruption judge),
`runner` (the scripts themselves run unchanged and compared) and `stub_judge` (the offline judge they run against)."""

# the pinned files, by name (their SHA-256 are the default of evaluate.official_sha256); here, in a module that
# imports nothing, so the task registry (fdbu.tasks) names each task's script without importing the rules
PAUSE_SCRIPT = "eval_pause_handling.py"
TURN_SCRIPT = "eval_smooth_turn_taking.py"
INTERRUPTION_SCRIPT = "eval_user_interruption.py"
BACKCHANNEL_SCRIPT = "eval_backchannel.py"
GT_DISTRIBUTION = "icc_gt_distribution.json"
OFFICIAL_FILES = (BACKCHANNEL_SCRIPT, PAUSE_SCRIPT, TURN_SCRIPT, INTERRUPTION_SCRIPT, GT_DISTRIBUTION)

# Full-Duplex-Bench v1.5 (the same evaluation folder): the timing script and the behaviour judge with its prompt
TIMING_SCRIPT = "get_timing.py"
BEHAVIOR_SCRIPT = "eval_behavior.py"
BEHAVIOR_PROMPT = "instruction/behavior.txt"

# Full-Duplex-Bench v2 (its own folder, v2/): the judge's scores per session, and binned by 15 s
JUDGE_SCORE_SCRIPT = "scoring/score.py"
JUDGE_TIME_SCRIPT = "scoring/score_time.py"
# and its judge (Gemini), run when the user gives a key: the script, its rubrics, the tasks' staged goals, and the
# parser of its raw answers into *_processed.json
JUDGE_V2_SCRIPT = "eval/eval_single_item.py"
JUDGE_V2_PROMPTS = "eval/eval_prompts.json"
JUDGE_V2_TASKS = "prompts_staged_200.json"
JUDGE_V2_PARSE = "scoring/parse.py"
