"""Grader of the Triton puzzle course: runs student kernels in Triton's interpreter, on the CPU, sandboxed.

Its folders say whom each part serves:
    pipeline/   the grading pipeline, one module a stage (load, cases, sandbox and worker, compare, diagnose,
                report); `pipeline.grade` runs it
    notebook/   what a student's notebook calls: check, run, and the pictures of its report
    classroom/  grading a class: a folder of submissions into a CSV, or nbgrader's autograding
    gpu/        the optional GPU stage: bench, inspect, leaderboard
course.py reads course.yml, settings.py holds every limit and tolerance, cli.py is the `triton-course`
command, doctor.py checks the environment.
"""
